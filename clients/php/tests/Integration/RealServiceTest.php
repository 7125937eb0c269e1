<?php

declare(strict_types=1);

namespace Vigil\Tests\Integration;

use Illuminate\Contracts\Http\Kernel;
use Illuminate\Http\Request;
use PHPUnit\Framework\TestCase;
use Vigil\Laravel\Facades\Vigil as VigilFacade;
use Vigil\Outcome;
use Vigil\Tests\Laravel\LaravelApplication;
use Vigil\Tests\Support\FakeClock;
use Vigil\Tests\Support\RealService;
use Vigil\Vigil;

/** The client against the real service, started on a free port with a Free, a second Free and a Pro account. */
final class RealServiceTest extends TestCase
{
    private static RealService $service;

    public static function setUpBeforeClass(): void
    {
        self::$service = new RealService(['free', 'free', 'pro']);
    }

    public static function tearDownAfterClass(): void
    {
        self::$service->stop();
    }

    /** @param array<string, mixed> $options */
    private function client(string $account, array $options = []): Vigil
    {
        $options += ['flushOnShutdown' => false];

        return new Vigil(self::$service->account($account)['secret'], self::$service->base, ...$options);
    }

    private function actor(): string
    {
        return 'php-' . bin2hex(random_bytes(6));
    }

    /** @return list<array<string, mixed>> the stored events of an actor */
    private function stored(string $account, string $actor): array
    {
        return self::$service->get($account, '/v1/events?limit=200&actor_id=' . urlencode($actor))['data'];
    }

    public function testASingleEventIsAcceptedWithItsRiskDecision(): void
    {
        $actor = $this->actor();
        $client = $this->client('pro');

        $result = $client->track(['event' => 'auth.login.failure', 'actor_id' => $actor, 'ip' => '203.0.113.7']);
        // The same event again under its event_id (a retry): stored once, answered again.
        $again = $client->track([
            'event' => 'auth.login.failure',
            'actor_id' => $actor,
            'ip' => '203.0.113.7',
            'event_id' => $result->eventId,
        ]);

        $this->assertSame(Outcome::Accepted, $result->outcome);
        $this->assertSame(202, $result->status);
        $this->assertNotNull($result->risk);
        $this->assertGreaterThanOrEqual(10, $result->risk->score, 'auth.login.failure has a base score of 10');
        $this->assertContains($result->risk->level, ['low', 'medium', 'high', 'critical']);
        $this->assertContains($result->risk->action, ['allow', 'challenge', 'block']);
        $this->assertTrue($again->accepted());
        $stored = $this->stored('pro', $actor);
        $this->assertCount(1, $stored, 'the resent event_id is stored once');
        $this->assertSame($result->eventId, $stored[0]['event_id']);
    }

    public function testABatchOnAPaidPlanIsSplitToTheBatchSize(): void
    {
        $actor = $this->actor();
        $events = [];
        for ($i = 0; $i < 150; $i++) {
            $events[] = ['event' => 'data.accessed', 'actor_id' => $actor, 'metadata' => ['n' => $i]];
        }

        $result = $this->client('pro', ['batchSize' => 100])->trackBatch($events);

        $this->assertSame(150, $result->accepted);
        $this->assertCount(150, $this->stored('pro', $actor));
    }

    public function testTheFreePlanFallsBackToSingleEvents(): void
    {
        $actor = $this->actor();
        $client = $this->client('free');

        $logout = ['event' => 'auth.logout', 'actor_id' => $actor];
        $first = $client->trackBatch([$logout, $logout]);
        $second = $client->trackBatch([$logout]);

        $this->assertSame(2, $first->accepted);
        $this->assertSame(1, $second->accepted);
        $this->assertSame(3, $client->stats()->accepted);
        $this->assertSame(0, $client->stats()->rejected);
        $this->assertCount(3, $this->stored('free', $actor));
    }

    public function testAFreeKeyAtItsLimitIsPacedThenAnotherProcessMeetsTheCooldown(): void
    {
        $actor = $this->actor();
        $clock = new FakeClock((int) floor(microtime(true) * 1000));
        $client = $this->client('free-2', ['clock' => $clock, 'maxRetries' => 0]);
        $outcomes = [];
        // 4 requests a second stay under the Free plan's 5 per second: the 30 per minute is what is reached.
        while (count($outcomes) < 31) {
            $outcomes[] = $client->track(['event' => 'custom.php.paced', 'actor_id' => $actor])->outcome;
            usleep(250_000);
            $clock->advance(250);
        }
        // Pacing keeps this client under its 30 events a minute: the 31st is dropped here, not sent.
        $this->assertSame([...array_fill(0, 30, Outcome::Accepted), Outcome::Dropped], $outcomes);
        $this->assertSame([1, 0], [$client->stats()->pacedDropped, $client->stats()->rateLimited]);

        // Another process on the same key (a fresh client knows nothing of this minute) meets the 429.
        $other = $this->client('free-2', ['clock' => $clock, 'maxRetries' => 0]);
        $first = $other->track(['event' => 'custom.php.other', 'actor_id' => $actor]);
        $silent = [];
        for ($i = 0; $i < 5; $i++) {
            $silent[] = $other->track(['event' => 'custom.php.silent', 'actor_id' => $actor])->outcome;
        }
        $clock->advance(Vigil::PROBE_PERIOD_MS);
        $probe = $other->track(['event' => 'custom.php.probe', 'actor_id' => $actor]);

        $this->assertSame(Outcome::RateLimited, $first->outcome);
        $this->assertSame(array_fill(0, 5, Outcome::Dropped), $silent);
        $this->assertSame(Outcome::RateLimited, $probe->outcome, 'within the same real minute the probe meets a 429');
        $stats = $other->stats();
        $this->assertTrue($stats->inCooldown);
        $this->assertSame([0, 2, 5, 1], [$stats->accepted, $stats->rateLimited, $stats->dropped, $stats->probes]);
        $this->assertCount(30, $this->stored('free-2', $actor), 'nothing sent during the cooldown was stored');
    }

    public function testTheLaravelQuickStartAgainstTheService(): void
    {
        $actor = $this->actor();
        $app = LaravelApplication::create([
            'api_key' => self::$service->account('pro')['secret'],
            'base_url' => self::$service->base,
        ]);
        $decision = null;
        $app['router']->post('/transfer', static function () use ($actor, &$decision) {
            $result = VigilFacade::track(
                ['event' => 'data.exported', 'actor_id' => $actor, 'metadata' => ['rows' => 50000]],
            );
            $decision = $result->risk;

            return $decision?->shouldBlock() ? 'blocked' : 'ok';
        })->middleware('vigil.context');
        $kernel = $app->make(Kernel::class);
        $server = ['REMOTE_ADDR' => '198.51.100.23', 'HTTP_USER_AGENT' => 'QuickStart/1.0'];
        $request = Request::create('/transfer', 'POST', [], [], [], $server);
        $response = $kernel->handle($request);
        $kernel->terminate($request, $response);

        $this->assertSame(200, $response->getStatusCode());
        $this->assertNotNull($decision);
        $this->assertGreaterThanOrEqual(15, $decision->score, 'data.exported has a base score of 15');
        [$stored] = $this->stored('pro', $actor);
        $this->assertSame('198.51.100.23', $stored['ip']);
        $this->assertSame('/transfer', $stored['request']['path'] ?? null);
    }
}
