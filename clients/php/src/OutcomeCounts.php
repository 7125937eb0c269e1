<?php

declare(strict_types=1);

namespace Vigil;

/** The counts of the outcomes that BatchResult and Stats both carry, keyed by Outcome value. */
trait OutcomeCounts
{
    /** @return array<string, int> */
    private function outcomeCounts(): array
    {
        return [
            Outcome::Accepted->value => $this->accepted,
            Outcome::Rejected->value => $this->rejected,
            Outcome::Failed->value => $this->failed,
            Outcome::RateLimited->value => $this->rateLimited,
            Outcome::Dropped->value => $this->dropped,
        ];
    }
}
