<?php

declare(strict_types=1);

namespace Vigil\Exception;

use RuntimeException;
use Throwable;
use Vigil\TrackResult;

/**
 * An event (or a chunk of $events events of a batch, $result then naming the first) was not
 * delivered: rejected, given up or rate limited. Handed to `onError`, and thrown by `track()`
 * only with `throwOnError: true`. By default the client never throws: results and stats are values.
 */
final class DeliveryException extends RuntimeException implements VigilException
{
    public function __construct(
        public readonly TrackResult $result,
        ?Throwable $previous = null,
        public readonly int $events = 1,
    ) {
        parent::__construct(sprintf(
            'Vigil %s %s was %s (HTTP status %s)',
            $events === 1 ? 'event' : "batch of $events events starting with",
            $result->eventId,
            $result->outcome->value,
            $result->status === null ? 'none' : (string) $result->status,
        ), 0, $previous);
    }
}
