<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Vigil\DeliveryMode;
use Vigil\Exception\DeliveryException;
use Vigil\Exception\VigilException;
use Vigil\Http\NetworkException;
use Vigil\Outcome;
use Vigil\State\FileStateStore;
use Vigil\Tests\Support\FakeClock;
use Vigil\Tests\Support\NodeProcess;
use Vigil\Tests\Support\RecordingLogger;
use Vigil\Tests\Support\SharesScriptedServer;
use Vigil\Vigil;

/** What the conformance scenarios do not cover, through real HTTP against the scripted server. */
final class VigilTest extends TestCase
{
    use SharesScriptedServer;

    private const RATE_LIMITED = [
        'status' => 429,
        'body' => ['error' => 'RATE_LIMITED', 'message' => 'retry in 60 seconds', 'retry_after' => 60],
    ];

    private FakeClock $clock;

    protected function setUp(): void
    {
        self::$server->reset();
        $this->clock = new FakeClock();
    }

    /** @param array<string, mixed> $options */
    private function client(array $options = []): Vigil
    {
        return new Vigil(...$options + [
            'apiKey' => 'vgl_sk_test',
            'baseUrl' => self::$server->url . '/',
            'clock' => $this->clock,
            'sleep' => static function (int $ms): void {
            },
            'flushOnShutdown' => false,
        ]);
    }

    public function testSendsJsonWithTheKeyAsBearerTokenAndAUserAgent(): void
    {
        $this->client()->track(['event' => 'auth.login.failure', 'metadata' => ['path' => '/a/b', 'name' => 'Zoë']]);

        [$request] = self::$server->requests();
        $this->assertSame('/v1/events', $request->path, 'the trailing slash of the base URL is dropped');
        $this->assertSame('Bearer vgl_sk_test', $request->headers->authorization);
        $this->assertSame('application/json', $request->headers->{'content-type'});
        $this->assertSame('vigil-php/' . Vigil::VERSION, $request->headers->{'user-agent'});
        $this->assertSame(['path' => '/a/b', 'name' => 'Zoë'], (array) $request->body->metadata);
    }

    public function testRetriesWaitAJitteredExponentialBackoff(): void
    {
        $waits = [];
        $random = [0.0, 0.999];
        $client = $this->client([
            'maxRetries' => 3,
            'retryBaseMs' => 100,
            'sleep' => static function (int $ms) use (&$waits): void {
                $waits[] = $ms;
            },
            'random' => static function () use (&$random): float {
                return array_shift($random) ?? 0.5;
            },
        ]);
        self::$server->script([['status' => 500], ['status' => 502], ['status' => 503], ['status' => 504]]);

        $result = $client->track(['event' => 'auth.login.failure']);

        $this->assertSame(Outcome::Failed, $result->outcome);
        $this->assertSame(504, $result->status);
        // Half the base at the lowest draw, the whole base at the highest, doubling per attempt.
        $this->assertSame([50, 200, 300], $waits);
        $this->assertCount(4, self::$server->requests());
    }

    public function testAnUnreachableServiceGivesAFailedResultNotAnException(): void
    {
        $port = stream_socket_server('tcp://127.0.0.1:0');
        $address = stream_socket_get_name($port, false);
        fclose($port);
        $client = $this->client(['baseUrl' => "http://$address", 'maxRetries' => 1]);

        $result = $client->track(['event' => 'auth.login.failure']);
        $batch = $client->trackBatch([['event' => 'auth.login.failure'], ['event' => 'auth.logout']]);

        $this->assertSame(Outcome::Failed, $result->outcome);
        $this->assertNull($result->status);
        $this->assertSame(2, $batch->failed);
        $this->assertSame(3, $client->stats()->failed);
        $this->assertSame(2, $client->stats()->retries);
    }

    public function testThrowOnErrorRaisesForUndeliveredEventsButNotForDrops(): void
    {
        $client = $this->client(['throwOnError' => true, 'maxRetries' => 0]);
        self::$server->script([
            ['status' => 400, 'body' => ['error' => 'INVALID_EVENT', 'message' => 'bad type', 'request_id' => 'r']],
        ]);

        try {
            $client->track(['event' => 'Not Valid']);
            $this->fail('a rejected event raises when asked to');
        } catch (VigilException $e) {
            $this->assertInstanceOf(DeliveryException::class, $e);
            $this->assertSame(Outcome::Rejected, $e->result->outcome);
            $this->assertSame(400, $e->result->status);
        }

        self::$server->script([self::RATE_LIMITED]);
        try {
            $client->track(['event' => 'auth.login.failure']);
            $this->fail('a 429 raises when asked to');
        } catch (DeliveryException $e) {
            $this->assertSame(Outcome::RateLimited, $e->result->outcome);
        }
        $this->assertSame(Outcome::Dropped, $client->track(['event' => 'auth.login.failure'])->outcome);
    }

