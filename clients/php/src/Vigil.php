<?php

declare(strict_types=1);

namespace Vigil;

use Closure;
use Psr\Log\LoggerInterface;
use Throwable;
use Vigil\Clock\Clock;
use Vigil\Clock\SystemClock;
use Vigil\Exception\DeliveryException;
use Vigil\Exception\VigilException;
use Vigil\Http\CurlHttpClient;
use Vigil\Http\HttpClient;
use Vigil\Http\NetworkException;
use Vigil\Http\Request;
use Vigil\Http\Response;
use Vigil\Pacing\Pacer;
use Vigil\State\FileStateStore;
use Vigil\State\InMemoryStateStore;
use Vigil\State\SharedPacing;
use Vigil\State\StateStore;
use WeakReference;

/**
 * Sends security events to Vigil: one at a time, in batches (falling back to single events
 * when the plan has no batch endpoint), or through a buffer flushed by count, by time, on
 * flush() and at the end of the PHP request. No answer, body or network failure makes a
 * method throw into the caller (unless the client is built with `throwOnError: true`):
 * a security signal must never break the request that produced it.
 *
 * Every request is paced by the key's rate-limit policies (RateLimit-Policy of the latest
 * answer; the smallest plan before any): one that would exceed a window waits, at most
 * `maxPacingDelayMs`, or is not sent and its events are counted `pacedDropped`, so the client
 * itself never causes a 429. A StateStore that implements SharedPacing (the file store) paces
 * the processes that share it together.
 *
 * On the first 429 the client stays silent for one hour, except for one probe per 5-minute
 * period: the first event produced in that period, sent alone. A probe answered with
 * anything but 429 ends the cooldown at once. Events produced during the cooldown are
 * dropped and counted, never queued. The cooldown lives in the StateStore, so processes
 * that share one (a file, the Laravel cache) share the silence.
 *
 * A 503 with Retry-After (the service is overloaded) pauses every request for that long, at
 * most a minute: a request waits for the end of the pause when it fits its timeout, else its
 * events are given up (counted failed); buffered mode keeps its buffer and sends it after the
 * pause. The pause lives in the StateStore too.
 */
final class Vigil
{
    /** After the first 429 nothing but probes is sent for this long. */
    public const COOLDOWN_MS = 3_600_000;
    /** During a cooldown at most one probe is sent per period of this length, counted from its start. */
    public const PROBE_PERIOD_MS = 300_000;
    /** The longest pause an overload answer (503 with Retry-After) imposes, whatever it asks. */
    public const MAX_OVERLOAD_PAUSE_MS = 60_000;
    public const VERSION = '0.1.0';

    private readonly string $baseUrl;
    /** @var array<string, string> */
    private readonly array $headers;
    private readonly HttpClient $http;
    private readonly StateStore $state;
    private readonly Clock $clock;
    /** @var Closure(int): void */
    private readonly Closure $sleep;
    /** @var Closure(): float */
    private readonly Closure $random;

    /** @var list<array<string, mixed>> */
    private array $buffer = [];
    private ?int $flushDueAt = null;
    /** @var array<string, mixed> */
    private array $context = [];
    private Pacer $pacer;
    /** @var (Closure(VigilException): void)|null */
    private readonly ?Closure $onError;
    private bool $closed = false;
    /** @var array<string, int> */
    private array $counts = [
        'sent' => 0,
        'paced' => 0,
        'paced_dropped' => 0,
        'accepted' => 0,
        'rejected' => 0,
        'failed' => 0,
        'rate_limited' => 0,
        'dropped' => 0,
        'retries' => 0,
        'probes' => 0,
    ];

