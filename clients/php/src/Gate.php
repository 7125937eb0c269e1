<?php

declare(strict_types=1);

namespace Vigil;

/**
 * What the cooldown lets an event produced now do.
 *
 * @internal
 */
enum Gate
{
    case Send;
    case Probe;
    case Drop;
}