    public function testOnErrorHearsOfUndeliveredEventsNeverOfDropsAndCannotBreakDelivery(): void
    {
        $errors = [];
        $client = $this->client(['maxRetries' => 0, 'onError' => static function (VigilException $e) use (&$errors) {
            $errors[] = $e;
            throw new \RuntimeException('the hook fails');
        }]);
        self::$server->script([['status' => 400], ['status' => 500], self::RATE_LIMITED]);

        for ($i = 0; $i < 100; $i++) {
            $client->track(['event' => 'auth.login.success']);
        }

        $outcomes = array_map(static fn (DeliveryException $e): Outcome => $e->result->outcome, $errors);
        $this->assertSame([Outcome::Rejected, Outcome::Failed, Outcome::RateLimited], $outcomes);
        $this->assertSame(97, $client->stats()->dropped);
    }

    public function testNetworkExceptionsShareTheMarkerInterface(): void
    {
        $this->assertInstanceOf(VigilException::class, new NetworkException('no answer'));
    }

    public function testContextFillsFieldsTheEventLeavesOut(): void
    {
        $client = $this->client();
        $client->setContext([
            'ip' => '203.0.113.9',
            'user_agent' => 'curl/8',
            'request' => ['method' => 'POST', 'path' => '/login'],
        ]);

        $client->track(['event' => 'auth.login.failure', 'ip' => '198.51.100.1']);
        $client->setContext([]);
        $client->track(['event' => 'auth.logout']);

        [$first, $second] = self::$server->requests();
        $this->assertSame('198.51.100.1', $first->body->ip, 'the event wins over the context');
        $this->assertSame('curl/8', $first->body->user_agent);
        $this->assertSame('/login', $first->body->request->path);
        $this->assertFalse(property_exists($second->body, 'ip'), 'a cleared context adds nothing');
    }

    public function testWorkersSharingAStateFileShareTheCooldown(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'vigil-state-test-');
        $worker1 = $this->client(['state' => new FileStateStore($file)]);
        $worker2 = $this->client(['state' => new FileStateStore($file)]);
        self::$server->script([self::RATE_LIMITED]);

        $worker1->track(['event' => 'auth.login.failure']);
        $dropped = $worker2->track(['event' => 'auth.login.failure']);
        $this->clock->advance(Vigil::PROBE_PERIOD_MS);
        $probe = $worker2->track(['event' => 'auth.login.failure', 'actor_id' => 'probe']);
        $afterProbe = $worker1->track(['event' => 'auth.login.failure', 'actor_id' => 'after']);
        @unlink($file);

