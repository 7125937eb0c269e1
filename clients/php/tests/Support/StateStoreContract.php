<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

use PHPUnit\Framework\TestCase;
use Vigil\Pacing\Pacer;
use Vigil\State\SharedPacing;
use Vigil\State\StateStore;

/**
 * What every StateStore shared by PHP workers must do, run against each one: a test case for a
 * store extends this and says how a worker opens the shared state, in this process and in another.
 */
abstract class StateStoreContract extends TestCase
{
    /** A store on the shared state, as one more worker would open it. */
    abstract protected function worker(): StateStore;

    /** PHP code, run after the bootstrap in another process, that evaluates to a store on the same state. */
    abstract protected function workerInAnotherProcess(): string;

    public function testWorkersPaceTogether(): void
    {
        $waits = [];
        for ($i = 0; $i < 6; $i++) {
            // Each request of PHP-FPM opens the store anew: only the shared state knows the ones before.
            $store = $this->worker();
            $this->assertInstanceOf(SharedPacing::class, $store);
            $waits[] = $store->updatePacing(static function (array $saved): array {
                $pacer = Pacer::fromArray($saved);
                $wait = $pacer->reserve(1, 1_000, 0);

                return [$pacer->toArray(), $wait];
            });
        }

        // The smallest plan's 5 requests a second, counted across the workers.
        $this->assertSame([0, 0, 0, 0, 0, null], $waits);
    }

    public function testWorkersShareOneOverloadPause(): void
    {
        $worker1 = $this->worker();
        $worker2 = $this->worker();

        $this->assertNull($worker2->pausedUntil());
        $worker1->extendPause(5000);
        $this->assertSame(5000, $worker2->pausedUntil());
        $worker2->extendPause(3000);
        $this->assertSame(5000, $worker1->pausedUntil(), 'an earlier end does not shorten the pause');
        $worker2->extendPause(8000);
        $this->assertSame(8000, $worker1->pausedUntil());
        $worker1->endPause();
        $this->assertNull($worker2->pausedUntil());
    }

    public function testWorkersShareOneCooldownAndOneProbePerPeriod(): void
    {
        $worker1 = $this->worker();
        $worker2 = $this->worker();

        $this->assertTrue($worker1->startCooldown(1000));
        $this->assertFalse($worker2->startCooldown(2000));
        $this->assertSame(1000, $worker2->cooldownStart());

        $this->assertTrue($worker2->claimProbe(1000, 1));
        $this->assertFalse($worker1->claimProbe(1000, 1));
        $this->assertTrue($worker1->claimProbe(1000, 2));
        $this->assertFalse($worker1->claimProbe(999, 3), 'a claim for another cooldown');

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
        $store = $this->worker();
        $store->startCooldown(1000);
        $store->claimProbe(1000, 5);
        $store->endCooldown(1000);

        $store->startCooldown(9000);

        $this->assertTrue($store->claimProbe(9000, 1));
        $this->assertFalse($store->claimProbe(1000, 6), 'a claim for an ended cooldown');
    }

    public function testConcurrentProcessesClaimAProbeExactlyOnce(): void
    {
        $this->worker()->startCooldown(1000);
        $code = sprintf(
            'require %s; usleep(200000); echo (%s)->claimProbe(1000, 1) ? "1" : "0";',
            var_export(realpath(__DIR__ . '/../bootstrap.php'), true),
            $this->workerInAnotherProcess(),
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
