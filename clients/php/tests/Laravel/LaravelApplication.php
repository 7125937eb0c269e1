<?php

declare(strict_types=1);

namespace Vigil\Tests\Laravel;

use Illuminate\Cache\CacheServiceProvider;
use Illuminate\Config\Repository;
use Illuminate\Filesystem\FilesystemServiceProvider;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Http\Kernel as KernelContract;
use Illuminate\Foundation\Application;
use Illuminate\Foundation\Exceptions\Handler;
use Illuminate\Support\Facades\Facade;
use Monolog\Handler\NullHandler;
use Vigil\Laravel\VigilServiceProvider;

/**
 * A Laravel application as small as a real one boots: configuration given in code instead
 * of config files, the cache, and the package registered as package discovery would.
 */
final class LaravelApplication
{
    /** @param array<string, mixed> $vigil the application's config/vigil.php */
    public static function create(array $vigil, array $cache = ['driver' => 'array']): Application
    {
        $app = new Application(sys_get_temp_dir() . '/vigil-laravel-test');
        $app->instance('config', new Repository([
            'app' => ['debug' => false, 'env' => 'testing'],
            'cache' => ['default' => 'test', 'stores' => ['test' => $cache], 'prefix' => 'test'],
            'logging' => [
                'default' => 'null',
                'channels' => ['null' => ['driver' => 'monolog', 'handler' => NullHandler::class]],
            ],
            'vigil' => $vigil,
        ]));
        $app->singleton(KernelContract::class, TestKernel::class);
        $app->singleton(ExceptionHandler::class, Handler::class);
        $app->register(FilesystemServiceProvider::class);
        $app->register(CacheServiceProvider::class);
        $app->register(VigilServiceProvider::class);
        $app->boot();
        Facade::clearResolvedInstances();
        Facade::setFacadeApplication($app);

        return $app;
    }
}
