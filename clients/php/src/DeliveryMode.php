<?php

declare(strict_types=1);

namespace Vigil;

enum DeliveryMode: string
{
    /** Every call sends at once and its result says what the service answered. */
    case Direct = 'direct';
    /** Calls fill a buffer that is sent in batches by count, by time, on flush() and at shutdown. */
    case Buffered = 'buffered';
}
