<?php

declare(strict_types=1);

namespace Vigil\State;

/**
 * Where the client keeps what must outlive one PHP request: the running 429 cooldown, the
 * probes already sent in it, the end of an overload pause (503 with Retry-After), and whether
 * the plan has a batch endpoint. Under PHP-FPM every
 * request starts with fresh objects, so a store shared by the workers (a file, the Laravel
 * cache) is what keeps a whole site silent for the hour after a 429. Implementations make
 * startCooldown() and claimProbe() atomic across the processes that share them.
 */
interface StateStore
{
    /** Start of the running cooldown (client clock, ms), or null. Expiry is the client's decision. */
    public function cooldownStart(): ?int;

    /** Starts a cooldown at $nowMs unless one is running; true when this call started it. */
    public function startCooldown(int $nowMs): bool;

    /** Claims the probe of 5-minute $period of the cooldown started at $cooldownStart: true for one caller only. */
    public function claimProbe(int $cooldownStart, int $period): bool;

    /** Ends the cooldown started at $cooldownStart (a later cooldown is left alone). */
    public function endCooldown(int $cooldownStart): void;

    /** End of the overload pause (client clock, ms), or null. Expiry is the client's decision. */
    public function pausedUntil(): ?int;

    /** Makes the overload pause last until $untilMs, unless it already lasts longer. */
    public function extendPause(int $untilMs): void;

    /** Ends the overload pause: the service answered something else. */
    public function endPause(): void;

    /** Whether the batch endpoint answered 403 (a plan without batches). */
    public function batchUnavailable(): bool;

    public function markBatchUnavailable(): void;
}
