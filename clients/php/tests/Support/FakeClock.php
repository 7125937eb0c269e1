<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

use Vigil\Clock\Clock;

/** Virtual time that moves only when a test says so. */
final class FakeClock implements Clock
{
    public function __construct(private int $now = 1_800_000_000_000)
    {
    }

    public function nowMs(): int
    {
        return $this->now;
    }

    public function set(int $ms): void
    {
        $this->now = $ms;
    }

    public function advance(int $ms): void
    {
        $this->now += $ms;
    }
}
