<?php

declare(strict_types=1);

namespace Vigil;

/** Counters since the client was created. */
final class Stats
{
    use OutcomeCounts;

    public function __construct(
        /** Events that went out in at least one request (each event once, whatever its retries). */
        public readonly int $sent,
        /** Events whose request waited for room in the key's rate-limit policies, then went. */
        public readonly int $paced,
        /** Events not sent because room would come later than maxPacingDelayMs (also in dropped). */
        public readonly int $pacedDropped,
        /** Events answered 2xx. */
        public readonly int $accepted,
        /** Events answered a non-retryable 4xx. */
        public readonly int $rejected,
        /** Events given up after the retries, and probes without an answer. */
        public readonly int $failed,
        /** Events in requests answered 429. */
        public readonly int $rateLimited,
        /** Events not sent: a cooldown, pacing, or close() running out of time. */
        public readonly int $dropped,
        /** Retry requests sent (first attempts not counted). */
        public readonly int $retries,
        /** Probe requests sent during cooldowns. */
        public readonly int $probes,
        /** Whether the client is in a 429 cooldown now, on its clock. */
        public readonly bool $inCooldown,
    ) {
    }

    /** @return array<string, int|bool> */
    public function toArray(): array
    {
        return [
            ...$this->outcomeCounts(),
            'sent' => $this->sent,
            'paced' => $this->paced,
            'paced_dropped' => $this->pacedDropped,
            'retries' => $this->retries,
            'probes' => $this->probes,
            'in_cooldown' => $this->inCooldown,
        ];
    }
}
