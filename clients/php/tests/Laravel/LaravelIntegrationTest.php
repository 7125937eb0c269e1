<?php

declare(strict_types=1);

namespace Vigil\Tests\Laravel;

use Illuminate\Auth\Events\Failed;
use Illuminate\Auth\Events\Login;
use Illuminate\Auth\Events\Logout;
use Illuminate\Auth\Events\PasswordReset;
use Illuminate\Auth\GenericUser;
use Illuminate\Contracts\Http\Kernel;
use Illuminate\Foundation\Application;
use Illuminate\Http\Request;
use Illuminate\Http\Response;
use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\Jobs\SyncJob;
use PHPUnit\Framework\TestCase;
use Vigil\BatchResult;
use Vigil\Laravel\Facades\Vigil as VigilFacade;
use Vigil\Outcome;
use Vigil\Tests\Support\SharesScriptedServer;
use Vigil\Vigil;

/** The Laravel integration in a booted application, sending to the scripted server over HTTP. */
final class LaravelIntegrationTest extends TestCase
{
    use SharesScriptedServer;


    protected function setUp(): void
    {
        self::$server->reset();
    }

    /** @param array<string, mixed> $config */
    private function app(array $config = [], array $cache = ['driver' => 'array']): Application
    {
        $config += ['api_key' => 'vgl_sk_laravel', 'base_url' => self::$server->url];

        return LaravelApplication::create($config, $cache);
    }

    /** Handles one request through the HTTP kernel, then terminates it as public/index.php does. */
    private function handle(Application $app, Request $request): int
    {
        $kernel = $app->make(Kernel::class);
        $response = $kernel->handle($request);
        $kernel->terminate($request, $response);

        return $response->getStatusCode();
    }

    public function testTheFacadeReturnsTheRiskDecisionOfTheConfiguredClient(): void
    {
        $app = $this->app();

        $result = VigilFacade::track(['event' => 'auth.login.failure', 'actor_id' => 'user-1']);

        $this->assertSame($app->make(Vigil::class), $app->make('vigil'));
        $this->assertSame(2000, $app['config']->get('vigil.timeout_ms'), 'defaults merged under the app config');
        $this->assertSame(Outcome::Accepted, $result->outcome);
        $this->assertNotNull($result->risk);
        [$request] = self::$server->requests();
        $this->assertSame('Bearer vgl_sk_laravel', $request->headers->authorization);
    }

    public function testAFailedLoginCarriesTheRequestContextAndNeverThePassword(): void
    {
        $app = $this->app();
        $app['router']->post('/login', static function (Request $request) use ($app) {
            // What SessionGuard::attempt() dispatches when the credentials do not match.
            $app['events']->dispatch(new Failed('web', null, $request->only('email', 'password')));

            return new Response('invalid credentials', 401);
        })->middleware('vigil.context');

        $form = ['email' => 'ann@example.com', 'password' => 'hunter2'];
        $server = ['REMOTE_ADDR' => '203.0.113.7', 'HTTP_USER_AGENT' => 'Mozilla/5.0 (test)'];
        $status = $this->handle($app, Request::create('/login', 'POST', $form, [], [], $server));
        VigilFacade::track(['event' => 'custom.after.request']);

        $this->assertSame(401, $status);
        [$failure, $after] = self::$server->requests();
        $this->assertSame('auth.login.failure', $failure->body->event);
        $this->assertSame('ann@example.com', $failure->body->email);
        $this->assertSame('203.0.113.7', $failure->body->ip);
        $this->assertSame('Mozilla/5.0 (test)', $failure->body->user_agent);
        $this->assertEquals((object) ['method' => 'POST', 'path' => '/login'], $failure->body->request);
        $this->assertSame('web', $failure->body->metadata->guard);
        $this->assertStringNotContainsString('hunter2', json_encode($failure->body));
        $this->assertFalse(property_exists($after->body, 'ip'), 'the context ends with the request');
    }