    /**
     * @param string $apiKey secret key (vgl_sk_...) for server-side use
     * @param string $baseUrl the service's address, without /v1
     * @param int $timeoutMs per attempt, connection included
     * @param int $maxRetries retries after the first attempt for 5xx, network errors and timeouts
     * @param int $batchSize events per batch request: the plan's batch size (Starter 50, Pro and Business 100)
     * @param int $bufferSize buffered mode: flush when this many events wait
     * @param int $flushIntervalMs buffered mode: flush this long after the first event entered an empty buffer
     * @param int $retryBaseMs backoff before retry n: a random value between half and all of retryBaseMs × 2^n
     * @param bool $throwOnError throw DeliveryException when an event is rejected, given up or rate limited
     *        (direct mode)
     * @param int $maxPacingDelayMs longest wait for room in the rate-limit policies; beyond it the event is
     *        dropped (0: never wait)
     * @param (callable(VigilException): void)|null $onError called for every event not delivered (drops
     *        excepted: a cooldown drops thousands) and every error caught on its way to the caller; what it
     *        throws is ignored
     * @param bool $flushOnShutdown buffered mode: flush what is left when PHP shuts down
     * @param (Closure(int): void)|null $sleep waits between retries (milliseconds)
     * @param (Closure(): float)|null $random a number in [0, 1) for the backoff jitter
     */
    public function __construct(
        string $apiKey,
        string $baseUrl = 'http://localhost:8080',
        private readonly int $timeoutMs = 2000,
        private readonly int $maxRetries = 2,
        private readonly int $batchSize = 100,
        private readonly DeliveryMode $mode = DeliveryMode::Direct,
        private readonly int $bufferSize = 100,
        private readonly int $flushIntervalMs = 5000,
        private readonly int $retryBaseMs = 200,
        private readonly bool $throwOnError = false,
        bool $flushOnShutdown = true,
        ?HttpClient $http = null,
        ?StateStore $state = null,
        ?Clock $clock = null,
        ?Closure $sleep = null,
        ?Closure $random = null,
        private readonly ?LoggerInterface $logger = null,
        private readonly int $maxPacingDelayMs = 1000,
        ?callable $onError = null,
    ) {
        $this->onError = $onError === null ? null : Closure::fromCallable($onError);
        $this->pacer = Pacer::fresh();
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->headers = [
            'Authorization' => 'Bearer ' . $apiKey,
            'Content-Type' => 'application/json',
            'Accept' => 'application/json',
            'User-Agent' => 'vigil-php/' . self::VERSION,
        ];
        $this->http = $http ?? new CurlHttpClient();
        // On the CLI (workers, daemons, tests) one process lives on; behind a web server each
        // request is a new client, so the cooldown and the pacing live in a file shared by them.
        $this->state = $state ?? (PHP_SAPI === 'cli' ? new InMemoryStateStore() : FileStateStore::forApiKey($apiKey));
        $this->clock = $clock ?? new SystemClock();
        $this->sleep = $sleep ?? static function (int $ms): void {
            usleep($ms * 1000);
        };
        $this->random = $random ?? static fn (): float => mt_rand() / (mt_getrandmax() + 1);
        if ($this->mode === DeliveryMode::Buffered && $flushOnShutdown) {
            $client = WeakReference::create($this);
            register_shutdown_function(static function () use ($client): void {
                $client->get()?->flush();
            });
        }
    }

    /**
     * Sends one event and returns what the service said, with its risk decision (direct
     * mode), or buffers it (buffered mode). An event without `event_id` gets one.
     *
     * @param array<string, mixed> $event at least `event`, the event type (e.g. auth.login.failure)
     *
     * @throws DeliveryException only with `throwOnError: true`
     */
    public function track(array $event): TrackResult
    {
        $eventId = is_string($event['event_id'] ?? null) ? $event['event_id'] : '';
        try {
            $event = $this->prepare($event);
            $eventId = $event['event_id'];
            $this->poll();
            $gate = $this->gate();
            if ($gate === Gate::Drop) {
                $this->counts['dropped']++;

                return new TrackResult(Outcome::Dropped, null, null, $eventId);
            }
            if ($gate === Gate::Send && $this->buffering()) {
                if ($this->enqueue([$event]) === 0) {
                    return new TrackResult(Outcome::Buffered, null, null, $eventId);
                }
                $result = new TrackResult(Outcome::Failed, null, null, $eventId);
                $this->report(new DeliveryException($result));
            } else {
                $result = $this->deliverOne($event, $gate === Gate::Probe);
                if ($this->buffering()) {
                    return new TrackResult(Outcome::Buffered, null, null, $eventId);
                }
            }
        } catch (Throwable $e) {
            $this->counts['rejected']++;
            $this->logFailure('track an event', $e);
            $result = new TrackResult(Outcome::Rejected, null, null, $eventId);
            $this->report(new DeliveryException($result, $e));
        }
        $undelivered = [Outcome::Rejected, Outcome::Failed, Outcome::RateLimited];
        if ($this->throwOnError && in_array($result->outcome, $undelivered, true)) {
            throw new DeliveryException($result);
        }

        return $result;
    }

