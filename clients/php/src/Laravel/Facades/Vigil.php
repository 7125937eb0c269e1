<?php

declare(strict_types=1);

namespace Vigil\Laravel\Facades;

use Illuminate\Support\Facades\Facade;

/**
 * @method static \Vigil\TrackResult track(array $event)
 * @method static \Vigil\BatchResult trackBatch(iterable $events)
 * @method static \Vigil\BatchResult flush()
 * @method static void poll()
 * @method static void setContext(array $fields)
 * @method static \Vigil\Stats stats()
 *
 * @see \Vigil\Vigil
 */
final class Vigil extends Facade
{
    protected static function getFacadeAccessor(): string
    {
        return \Vigil\Vigil::class;
    }
}
