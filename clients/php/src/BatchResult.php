<?php

declare(strict_types=1);

namespace Vigil;

/** How many events of one trackBatch() call (or one flush) ended in each outcome. */
final class BatchResult
{
    use OutcomeCounts;

    public function __construct(
        public readonly int $accepted = 0,
        public readonly int $rejected = 0,
        public readonly int $failed = 0,
        public readonly int $rateLimited = 0,
        public readonly int $dropped = 0,
        public readonly int $buffered = 0,
    ) {
    }

    /** @param array<string, int> $counts keyed by Outcome value */
    public static function fromCounts(array $counts): self
    {
        return new self(
            $counts[Outcome::Accepted->value] ?? 0,
            $counts[Outcome::Rejected->value] ?? 0,
            $counts[Outcome::Failed->value] ?? 0,
            $counts[Outcome::RateLimited->value] ?? 0,
            $counts[Outcome::Dropped->value] ?? 0,
            $counts[Outcome::Buffered->value] ?? 0,
        );
    }

    public function total(): int
    {
        return array_sum($this->toArray());
    }

    /** @return array<string, int> */
    public function toArray(): array
    {
        return [...$this->outcomeCounts(), Outcome::Buffered->value => $this->buffered];
    }
}