    /**
     * Sends events in chunks of `batchSize` (or buffers them) and counts what happened to them.
     *
     * @param iterable<array<string, mixed>> $events
     */
    public function trackBatch(iterable $events): BatchResult
    {
        $count = 0;
        try {
            $list = [];
            foreach ($events as $event) {
                $count++;
                $list[] = $this->prepare($event);
            }
            if ($list === []) {
                return new BatchResult();
            }
            $this->poll();
            $gate = $this->gate();
            if ($gate === Gate::Send && $this->buffering()) {
                $failed = $this->enqueue($list);
                if ($failed > 0) {
                    $this->report(new DeliveryException(
                        new TrackResult(Outcome::Failed, null, null, (string) $list[0]['event_id']),
                        null,
                        $failed,
                    ));
                }

                return new BatchResult(failed: $failed, buffered: count($list) - $failed);
            }
            if ($gate === Gate::Send) {
                return $this->sendEvents($list);
            }
            $dropped = $gate === Gate::Probe ? count($list) - 1 : count($list);
            $this->counts['dropped'] += $dropped;
            $counts = [Outcome::Dropped->value => $dropped];
            if ($gate === Gate::Probe) {
                $probe = $this->deliverOne($list[0], true);
                $outcome = $this->buffering() ? Outcome::Buffered : $probe->outcome;
                $counts[$outcome->value] = ($counts[$outcome->value] ?? 0) + 1;
            }

            return BatchResult::fromCounts($counts);
        } catch (Throwable $e) {
            $this->counts['rejected'] += $count;
            $this->logFailure('track a batch', $e);

            return new BatchResult(rejected: $count);
        }
    }

    /** Sends what the buffer holds (buffered mode) and counts what happened to it. */
    public function flush(): BatchResult
    {
        try {
            $events = $this->takeBuffer();

            return $events === [] ? new BatchResult() : $this->sendEvents($events);
        } catch (Throwable $e) {
            $this->logFailure('flush', $e);

            return new BatchResult();
        }
    }

    /**
     * Sends what the buffer holds, giving up on what is left after $timeoutMs (counted dropped),
     * and ends buffering: later events are sent at once. True when everything was delivered
     * or given up in time.
     */
    public function close(int $timeoutMs = 10_000): bool
    {
        $this->closed = true;
        $deadline = $this->clock->nowMs() + max(0, $timeoutMs);
        try {
            $events = $this->takeBuffer();

            return $events === [] || $this->sendEvents($events, $deadline)->dropped === 0;
        } catch (Throwable $e) {
            $this->logFailure('close', $e);

            return false;
        }
    }

    /**
     * Flushes the buffer when its flush interval has elapsed. PHP has no timers: track() and
     * trackBatch() call it, and a long-running worker calls it from its loop.
     */
    public function poll(): void
    {
        if ($this->flushDueAt !== null && $this->clock->nowMs() >= $this->flushDueAt) {
            $this->flushWhenUnpaused();
        }
    }

    /** A flush by count or by time: at once, or at the end of an overload pause longer than the timeout. */
    private function flushWhenUnpaused(): void
    {
        $left = $this->pauseLeft();
        if ($left <= $this->timeoutMs) {
            $this->flush();

            return;
        }
        $this->flushDueAt = $this->clock->nowMs() + $left;
    }

    /** Milliseconds left of the overload pause shared through the StateStore (0 when there is none). */
    private function pauseLeft(): int
    {
        $until = $this->state->pausedUntil();

        return $until === null ? 0 : max(0, $until - $this->clock->nowMs());
    }

