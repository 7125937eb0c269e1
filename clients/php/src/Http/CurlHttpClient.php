<?php

declare(strict_types=1);

namespace Vigil\Http;

use CurlHandle;

/**
 * The default transport: ext-curl. Every attempt opens its own connection: libcurl silently
 * resends a request whose reused connection was closed before an answer, which would turn
 * one attempt into two (and a probe into a retried probe). Event requests are few per PHP
 * request, so exact attempt counts are worth more than keep-alive here.
 */
final class CurlHttpClient implements HttpClient
{
    private ?CurlHandle $handle = null;

    public function sendRequest(Request $request, int $timeoutMs): Response
    {
        $handle = $this->handle ??= curl_init();
        curl_reset($handle);
        $headers = [];
        foreach ($request->headers as $name => $value) {
            $headers[] = $name . ': ' . $value;
        }
        $received = [];
        curl_setopt_array($handle, [
            CURLOPT_URL => $request->url,
            CURLOPT_CUSTOMREQUEST => $request->method,
            CURLOPT_POSTFIELDS => $request->body,
            CURLOPT_HTTPHEADER => $headers,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT_MS => max(1, $timeoutMs),
            CURLOPT_CONNECTTIMEOUT_MS => max(1, $timeoutMs),
            CURLOPT_NOSIGNAL => true,
            CURLOPT_FRESH_CONNECT => true,
            CURLOPT_FORBID_REUSE => true,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_HEADERFUNCTION => static function ($curl, string $line) use (&$received): int {
                $colon = strpos($line, ':');
                if ($colon !== false) {
                    $received[strtolower(trim(substr($line, 0, $colon)))] = trim(substr($line, $colon + 1));
                }

                return strlen($line);
            },
        ]);
        $body = curl_exec($handle);
        if ($body === false) {
            throw new NetworkException(curl_error($handle) ?: 'no answer');
        }

        return new Response((int) curl_getinfo($handle, CURLINFO_RESPONSE_CODE), $received, (string) $body);
    }
}
