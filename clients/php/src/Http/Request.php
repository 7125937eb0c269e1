<?php

declare(strict_types=1);

namespace Vigil\Http;

/** One HTTP request as the client builds it. */
final class Request
{
    /** @param array<string, string> $headers */
    public function __construct(
        public readonly string $method,
        public readonly string $url,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }
}
