<?php

declare(strict_types=1);

namespace Vigil\Exception;

use Throwable;

/**
 * Implemented by every exception this package throws or hands to `onError`, so that
 * `catch (VigilException $e)` catches them all.
 */
interface VigilException extends Throwable
{
}
