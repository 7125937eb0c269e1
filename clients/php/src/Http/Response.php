<?php

declare(strict_types=1);

namespace Vigil\Http;

/** One HTTP answer: every status is a response, whatever it says. */
final class Response
{
    /** @param array<string, string> $headers lowercased names */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }
}