        $this->assertSame(Outcome::Dropped, $dropped->outcome);
        $this->assertTrue($probe->accepted());
        $this->assertFalse($worker1->stats()->inCooldown, 'the probe of worker 2 ended the cooldown of both');
        $this->assertTrue($afterProbe->accepted());
        $paths = array_map(static fn ($r) => $r->body->actor_id ?? null, self::$server->requests());
        $this->assertSame([null, 'probe', 'after'], $paths);
    }

    public function testWorkersSharingAStateFileShareTheOverloadPause(): void
    {
        $file = tempnam(sys_get_temp_dir(), 'vigil-state-test-');
        $waits = [];
        $sleep = static function (int $ms) use (&$waits): void {
            $waits[] = $ms;
        };
        $worker1 = $this->client(['state' => new FileStateStore($file), 'sleep' => $sleep]);
        $worker2 = $this->client(['state' => new FileStateStore($file), 'sleep' => $sleep]);
        self::$server->script([[
            'status' => 503,
            'headers' => ['Retry-After' => '30'],
            'body' => ['error' => 'OVERLOADED', 'message' => 'retry in 30 seconds', 'retry_after' => 30],
        ]]);

        $overloaded = $worker1->track(['event' => 'auth.login.failure', 'actor_id' => 'first']);
        $paused = $worker2->track(['event' => 'auth.login.failure', 'actor_id' => 'paused']);
        $this->clock->advance(28_000);
        $atTheEnd = $worker2->track(['event' => 'auth.login.failure', 'actor_id' => 'end']);
        @unlink($file);

        $this->assertSame([Outcome::Failed, 503], [$overloaded->outcome, $overloaded->status]);
        $this->assertSame([Outcome::Failed, null], [$paused->outcome, $paused->status], 'the pause holds worker 2');
        $this->assertTrue($atTheEnd->accepted());
        $this->assertSame([2000], $waits, 'the last 2 s of the pause fit the timeout: waited, not failed');
        $this->assertSame([1, 1], [$worker1->stats()->failed, $worker2->stats()->failed]);
        $ids = array_map(static fn ($r) => $r->body->actor_id ?? null, self::$server->requests());
        $this->assertSame(['first', 'end'], $ids);
    }

    public function testPollFlushesABufferWhoseIntervalElapsed(): void
    {
        $client = $this->client(['mode' => DeliveryMode::Buffered, 'flushIntervalMs' => 1000]);
        $client->track(['event' => 'auth.login.failure']);
        $this->assertSame($this->clock->nowMs() + 1000, $client->flushDueAt());

        $this->clock->advance(999);
        $client->poll();
        $this->assertSame([], self::$server->requests());

        $this->clock->advance(1);
        $client->poll();
        $this->assertCount(1, self::$server->requests());
        $this->assertNull($client->flushDueAt());
    }

    public function testEventsBufferedBehindABatchAnswered429AreDroppedNotSent(): void
    {
        $client = $this->client(['mode' => DeliveryMode::Buffered, 'bufferSize' => 3]);
        self::$server->script([self::RATE_LIMITED]);

        $client->trackBatch(array_fill(0, 5, ['event' => 'auth.login.failure']));
        $this->clock->advance(10_000);
        $client->poll();
        $client->flush();

        $this->assertCount(1, self::$server->requests(), 'the first 3 events went out and met the 429');
        $this->assertSame(['rate_limited' => 3, 'dropped' => 2], array_intersect_key(
            $client->stats()->toArray(),
            ['rate_limited' => 0, 'dropped' => 0],
        ));
    }

    public function testTrackBatchTakesAnyIterable(): void
    {
        $events = (static function () {
            yield ['event' => 'data.exported'];
            yield ['event' => 'data.downloaded'];
        })();

        $result = $this->client()->trackBatch($events);

        $this->assertSame(2, $result->accepted);
        $this->assertCount(2, self::$server->requests()[0]->body->events);
    }

    public function testLogsTheCooldownAndGivenUpEventsToAPsr3Logger(): void
    {
        $logger = new RecordingLogger();
        $client = $this->client(['logger' => $logger, 'maxRetries' => 0]);
        self::$server->script([['status' => 500], self::RATE_LIMITED]);

        $client->track(['event' => 'auth.login.failure']);
        $client->track(['event' => 'auth.login.failure']);
        $this->clock->advance(Vigil::COOLDOWN_MS);
        $client->track(['event' => 'auth.login.failure']);

        $this->assertSame([
            'Vigil: event {event_id} {outcome} (status {status})',
            'Vigil: answered 429, events are dropped for one hour except one probe every 5 minutes',
        ], $logger->messages('warning'));
        $this->assertContains('Vigil: the 429 cooldown is over, delivery resumes', $logger->messages('info'));
    }

    public function testABufferedClientFlushesWhenPhpShutsDown(): void
    {
        $code = sprintf(
            'require %s; $c = new Vigil\Vigil("vgl_sk_test", %s, mode: Vigil\DeliveryMode::Buffered);'
            . ' $c->track(["event" => "auth.login.failure"]); $c->track(["event" => "auth.logout"]);',
            var_export(realpath(__DIR__ . '/../bootstrap.php'), true),
            var_export(self::$server->url, true),
        );
        $process = proc_open([PHP_BINARY, '-r', $code], [], $pipes, NodeProcess::repositoryRoot());
        $this->assertSame(0, proc_close($process));

        $requests = self::$server->requests();
        $this->assertCount(1, $requests);
        $this->assertSame('/v1/events/batch', $requests[0]->path);
        $types = array_map(static fn ($e) => $e->event, $requests[0]->body->events);
        $this->assertSame(['auth.login.failure', 'auth.logout'], $types);
    }
}
