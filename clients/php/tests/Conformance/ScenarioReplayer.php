<?php

declare(strict_types=1);

namespace Vigil\Tests\Conformance;

use RuntimeException;
use stdClass;
use Vigil\DeliveryMode;
use Vigil\Tests\Support\FakeClock;
use Vigil\Tests\Support\ScriptedServer;
use Vigil\Vigil;

/**
 * Replays one conformance scenario (clients/conformance/scenarios) against Vigil and
 * the scripted server, as the kit's README describes. The PHP client has no timers:
 * `advance` moves the fake clock to each due buffer flush in turn and calls poll() there,
 * then to the target time. The client is synchronous, so it is idle after every step.
 * A mismatch throws a RuntimeException that names the step and what differed.
 */
final class ScenarioReplayer
{
    public const DEFAULT_API_KEY = 'vgl_pk_conformance0123456789abcdef';

    /** @var array<string, string> scenario option => constructor argument */
    private const OPTIONS = [
        'api_key' => 'apiKey',
        'timeout_ms' => 'timeoutMs',
        'max_retries' => 'maxRetries',
        'batch_size' => 'batchSize',
        'mode' => 'mode',
        'buffer_size' => 'bufferSize',
        'flush_interval_ms' => 'flushIntervalMs',
        'max_pacing_delay_ms' => 'maxPacingDelayMs',
    ];

    /** @var array<string, string> */
    private array $ids = [];

    public function __construct(private readonly ScriptedServer $server)
    {
    }

    public function replay(stdClass $scenario): void
    {
        $this->ids = [];
        $clock = new FakeClock();
        $client = new Vigil(...$this->clientArguments($scenario->client, $clock));
        $last = null;
        $this->server->reset();
        foreach ($scenario->steps as $index => $step) {
            $where = sprintf('%s step %d (%s)', $scenario->name, $index + 1, $step->op);
            switch ($step->op) {
                case 'script':
                    $this->server->script($step->responses);
                    break;
                case 'track':
                    $last = $client->track(self::toArray($step->event))->toArray();
                    break;
                case 'track_batch':
                    $last = $client->trackBatch(array_map([self::class, 'toArray'], $step->events))->toArray();
                    break;
                case 'advance':
                    $target = $clock->nowMs() + $step->ms;
                    while (($due = $client->flushDueAt()) !== null && $due <= $target) {
                        $clock->set(max($due, $clock->nowMs()));
                        $client->poll();
                    }
                    $clock->set($target);
                    $client->poll();
                    break;
                case 'flush':
                    $client->flush();
                    break;
                case 'expect_requests':
                    $requests = $this->server->requests();
                    if (count($requests) !== count($step->requests)) {
                        $seen = array_map(static fn (stdClass $r): string => "$r->method $r->path", $requests);
                        throw new RuntimeException(sprintf(
                            '%s: expected %d requests, got %d (%s)',
                            $where,
                            count($step->requests),
                            count($requests),
                            implode(', ', $seen) ?: 'none',
                        ));
                    }
                    foreach ($step->requests as $i => $expected) {
                        $this->assertMatches($expected, $requests[$i], "$where: request " . ($i + 1));
                    }
                    break;
                case 'expect_result':
                    $this->assertMatches($step->result, self::toObject($last), "$where: result");
                    break;
                case 'expect_stats':
                    $this->assertMatches($step->stats, self::toObject($client->stats()->toArray()), "$where: stats");
                    break;
                default:
                    throw new RuntimeException("$where: unknown op");
            }
        }
    }

    /** @return array<string, mixed> */
    private function clientArguments(stdClass $options, FakeClock $clock): array
    {
        $arguments = [
            'apiKey' => self::DEFAULT_API_KEY,
            'baseUrl' => $this->server->url,
            'clock' => $clock,
            'sleep' => static function (int $ms): void {
            },
            'flushOnShutdown' => false,
        ];
        foreach (get_object_vars($options) as $key => $value) {
            $name = self::OPTIONS[$key] ?? throw new RuntimeException("unknown client option $key");
            $arguments[$name] = $key === 'mode' ? DeliveryMode::from($value) : $value;
        }

        return $arguments;
    }

    /** Recursive comparison with `<any>` and `<id:NAME>`, as the kit's README defines it. */
    private function assertMatches(mixed $expected, mixed $actual, string $where): void
    {
        if ($expected === '<any>') {
            if ($actual === null) {
                throw new RuntimeException("$where: missing");
            }

            return;
        }
        if (is_string($expected) && str_starts_with($expected, '<id:') && str_ends_with($expected, '>')) {
            $name = substr($expected, 4, -1);
            if (!is_string($actual) || $actual === '') {
                throw new RuntimeException("$where: expected an id, got " . json_encode($actual));
            }
            if (isset($this->ids[$name])) {
                if ($this->ids[$name] !== $actual) {
                    $bound = $this->ids[$name];
                    throw new RuntimeException("$where: expected the id bound to $name ($bound), got $actual");
                }

                return;
            }
            $other = array_search($actual, $this->ids, true);
            if ($other !== false) {
                throw new RuntimeException("$where: id $actual is bound to $other, expected a new one for $name");
            }
            $this->ids[$name] = $actual;

            return;
        }
        if (is_array($expected)) {
            if (!is_array($actual) || count($actual) !== count($expected)) {
                $got = is_array($actual) ? count($actual) : json_encode($actual);
                throw new RuntimeException(sprintf('%s: expected %d items, got %s', $where, count($expected), $got));
            }
            foreach ($expected as $i => $item) {
                $this->assertMatches($item, $actual[$i], "{$where}[$i]");
            }

            return;
        }
        if ($expected instanceof stdClass) {
            if (!$actual instanceof stdClass) {
                throw new RuntimeException("$where: expected an object, got " . json_encode($actual));
            }
            $lowercase = str_ends_with($where, '.headers');
            foreach (get_object_vars($expected) as $key => $value) {
                $key = $lowercase ? strtolower((string) $key) : (string) $key;
                $this->assertMatches($value, $actual->{$key} ?? null, "$where.$key");
            }

            return;
        }
        $same = is_numeric($expected) && is_numeric($actual) && !is_string($expected) && !is_string($actual)
            ? $expected == $actual
            : $expected === $actual;
        if (!$same) {
            throw new RuntimeException("$where: expected " . json_encode($expected) . ', got ' . json_encode($actual));
        }
    }

    /** @return array<string, mixed> */
    private static function toArray(stdClass $value): array
    {
        return json_decode(json_encode($value, JSON_THROW_ON_ERROR), true, 512, JSON_THROW_ON_ERROR);
    }

    private static function toObject(mixed $value): mixed
    {
        return json_decode(json_encode($value, JSON_THROW_ON_ERROR), false, 512, JSON_THROW_ON_ERROR);
    }
}