    public function testLaravelAuthEventsMapToVigilEventTypes(): void
    {
        $app = $this->app();
        $user = new GenericUser(['id' => 42, 'email' => 'bob@example.com']);

        $app['events']->dispatch(new Login('web', $user, true));
        $app['events']->dispatch(new Logout('web', $user));
        $app['events']->dispatch(new PasswordReset($user));
        $app['events']->dispatch(new Failed('api', $user, ['email' => 'bob@example.com', 'password' => 'x']));

        $bodies = array_map(static fn ($r) => $r->body, self::$server->requests());
        $this->assertSame(
            ['auth.login.success', 'auth.logout', 'auth.password.reset_completed', 'auth.login.failure'],
            array_map(static fn ($b) => $b->event, $bodies),
        );
        foreach ($bodies as $body) {
            $this->assertSame('42', $body->actor_id);
            $this->assertSame('bob@example.com', $body->email);
        }
        $this->assertTrue($bodies[0]->metadata->remember);
        $this->assertSame('api', $bodies[3]->metadata->guard);
    }

    public function testAuthEventsCanBeTurnedOff(): void
    {
        $app = $this->app(['auth_events' => false]);

        $app['events']->dispatch(new Login('web', new GenericUser(['id' => 1]), false));

        $this->assertSame([], self::$server->requests());
    }

    public function testABufferedClientSendsOneBatchAfterTheResponse(): void
    {
        $app = $this->app(['mode' => 'buffered', 'state' => 'memory']);
        $seenDuringRequest = null;
        $app['router']->get('/export', static function () use (&$seenDuringRequest) {
            VigilFacade::track(['event' => 'data.exported', 'metadata' => ['rows' => 5000]]);
            VigilFacade::track(['event' => 'data.downloaded']);
            $seenDuringRequest = count(self::$server->requests());

            return 'ok';
        })->middleware('vigil.context');

        $this->handle($app, Request::create('/export', 'GET', [], [], [], ['REMOTE_ADDR' => '198.51.100.4']));

        $this->assertSame(0, $seenDuringRequest);
        $requests = self::$server->requests();
        $this->assertCount(1, $requests);
        $this->assertSame('/v1/events/batch', $requests[0]->path);
        $ips = array_map(static fn ($e) => $e->ip, $requests[0]->body->events);
        $this->assertSame(['198.51.100.4', '198.51.100.4'], $ips);
    }

    public function testAQueueWorkerSendsEachJobsEventsWhenTheJobEnds(): void
    {
        $app = $this->app(['mode' => 'buffered', 'state' => 'memory']);
        $job = new SyncJob($app, '{"job":"ExportReport"}', 'sync', 'default');

        VigilFacade::track(['event' => 'data.exported', 'actor_id' => 'job-1']);
        $app['events']->dispatch(new JobProcessed('sync', $job));
        VigilFacade::track(['event' => 'data.exported', 'actor_id' => 'job-2']);
        $app['events']->dispatch(new JobExceptionOccurred('sync', $job, new \RuntimeException('export failed')));

        $batches = array_map(
            static fn ($r) => array_map(static fn ($e) => $e->actor_id, $r->body->events),
            self::$server->requests(),
        );
        $this->assertSame([['job-1'], ['job-2']], $batches);
    }

    public function testWorkersSharingTheCacheShareTheCooldown(): void
    {
        $directory = sys_get_temp_dir() . '/vigil-laravel-cache-' . bin2hex(random_bytes(4));
        $cache = ['driver' => 'file', 'path' => $directory];
        $worker1 = $this->app(['state' => 'cache'], $cache)->make(Vigil::class);
        $worker2 = $this->app(['state' => 'cache'], $cache)->make(Vigil::class);
        self::$server->script([
            ['status' => 429, 'body' => ['error' => 'RATE_LIMITED', 'message' => 'wait', 'retry_after' => 60]],
        ]);

        $first = $worker1->track(['event' => 'auth.login.failure']);
        $second = $worker2->track(['event' => 'auth.login.failure']);
        $batch = $worker2->trackBatch([['event' => 'auth.logout'], ['event' => 'auth.logout']]);

        $this->assertSame(Outcome::RateLimited, $first->outcome);
        $this->assertSame(Outcome::Dropped, $second->outcome);
        $this->assertEquals(new BatchResult(dropped: 2), $batch);
        $this->assertTrue($worker2->stats()->inCooldown);
        $this->assertCount(1, self::$server->requests(), 'the second worker sent nothing');
        (new \Illuminate\Filesystem\Filesystem())->deleteDirectory($cache['path']);
    }

    public function testAnUnknownStateSettingIsReportedWhenTheClientIsBuilt(): void
    {
        $app = $this->app(['state' => 'redis-cluster']);

        $this->expectExceptionMessage("vigil.state must be cache, file or memory, not 'redis-cluster'");
        $app->make(Vigil::class);
    }
}
