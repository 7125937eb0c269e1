<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Vigil\State\FileStateStore;

final class FileStateStoreTest extends TestCase
{
    private string $path;

    protected function setUp(): void
    {
        $this->path = tempnam(sys_get_temp_dir(), 'vigil-state-test-');
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    public function testTwoStoresOnOneFileShareTheCooldown(): void
    {
        $worker1 = new FileStateStore($this->path);
        $worker2 = new FileStateStore($this->path);

        $this->assertTrue($worker1->startCooldown(1000));
        $this->assertFalse($worker2->startCooldown(2000));
        $this->assertSame(1000, $worker2->cooldownStart());

        $this->assertTrue($worker2->claimProbe(1000, 1));
        $this->assertFalse($worker1->claimProbe(1000, 1));
        $this->assertTrue($worker1->claimProbe(1000, 2));

        $worker2->endCooldown(999);
        $this->assertSame(1000, $worker1->cooldownStart(), 'ending another cooldown leaves this one');
        $worker2->endCooldown(1000);
        $this->assertNull($worker1->cooldownStart());

        $this->assertFalse($worker1->batchUnavailable());
        $worker2->markBatchUnavailable();
        $this->assertTrue($worker1->batchUnavailable());
    }

    public function testANewCooldownStartsWithNoProbeClaimed(): void
    {
        $store = new FileStateStore($this->path);
        $store->startCooldown(1000);
        $store->claimProbe(1000, 5);
        $store->endCooldown(1000);

        $store->startCooldown(9000);

        $this->assertTrue($store->claimProbe(9000, 1));
        $this->assertFalse($store->claimProbe(1000, 6), 'a claim for an ended cooldown');
    }

    public function testConcurrentProcessesClaimAProbeExactlyOnce(): void
    {
        $store = new FileStateStore($this->path);
        $store->startCooldown(1000);
        $autoload = realpath(__DIR__ . '/../bootstrap.php');
        $code = sprintf(
            'require %s; usleep(200000); echo (new Vigil\State\FileStateStore(%s))->claimProbe(1000, 1) ? "1" : "0";',
            var_export($autoload, true),
            var_export($this->path, true),
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

    public function testAnUnwritableFileBehavesAsAnUnsharedEmptyState(): void
    {
        $store = new FileStateStore('/nonexistent-directory/vigil.json');

        $this->assertNull($store->cooldownStart());
        $this->assertTrue($store->startCooldown(1000));
    }
}
