<?php

declare(strict_types=1);

namespace Vigil\Exception;

use RuntimeException;
use Vigil\TrackResult;

/**
 * Thrown only by a client created with `throwOnFailure: true`, when an event is rejected or
 * given up. By default the client never throws: results and stats are values.
 */
final class DeliveryException extends RuntimeException
{
    public function __construct(public readonly TrackResult $result)
    {
        parent::__construct(sprintf(
            'Vigil event %s was %s (HTTP status %s)',
            $result->eventId,
            $result->outcome->value,
            $result->status === null ? 'none' : (string) $result->status,
        ));
    }
}
