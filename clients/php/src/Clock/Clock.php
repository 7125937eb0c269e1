<?php

declare(strict_types=1);

namespace Vigil\Clock;

/** The time the cooldown and the buffer's flush interval are measured on. Tests inject their own. */
interface Clock
{
    /** Milliseconds since the Unix epoch. */
    public function nowMs(): int;
}
