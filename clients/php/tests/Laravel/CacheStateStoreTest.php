<?php

declare(strict_types=1);

namespace Vigil\Tests\Laravel;

use Illuminate\Cache\FileStore;
use Illuminate\Cache\Repository;
use Illuminate\Filesystem\Filesystem;
use PHPUnit\Framework\TestCase;
use Vigil\Laravel\CacheStateStore;

/** The state store on Laravel's file cache, the way separate PHP-FPM workers use it. */
final class CacheStateStoreTest extends TestCase
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

    private function store(string $apiKey = 'vgl_sk_a'): CacheStateStore
    {
        return CacheStateStore::forApiKey(new Repository(new FileStore(new Filesystem(), $this->directory)), $apiKey);
    }

    public function testWorkersShareOneCooldownAndOneProbePerPeriod(): void
    {
        $worker1 = $this->store();
        $worker2 = $this->store();

        $this->assertTrue($worker1->startCooldown(1000));
        $this->assertFalse($worker2->startCooldown(2000));
        $this->assertSame(1000, $worker2->cooldownStart());
        $this->assertTrue($worker2->claimProbe(1000, 1));
        $this->assertFalse($worker1->claimProbe(1000, 1));
        $this->assertFalse($worker1->claimProbe(999, 2), 'a claim for another cooldown');

        $worker1->endCooldown(1000);
        $this->assertNull($worker2->cooldownStart());
        $this->assertFalse($worker2->batchUnavailable());
        $worker1->markBatchUnavailable();
        $this->assertTrue($worker2->batchUnavailable());
    }

    public function testEachApiKeyHasItsOwnState(): void
    {
        $this->store('vgl_sk_a')->startCooldown(1000);

        $this->assertNull($this->store('vgl_sk_b')->cooldownStart());
    }

    public function testConcurrentProcessesClaimAProbeExactlyOnce(): void
    {
        $this->store()->startCooldown(1000);
        $code = sprintf(
            'require %s; usleep(200000); $cache = new Illuminate\Cache\Repository('
            . 'new Illuminate\Cache\FileStore(new Illuminate\Filesystem\Filesystem(), %s));'
            . ' echo Vigil\Laravel\CacheStateStore::forApiKey($cache, "vgl_sk_a")->claimProbe(1000, 1) ? "1" : "0";',
            var_export(realpath(__DIR__ . '/../bootstrap.php'), true),
            var_export($this->directory, true),
        );
        $processes = [];
        $outputs = [];
        for ($i = 0; $i < 8; $i++) {
            $processes[] = proc_open([PHP_BINARY, '-r', $code], [1 => ['pipe', 'w']], $pipes);
            $outputs[] = $pipes[1];
        }
        $answers = '';
        foreach ($outputs as $i => $output) {
            $answers .= stream_get_contents($output);
            fclose($output);
            proc_close($processes[$i]);
        }

        $this->assertSame(8, strlen($answers), "every process answered: '$answers'");
        $this->assertSame(1, substr_count($answers, '1'));
    }
}
