<?php

declare(strict_types=1);

namespace Vigil\Http;

/**
 * Sends one request and returns its answer, in the manner of PSR-18: any HTTP status is a
 * Response, and only the absence of an answer throws. Implement it to route the client's
 * traffic through your own HTTP stack (for example a PSR-18 client behind a small adapter).
 */
interface HttpClient
{
    /**
     * @param int $timeoutMs the whole attempt (connect, send, answer) must finish within this time
     *
     * @throws NetworkException when no answer arrives in time
     */
    public function sendRequest(Request $request, int $timeoutMs): Response;
}
