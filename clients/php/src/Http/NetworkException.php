<?php

declare(strict_types=1);

namespace Vigil\Http;

use RuntimeException;
use Vigil\Exception\VigilException;

/** No answer came back: connection refused or reset, DNS failure, or the timeout elapsed. */
final class NetworkException extends RuntimeException implements VigilException
{
}
