<?php

declare(strict_types=1);

namespace Vigil\Laravel;

use Illuminate\Contracts\Cache\Factory as CacheFactory;
use Illuminate\Contracts\Container\Container;
use Illuminate\Contracts\Events\Dispatcher;
use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Routing\Router;
use Illuminate\Support\ServiceProvider;
use Vigil\DeliveryMode;
use Vigil\Laravel\Listeners\AuthEventListener;
use Vigil\Laravel\Middleware\AddRequestContext;
use Vigil\State\FileStateStore;
use Vigil\State\InMemoryStateStore;
use Vigil\State\StateStore;
use Vigil\Vigil;

/**
 * Registers one Vigil client per application (the `Vigil` facade), its config file, the
 * `vigil.context` middleware and the auth event listeners, and flushes the client when the
 * application terminates (after the response has been sent, so a buffered client costs the
 * user nothing) and after each queued job.
 */
final class VigilServiceProvider extends ServiceProvider
{
    public function register(): void
    {
        $this->mergeConfigFrom(__DIR__ . '/../../config/vigil.php', 'vigil');

        $this->app->singleton(Vigil::class, static function (Container $app): Vigil {
            $config = $app->make('config')->get('vigil');
            $apiKey = (string) ($config['api_key'] ?? '');

            return new Vigil(
                apiKey: $apiKey,
                baseUrl: (string) $config['base_url'],
                timeoutMs: (int) $config['timeout_ms'],
                maxRetries: (int) $config['max_retries'],
                batchSize: (int) $config['batch_size'],
                mode: DeliveryMode::from((string) $config['mode']),
                bufferSize: (int) $config['buffer_size'],
                flushIntervalMs: (int) $config['flush_interval_ms'],
                throwOnError: (bool) ($config['throw_on_error'] ?? $config['throw_on_failure'] ?? false),
                // The application's terminating callback flushes; PHP's shutdown is the fallback.
                flushOnShutdown: true,
                state: self::stateStore($app, (string) $config['state'], $config['cache_store'] ?? null, $apiKey),
                logger: $app->bound('log') ? $app->make('log') : null,
                maxPacingDelayMs: (int) ($config['max_pacing_delay_ms'] ?? 1000),
            );
        });
        $this->app->alias(Vigil::class, 'vigil');
    }

    public function boot(): void
    {
        if ($this->app->runningInConsole()) {
            $this->publishes(
                [__DIR__ . '/../../config/vigil.php' => $this->app->configPath('vigil.php')],
                'vigil-config',
            );
        }

        $this->app->make(Router::class)->aliasMiddleware('vigil.context', AddRequestContext::class);

        $events = $this->app->make(Dispatcher::class);
        if ($this->app->make('config')->get('vigil.auth_events')) {
            // Listeners given as [class, method] are built on the first event, not at boot.
            foreach (AuthEventListener::LISTENERS as $event => $method) {
                $events->listen($event, [AuthEventListener::class, $method]);
            }
        }

        // A web request ends after its response has been sent; a queued job ends in a worker
        // that lives on, so each job's events leave when the job is done.
        $flush = function (): void {
            if ($this->app->resolved(Vigil::class)) {
                $this->app->make(Vigil::class)->flush();
            }
        };
        $this->app->terminating($flush);
        $events->listen([JobProcessed::class, JobExceptionOccurred::class], $flush);
    }

    private static function stateStore(Container $app, string $kind, ?string $cacheStore, string $apiKey): StateStore
    {
        return match ($kind) {
            'cache' => CacheStateStore::forApiKey($app->make(CacheFactory::class)->store($cacheStore), $apiKey),
            'file' => FileStateStore::forApiKey($apiKey),
            'memory' => new InMemoryStateStore(),
            default => throw new \InvalidArgumentException("vigil.state must be cache, file or memory, not '$kind'"),
        };
    }
}