    /**
     * The pause (ms) an overload answer asks for: a 503 whose Retry-After is a whole number of
     * seconds, or without that field a JSON body whose retry_after is one. Null for every other
     * answer, a 503 without either included (an ordinary 5xx).
     */
    private static function overloadPauseMs(Response $response): ?int
    {
        if ($response->status !== 503) {
            return null;
        }
        $seconds = null;
        $header = $response->headers['retry-after'] ?? null;
        if ($header !== null) {
            if (preg_match('/^\s*\d+\s*$/', $header) === 1) {
                $seconds = (int) trim($header);
            }
        } else {
            $body = json_decode($response->body, true);
            $value = is_array($body) ? ($body['retry_after'] ?? null) : null;
            if (is_int($value) && $value >= 0) {
                $seconds = $value;
            }
        }

        return $seconds === null ? null : min($seconds, intdiv(self::MAX_OVERLOAD_PAUSE_MS, 1000)) * 1000;
    }

    /** When the buffer is due to be flushed (client clock, ms), or null when it is empty. */
    public function flushDueAt(): ?int
    {
        return $this->flushDueAt;
    }

    /**
     * Fields added to every event that does not set them itself, such as the ip, user_agent
     * and request of the HTTP request being served. Replaces the previous context.
     *
     * @param array<string, mixed> $fields
     */
    public function setContext(array $fields): void
    {
        $this->context = $fields;
    }

    public function stats(): Stats
    {
        return new Stats(
            $this->counts['sent'],
            $this->counts['paced'],
            $this->counts['paced_dropped'],
            $this->counts['accepted'],
            $this->counts['rejected'],
            $this->counts['failed'],
            $this->counts['rate_limited'],
            $this->counts['dropped'],
            $this->counts['retries'],
            $this->counts['probes'],
            $this->cooldownStart() !== null,
        );
    }

    /**
     * @param array<string, mixed> $event
     *
     * @return array<string, mixed>&array{event_id: string}
     */
    private function prepare(array $event): array
    {
        $event += $this->context;
        if (!is_string($event['event_id'] ?? null) || $event['event_id'] === '') {
            $event['event_id'] = EventId::generate($this->clock->nowMs());
        }

        return $event;
    }

    /** Start of the running cooldown, or null; a cooldown an hour old ends here. */
    private function cooldownStart(): ?int
    {
        $start = $this->state->cooldownStart();
        if ($start !== null && $this->clock->nowMs() - $start >= self::COOLDOWN_MS) {
            $this->state->endCooldown($start);
            $this->logger?->info('Vigil: the 429 cooldown is over, delivery resumes');

            return null;
        }

        return $start;
    }

    /** Whether an event produced now is sent, sent as this period's probe, or dropped. */
    private function gate(): Gate
    {
        $start = $this->cooldownStart();
        if ($start === null) {
            return Gate::Send;
        }
        $period = intdiv($this->clock->nowMs() - $start, self::PROBE_PERIOD_MS);

        return $period > 0 && $this->state->claimProbe($start, $period) ? Gate::Probe : Gate::Drop;
    }

    private function enterCooldown(): void
    {
        if ($this->cooldownStart() !== null || !$this->state->startCooldown($this->clock->nowMs())) {
            return;
        }
        $this->counts['dropped'] += count($this->takeBuffer());
        $this->logger?->warning(
            'Vigil: answered 429, events are dropped for one hour except one probe every 5 minutes',
        );
    }

    /**
     * Buffers events; returns how many were given up (counted failed) because an overload pause
     * holds a full buffer.
     *
     * @param list<array<string, mixed>> $events
     */
    private function enqueue(array $events): int
    {
        $givenUp = 0;
        foreach ($events as $i => $event) {
            // A flush inside this loop may have met a 429: what was still to be buffered is dropped.
            if ($this->cooldownStart() !== null) {
                $this->counts['dropped'] += count($events) - $i;
                break;
            }
            // A full buffer is only kept while an overload pause holds its flush: it grows no further.
            if (count($this->buffer) >= $this->bufferSize) {
                $givenUp++;
                continue;
            }
            if ($this->buffer === []) {
                $this->flushDueAt = $this->clock->nowMs() + $this->flushIntervalMs;
            }
            $this->buffer[] = $event;
            if (count($this->buffer) >= $this->bufferSize) {
                $this->flushWhenUnpaused();
            }
        }
        $this->counts['failed'] += $givenUp;

        return $givenUp;
    }

    /** @return list<array<string, mixed>> */
    private function takeBuffer(): array
    {
        $events = $this->buffer;
        $this->buffer = [];
        $this->flushDueAt = null;

        return $events;
    }

