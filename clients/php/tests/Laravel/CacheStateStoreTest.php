<?php

declare(strict_types=1);

namespace Vigil\Tests\Laravel;

use Illuminate\Cache\FileStore;
use Illuminate\Cache\Repository;
use Illuminate\Filesystem\Filesystem;
use Vigil\Laravel\CacheStateStore;
use Vigil\State\StateStore;
use Vigil\Tests\Support\StateStoreContract;

/** The state store on Laravel's file cache, the way separate PHP-FPM workers use it. */
final class CacheStateStoreTest extends StateStoreContract
{
    private string $directory;

    protected function setUp(): void
    {
        $this->directory = sys_get_temp_dir() . '/vigil-cache-state-' . bin2hex(random_bytes(4));
    }

    protected function tearDown(): void
    {
        (new Filesystem())->deleteDirectory($this->directory);
    }

    protected function worker(string $apiKey = 'vgl_sk_a'): StateStore
    {
        return CacheStateStore::forApiKey(new Repository(new FileStore(new Filesystem(), $this->directory)), $apiKey);
    }

    protected function workerInAnotherProcess(): string
    {
        return sprintf(
            'Vigil\Laravel\CacheStateStore::forApiKey(new Illuminate\Cache\Repository('
            . 'new Illuminate\Cache\FileStore(new Illuminate\Filesystem\Filesystem(), %s)), "vgl_sk_a")',
            var_export($this->directory, true),
        );
    }

    public function testEachApiKeyHasItsOwnState(): void
    {
        $this->worker('vgl_sk_a')->startCooldown(1000);

        $this->assertNull($this->worker('vgl_sk_b')->cooldownStart());
    }
}
