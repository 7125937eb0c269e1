<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Vigil\Pacing\Pacer;
use Vigil\State\FileStateStore;

/** The pacing rules of the conformance kit, and a pacer shared through the file state store. */
final class PacerTest extends TestCase
{
    public function testTheSmallestPlanIsAssumedBeforeAnyAnswer(): void
    {
        $pacer = Pacer::fresh();
        $waits = array_map(static fn (): ?int => $pacer->reserve(1, 0, 1000), range(1, 6));

        // Five requests a second; the sixth waits for the first unit's release (1.1 s + 100 ms): too long.
        $this->assertSame([0, 0, 0, 0, 0, null], $waits);
        $this->assertFalse($pacer->learned);
        $slow = Pacer::fresh();
        $slowWaits = array_map(static fn (): ?int => $slow->reserve(1, 0, 2000), range(1, 7));
        $this->assertSame([0, 0, 0, 0, 0, 1200, 1200], $slowWaits);
    }

    public function testTheMinutePolicyCountsEventsAndTheSecondPolicyRequests(): void
    {
        $pacer = Pacer::fresh();
        $pacer->learn('"second";q=5;w=1, "minute";q=30;w=60');
        $this->assertTrue($pacer->learned);
        $this->assertSame(0, $pacer->reserve(25, 0, 1000));
        $this->assertSame(0, $pacer->reserve(5, 0, 1000));
        $this->assertNull($pacer->reserve(1, 0, 1000));
        $this->assertNull($pacer->reserve(1, 65_099, 1000));
        $this->assertSame(0, $pacer->reserve(1, 66_100, 1000));
    }

    public function testAnAnswerWithoutValidPoliciesChangesNothing(): void
    {
        $pacer = Pacer::fresh();
        $pacer->learn('"second";q=2;w=1');
        $pacer->learn(null);
        $pacer->learn('"second";w=1, minute');
        $this->assertSame([0, 0, null], array_map(static fn (): ?int => $pacer->reserve(1, 0, 0), range(1, 3)));
    }

    public function testProcessesSharingTheFileStorePaceTogether(): void
    {
        $path = tempnam(sys_get_temp_dir(), 'vigil-pacing-');
        $take = static function (FileStateStore $store): ?int {
            return $store->updatePacing(static function (array $saved): array {
                $pacer = Pacer::fromArray($saved);
                $wait = $pacer->reserve(1, 1_000, 0);

                return [$pacer->toArray(), $wait];
            });
        };
        try {
            // Two store objects on one file stand for two PHP-FPM requests.
            $waits = [];
            for ($i = 0; $i < 6; $i++) {
                $waits[] = $take(new FileStateStore($path));
            }
        } finally {
            unlink($path);
        }

        $this->assertSame([0, 0, 0, 0, 0, null], $waits);
    }
}
