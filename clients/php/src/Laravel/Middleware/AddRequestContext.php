<?php

declare(strict_types=1);

namespace Vigil\Laravel\Middleware;

use Closure;
use Illuminate\Http\Request;
use Vigil\Vigil;

/**
 * Adds the end user's ip, user agent and the request (method, path) to every event tracked
 * while the request is handled, unless the event sets them itself. Register it globally or
 * on the routes you track from (alias `vigil.context`).
 */
final class AddRequestContext
{
    public function __construct(private readonly Vigil $vigil)
    {
    }

    public function handle(Request $request, Closure $next): mixed
    {
        $this->vigil->setContext(array_filter([
            'ip' => $request->ip(),
            'user_agent' => $request->userAgent(),
            'request' => ['method' => $request->getMethod(), 'path' => '/' . ltrim($request->path(), '/')],
        ], static fn ($value): bool => $value !== null && $value !== ''));

        return $next($request);
    }

    /** Long-lived workers (Octane, queue) serve many requests: the next one starts clean. */
    public function terminate(Request $request, mixed $response): void
    {
        $this->vigil->setContext([]);
    }
}
