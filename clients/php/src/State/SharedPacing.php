<?php

declare(strict_types=1);

namespace Vigil\State;

/**
 * A StateStore that also keeps the pacer's state (the key's policies and the units its requests
 * took), so that the PHP processes sharing it pace together: under PHP-FPM every request is a new
 * client, and only a shared pacer knows what the requests before it sent.
 */
interface SharedPacing
{
    /**
     * Runs $change on the stored pacer state atomically for the processes sharing the store, and
     * stores what it returns.
     *
     * @template T
     *
     * @param callable(array<string, mixed>): array{0: array<string, mixed>, 1: T} $change
     *
     * @return T
     */
    public function updatePacing(callable $change): mixed;
}
