<?php

declare(strict_types=1);

namespace Vigil\State;

/** State of one process: right for workers, daemons and tests; per request under PHP-FPM. */
final class InMemoryStateStore implements StateStore
{
    private ?int $cooldownStart = null;
    private int $probedPeriod = 0;
    private bool $batchUnavailable = false;
    private ?int $pausedUntil = null;

    public function cooldownStart(): ?int
    {
        return $this->cooldownStart;
    }

    public function startCooldown(int $nowMs): bool
    {
        if ($this->cooldownStart !== null) {
            return false;
        }
        $this->cooldownStart = $nowMs;
        $this->probedPeriod = 0;

        return true;
    }

    public function claimProbe(int $cooldownStart, int $period): bool
    {
        if ($this->cooldownStart !== $cooldownStart || $period <= $this->probedPeriod) {
            return false;
        }
        $this->probedPeriod = $period;

        return true;
    }

    public function endCooldown(int $cooldownStart): void
    {
        if ($this->cooldownStart === $cooldownStart) {
            $this->cooldownStart = null;
        }
    }

    public function pausedUntil(): ?int
    {
        return $this->pausedUntil;
    }

    public function extendPause(int $untilMs): void
    {
        $this->pausedUntil = max($this->pausedUntil ?? $untilMs, $untilMs);
    }

    public function endPause(): void
    {
        $this->pausedUntil = null;
    }

    public function batchUnavailable(): bool
    {
        return $this->batchUnavailable;
    }

    public function markBatchUnavailable(): void
    {
        $this->batchUnavailable = true;
    }
}
