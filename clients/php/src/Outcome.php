<?php

declare(strict_types=1);

namespace Vigil;

/** What happened to an event handed to the client. */
enum Outcome: string
{
    /** The service answered 2xx. */
    case Accepted = 'accepted';
    /** The service answered a 4xx that retrying cannot fix (400, 401, 403, 413, 415). */
    case Rejected = 'rejected';
    /** Given up: 5xx or no answer after the retries, or a probe without an answer. */
    case Failed = 'failed';
    /** The request carrying the event was answered 429. */
    case RateLimited = 'rate_limited';
    /** Not sent because the client is in its 429 cooldown; never sent later. */
    case Dropped = 'dropped';
    /** Buffered mode: taken for delivery with the next flush. */
    case Buffered = 'buffered';
}
