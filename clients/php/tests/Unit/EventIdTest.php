<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Vigil\EventId;

final class EventIdTest extends TestCase
{
    public function testIsAVersion7UuidCarryingTheClockMilliseconds(): void
    {
        $id = EventId::generate(1_800_000_000_123);

        $uuidV7 = '/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/';
        $this->assertMatchesRegularExpression($uuidV7, $id);
        $this->assertSame(1_800_000_000_123, hexdec(str_replace('-', '', substr($id, 0, 13))));
    }

    public function testEveryIdIsNewAndIdsSortByTime(): void
    {
        $ids = [];
        for ($i = 0; $i < 1000; $i++) {
            $ids[] = EventId::generate(1_800_000_000_000 + $i);
        }

        $this->assertCount(1000, array_unique($ids));
        $sorted = $ids;
        sort($sorted);
        $this->assertSame($ids, $sorted);
    }

    public function testFitsTheServicesEventIdRule(): void
    {
        $this->assertMatchesRegularExpression('/^[A-Za-z0-9_.:-]{1,64}$/', EventId::generate(0));
    }
}