    /**
     * @param list<array<string, mixed>> $events
     * @param int|null $deadline client clock (ms) after which what is left is dropped (close())
     */
    private function sendEvents(array $events, ?int $deadline = null): BatchResult
    {
        $counts = [];
        $total = count($events);
        // Events before this index went out in a batch request: already counted sent.
        $counted = 0;
        for ($i = 0; $i < $total;) {
            if ($this->cooldownStart() !== null || ($deadline !== null && $this->clock->nowMs() > $deadline)) {
                $this->counts['dropped'] += $total - $i;
                $counts['dropped'] = ($counts['dropped'] ?? 0) + $total - $i;
                break;
            }
            if ($this->state->batchUnavailable()) {
                $outcome = $this->deliverOne($events[$i], false, $i >= $counted)->outcome->value;
                $counts[$outcome] = ($counts[$outcome] ?? 0) + 1;
                $i++;
                continue;
            }
            $chunk = array_slice($events, $i, max(1, $this->batchSize));
            [$outcome, $status] = $this->post('/v1/events/batch', ['events' => $chunk], count($chunk), null, true);
            // The plan has no batch endpoint (Free): the same events go one by one, now and from now on.
            if ($status === 403) {
                $this->state->markBatchUnavailable();
                $counted = $i + count($chunk);
                continue;
            }
            $this->counts[$outcome->value] += count($chunk);
            $counts[$outcome->value] = ($counts[$outcome->value] ?? 0) + count($chunk);
            if (in_array($outcome, [Outcome::Rejected, Outcome::Failed, Outcome::RateLimited], true)) {
                $this->report(new DeliveryException(
                    new TrackResult($outcome, $status, null, (string) $chunk[0]['event_id']),
                    null,
                    count($chunk),
                ));
            }
            $i += count($chunk);
        }

        return BatchResult::fromCounts($counts);
    }

    /** @param array<string, mixed>&array{event_id: string} $event */
    private function deliverOne(array $event, bool $probe, bool $countSent = true): TrackResult
    {
        $probeOf = $probe ? $this->state->cooldownStart() : null;
        [$outcome, $status, $body] = $this->post('/v1/events', $event, 1, $probeOf, $countSent);
        $this->counts[$outcome->value]++;
        $risk = $outcome === Outcome::Accepted ? RiskDecision::fromResponseBody($body) : null;
        $result = new TrackResult($outcome, $status, $risk, $event['event_id']);
        if ($outcome === Outcome::Rejected || $outcome === Outcome::Failed) {
            $this->logger?->warning('Vigil: event {event_id} {outcome} (status {status})', [
                'event_id' => $event['event_id'],
                'outcome' => $outcome->value,
                'status' => $status ?? 'none',
            ]);
        }
        if ($outcome === Outcome::Rejected || $outcome === Outcome::Failed || $outcome === Outcome::RateLimited) {
            $this->report(new DeliveryException($result));
        }

        return $result;
    }

