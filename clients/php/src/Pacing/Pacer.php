<?php

declare(strict_types=1);

namespace Vigil\Pacing;

/**
 * Paces requests by the key's rate-limit policies, as the service names them in
 * `RateLimit-Policy: "second";q=5;w=1, "minute";q=30;w=60`, so that none is sent into a
 * certain 429. Each policy is a bucket of `q` units; a unit taken at time s (client clock, ms)
 * is held until s + 1100 × w + 100 ms (the service's sliding windows keep a unit at most
 * 1.1 × w; 100 ms cover the network's jitter). A request costs one unit of `"second"` (the
 * service counts requests there) and one per event of every other policy (`"minute"` counts
 * events), at most `q`. Before an answer names the policies the smallest plan is assumed.
 * These are the conformance kit's pacing rules, so every client of the family decides alike.
 *
 * The state is a plain array so that a StateStore shared by PHP-FPM workers can keep it.
 */
final class Pacer
{
    /** The smallest plan (Free), assumed until the service names the key's policies. */
    public const ASSUMED = ['second' => ['q' => 5, 'w' => 1], 'minute' => ['q' => 30, 'w' => 60]];

    /**
     * @param array<string, array{q: int, w: int}> $policies
     * @param array<string, list<int>> $held times of the units taken, oldest first, by policy
     */
    private function __construct(private array $policies, private array $held, public bool $learned)
    {
    }

    public static function fresh(): self
    {
        return new self(self::ASSUMED, [], false);
    }

    /** @param array<string, mixed> $state what toArray() returned, possibly from another process */
    public static function fromArray(array $state): self
    {
        $policies = [];
        foreach (is_array($state['policies'] ?? null) ? $state['policies'] : [] as $name => $p) {
            if (is_string($name) && is_array($p) && is_int($p['q'] ?? null) && is_int($p['w'] ?? null)) {
                $policies[$name] = ['q' => $p['q'], 'w' => $p['w']];
            }
        }
        $held = [];
        foreach (is_array($state['held'] ?? null) ? $state['held'] : [] as $name => $units) {
            if (is_string($name) && is_array($units)) {
                $held[$name] = array_values(array_filter($units, 'is_int'));
            }
        }

        return $policies === [] ? self::fresh() : new self($policies, $held, (bool) ($state['learned'] ?? false));
    }

    /** @return array{policies: array<string, array{q: int, w: int}>, held: array<string, list<int>>, learned: bool} */
    public function toArray(): array
    {
        return ['policies' => $this->policies, 'held' => $this->held, 'learned' => $this->learned];
    }

    /**
     * Reserves room for a request of $events events: the ms to wait before sending it, or null
     * when that would be longer than $maxDelayMs (nothing is taken then).
     */
    public function reserve(int $events, int $nowMs, int $maxDelayMs): ?int
    {
        $at = $nowMs;
        foreach ($this->policies as $name => $policy) {
            $units = $this->release($name, $policy['w'], $nowMs);
            $cost = self::cost($name, $policy['q'], $events);
            $n = count($units);
            if ($n + $cost > $policy['q']) {
                $at = max($at, $units[$n - $policy['q'] + $cost - 1] + self::holdMs($policy['w']));
            }
        }
        if ($at - $nowMs > $maxDelayMs) {
            return null;
        }
        foreach ($this->policies as $name => $policy) {
            $units = $this->held[$name] ?? [];
            $i = count($units);
            while ($i > 0 && $units[$i - 1] > $at) {
                $i--;
            }
            array_splice($units, $i, 0, array_fill(0, self::cost($name, $policy['q'], $events), $at));
            $this->held[$name] = $units;
        }

        return $at - $nowMs;
    }

    /**
     * The answer to a request that took its units at $takenAtMs arrived at $answeredAtMs: its
     * units are held from then on. The service counted the request when it arrived, after it was
     * handed over and before it was answered, so a hold that starts at the answer never ends early.
     */
    public function settle(int $events, int $takenAtMs, int $answeredAtMs): void
    {
        if ($answeredAtMs <= $takenAtMs) {
            return;
        }
        foreach ($this->policies as $name => $policy) {
            $units = $this->held[$name] ?? [];
            $cost = self::cost($name, $policy['q'], $events);
            for ($i = count($units) - 1; $i >= 0 && $cost > 0; $i--) {
                if ($units[$i] === $takenAtMs) {
                    array_splice($units, $i, 1);
                    $cost--;
                    $j = count($units);
                    while ($j > 0 && $units[$j - 1] > $answeredAtMs) {
                        $j--;
                    }
                    array_splice($units, $j, 0, [$answeredAtMs]);
                }
            }
            $this->held[$name] = $units;
        }
    }

    /** Takes the policies of an answer's RateLimit-Policy field, if it names any valid one. */
    public function learn(?string $header): void
    {
        $policies = [];
        foreach (self::items($header ?? '') as [$name, $params]) {
            $q = $params['q'] ?? 0;
            $w = $params['w'] ?? 0;
            if ($q >= 1 && $w >= 1) {
                $policies[$name] = ['q' => $q, 'w' => $w];
            }
        }
        if ($policies !== []) {
            $this->policies = $policies;
            $this->held = array_intersect_key($this->held, $policies);
            $this->learned = true;
        }
    }

    /**
     * The members of a structured-field list: each name and its integer parameters.
     *
     * @return list<array{0: string, 1: array<string, int>}>
     */
    public static function items(string $field): array
    {
        $items = [];
        foreach (explode(',', substr($field, 0, 4096)) as $member) {
            $parts = array_map('trim', explode(';', $member));
            $name = trim($parts[0], '"');
            if ($name === '') {
                continue;
            }
            $params = [];
            foreach (array_slice($parts, 1) as $part) {
                [$key, $value] = array_map('trim', explode('=', $part, 2)) + [1 => ''];
                if (preg_match('/^[0-9]{1,15}$/', $value) === 1) {
                    $params[$key] = (int) $value;
                }
            }
            $items[] = [$name, $params];
        }

        return $items;
    }

    private static function holdMs(int $windowS): int
    {
        return $windowS * 1100 + 100;
    }

    private static function cost(string $name, int $quota, int $events): int
    {
        return min($name === 'second' ? 1 : max(1, $events), $quota);
    }

    /** @return list<int> the policy's units still held at $nowMs */
    private function release(string $name, int $windowS, int $nowMs): array
    {
        $units = $this->held[$name] ?? [];
        $released = 0;
        while ($released < count($units) && $units[$released] + self::holdMs($windowS) <= $nowMs) {
            $released++;
        }

        return $this->held[$name] = array_slice($units, $released);
    }
}
