<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

use RuntimeException;
use stdClass;

/** The conformance kit's scripted HTTP server (clients/conformance/server.mjs) and its control routes. */
final class ScriptedServer
{
    private readonly NodeProcess $process;
    public readonly string $url;

    public function __construct()
    {
        $this->process = new NodeProcess('clients/conformance/server.mjs');
        $this->url = 'http://127.0.0.1:' . $this->process->ready['port'];
    }

    /** Empties the script and the record of requests. */
    public function reset(): void
    {
        $this->control('POST', '/__reset', new stdClass());
    }

    /** Appends answers to play, in order: each {status?, headers?, body?, delay_ms?, reset_connection?}. */
    public function script(array $responses): void
    {
        $this->control('POST', '/__script', ['responses' => $responses]);
    }

    /**
     * The requests received since the previous call: method, path, headers (lowercased), body.
     *
     * @return list<stdClass>
     */
    public function requests(): array
    {
        return $this->control('GET', '/__requests')->requests;
    }

    public function stop(): void
    {
        $this->process->stop();
    }

    private function control(string $method, string $path, mixed $body = null): stdClass
    {
        $curl = curl_init($this->url . $path);
        curl_setopt_array($curl, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 10,
            CURLOPT_HTTPHEADER => ['Content-Type: application/json'],
        ]);
        if ($body !== null) {
            curl_setopt($curl, CURLOPT_POSTFIELDS, json_encode($body, JSON_THROW_ON_ERROR));
        }
        $answer = curl_exec($curl);
        if (!is_string($answer)) {
            throw new RuntimeException("scripted server: $method $path failed: " . curl_error($curl));
        }

        return json_decode($answer, false, 512, JSON_THROW_ON_ERROR);
    }
}