    /**
     * One request with its retries, each attempt paced. A probe ($probeOf: the start of its
     * cooldown) is a single attempt whose answer decides the cooldown. $countSent is false for
     * events already counted sent (the single-event fallback of a batch the service has seen).
     *
     * @return array{0: Outcome, 1: ?int, 2: string} outcome, last status, body
     */
    private function post(string $path, mixed $payload, int $events, ?int $probeOf, bool $countSent = true): array
    {
        $body = json_encode(
            $payload,
            JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE,
        );
        $request = new Request('POST', $this->baseUrl . $path, $this->headers, $body);
        $status = null;
        for ($attempt = 0; true; $attempt++) {
            // During an overload pause an attempt waits for its end only when that fits its timeout.
            $paused = $this->pauseLeft();
            if ($paused > $this->timeoutMs) {
                return [Outcome::Failed, $status, ''];
            }
            if ($paused > 0) {
                ($this->sleep)($paused);
            } elseif ($attempt > 0) {
                ($this->sleep)((int) round($this->retryBaseMs * 2 ** ($attempt - 1) * (0.5 + ($this->random)() / 2)));
            }
            // Another process may have met a 429 meanwhile: a cooldown stops the retries too.
            if ($attempt > 0 && $this->cooldownStart() !== null) {
                return [Outcome::Dropped, $status, ''];
            }
            $takenAt = $this->clock->nowMs();
            $wait = $this->reserve($events, $takenAt);
            if ($wait === null) {
                if ($attempt > 0) {
                    return [Outcome::Failed, $status, ''];
                }
                // Room would come later than allowed: dropped here rather than sent into a 429.
                $this->counts['paced_dropped'] += $events;

                return [Outcome::Dropped, null, ''];
            }
            if ($attempt > 0) {
                $this->counts['retries']++;
            } else {
                $this->counts['paced'] += $wait > 0 ? $events : 0;
                $this->counts['probes'] += $probeOf !== null ? 1 : 0;
                $this->counts['sent'] += $countSent ? $events : 0;
            }
            if ($wait > 0) {
                ($this->sleep)($wait);
            }
            $status = null;
            try {
                $response = $this->http->sendRequest($request, $this->timeoutMs);
                $status = $response->status;
                $this->learn($response->headers['ratelimit-policy'] ?? null);
                $pause = self::overloadPauseMs($response);
                // Any answer but an overload answer means the service takes requests again.
                if ($pause !== null) {
                    $this->state->extendPause($this->clock->nowMs() + $pause);
                } elseif ($this->state->pausedUntil() !== null) {
                    $this->state->endPause();
                }
                if ($status === 429) {
                    $this->enterCooldown();

                    return [Outcome::RateLimited, $status, $response->body];
                }
                if ($probeOf !== null) {
                    $this->state->endCooldown($probeOf);
                    $this->logger?->info('Vigil: a probe was answered {status}, delivery resumes', [
                        'status' => $status,
                    ]);
                }
                if ($status < 300) {
                    return [Outcome::Accepted, $status, $response->body];
                }
                if ($status < 500) {
                    return [Outcome::Rejected, $status, $response->body];
                }
            } catch (NetworkException) {
                // No answer: retried like a 5xx.
            } finally {
                $this->settle($events, $takenAt + $wait);
            }
            if ($probeOf !== null || $attempt >= $this->maxRetries) {
                return [Outcome::Failed, $status, ''];
            }
        }
    }

    /** Pacing wait (ms) of a request of $events events, its units taken at $now; null when too long. */
    private function reserve(int $events, int $now): ?int
    {
        if ($this->state instanceof SharedPacing) {
            return $this->state->updatePacing(function (array $saved) use ($events, $now): array {
                $pacer = Pacer::fromArray($saved);
                $wait = $pacer->reserve($events, $now, $this->maxPacingDelayMs);

                return [$pacer->toArray(), $wait];
            });
        }

        return $this->pacer->reserve($events, $now, $this->maxPacingDelayMs);
    }

    /** The request whose units were taken at $takenAt has been answered (or given up): they are held from now. */
    private function settle(int $events, int $takenAt): void
    {
        $now = $this->clock->nowMs();
        if ($this->state instanceof SharedPacing) {
            $this->state->updatePacing(static function (array $saved) use ($events, $takenAt, $now): array {
                $pacer = Pacer::fromArray($saved);
                $pacer->settle($events, $takenAt, $now);

                return [$pacer->toArray(), null];
            });

            return;
        }
        $this->pacer->settle($events, $takenAt, $now);
    }

    private function learn(?string $policy): void
    {
        if ($policy === null) {
            return;
        }
        if ($this->state instanceof SharedPacing) {
            $this->state->updatePacing(static function (array $saved) use ($policy): array {
                $pacer = Pacer::fromArray($saved);
                $pacer->learn($policy);

                return [$pacer->toArray(), null];
            });

            return;
        }
        $this->pacer->learn($policy);
    }

    private function buffering(): bool
    {
        return $this->mode === DeliveryMode::Buffered && !$this->closed;
    }

    /** Hands an error to onError; what the hook throws is ignored, delivery goes on. */
    private function report(VigilException $error): void
    {
        if ($this->onError === null) {
            return;
        }
        try {
            ($this->onError)($error);
        } catch (Throwable) {
            // The application's hook must not break delivery.
        }
    }

    /** A bug or an unexpected value caught on its way to the caller: logged, never thrown. */
    private function logFailure(string $what, Throwable $e): void
    {
        $this->logger?->error("Vigil: could not $what: {message}", ['message' => $e->getMessage(), 'exception' => $e]);
    }
}
