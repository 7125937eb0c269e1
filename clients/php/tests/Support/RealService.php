<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

use RuntimeException;

/** The real Vigil service on a free port (clients/conformance/real-service.mjs), with an account per plan asked. */
final class RealService
{
    private readonly NodeProcess $process;
    public readonly string $base;

    /** @param list<string> $plans a plan named twice gets a second account labelled e.g. free-2 */
    public function __construct(array $plans)
    {
        $args = [];
        foreach ($plans as $plan) {
            array_push($args, '--plan', $plan);
        }
        $this->process = new NodeProcess('clients/conformance/real-service.mjs', $args, 120);
        $this->base = $this->process->ready['base'];
    }

    /** @return array{secret: string, publishable: string} */
    public function account(string $label): array
    {
        return $this->process->ready['accounts'][$label] ?? throw new RuntimeException("no account $label");
    }

    /** A read request with the account's secret key; the decoded JSON answer. */
    public function get(string $label, string $pathAndQuery): array
    {
        $curl = curl_init($this->base . $pathAndQuery);
        curl_setopt_array($curl, [
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 10,
            CURLOPT_HTTPHEADER => ['Authorization: Bearer ' . $this->account($label)['secret']],
        ]);
        $answer = curl_exec($curl);

        $decoded = is_string($answer) ? json_decode($answer, true) : null;

        return is_array($decoded) ? $decoded : throw new RuntimeException("GET $pathAndQuery failed");
    }

    public function stop(): void
    {
        $this->process->stop();
    }
}
