<?php

declare(strict_types=1);

namespace Vigil\Tests\Integration;

use PHPUnit\Framework\TestCase;
use Vigil\Tests\Support\PhpServer;
use Vigil\Tests\Support\RealService;
use Vigil\Tests\Support\ScriptedServer;

/**
 * The plain-PHP quick start behind a web server (`php -S`, a fresh PHP execution per request,
 * as under PHP-FPM): the default state store outlives the request, so a 429 cooldown holds for
 * the requests after it, and the requests of several processes pace together.
 */
final class PhpServerTest extends TestCase
{
    public function testA429CooldownPersistsAcrossRequests(): void
    {
        $scripted = new ScriptedServer();
        $scripted->script([['status' => 429]]);
        $web = new PhpServer(['VIGIL_API_KEY' => 'vgl_sk_php_server_test', 'VIGIL_BASE_URL' => $scripted->url]);
        try {
            [$first] = $web->getAll(['/?user=a']);
            [$second] = $web->getAll(['/?user=b']);
            [$third] = $web->getAll(['/?user=c']);
            $received = $scripted->requests();
            $files = glob($web->tmp . '/vigil-state-*.json') ?: [];
        } finally {
            $web->stop();
            $scripted->stop();
        }

        $this->assertSame('rate_limited', $first['result']['outcome']);
        // Later requests are new PHP executions with new clients: only the file remembers the 429.
        $this->assertSame('dropped', $second['result']['outcome']);
        $this->assertSame('dropped', $third['result']['outcome']);
        $this->assertTrue($third['stats']['in_cooldown']);
        $this->assertCount(1, $received, 'nothing was sent during the cooldown');
        $this->assertCount(1, $files, 'the state lives in one file in the temporary directory');
    }

    public function testABurstOfLoginsAcrossProcessesOnAFreeKeyIsPacedWithoutA429(): void
    {
        $service = new RealService(['free', 'pro']);
        // One event on another key first: the service's first answers are slow while it warms up.
        $warm = new \Vigil\Vigil($service->account('pro')['secret'], $service->base);
        $warm->track(['event' => 'auth.login.success']);
        $web = new PhpServer(
            ['VIGIL_API_KEY' => $service->account('free')['secret'], 'VIGIL_BASE_URL' => $service->base],
            workers: 4,
        );
        try {
            $paths = array_map(static fn (int $i): string => "/?user=member-$i", range(1, 100));
            $answers = $web->getAll($paths);
            $used = $service->get('free', '/v1/usage')['used'];
        } finally {
            $web->stop();
            $service->stop();
        }

        $outcomes = array_count_values(array_map(static fn (array $a): string => $a['result']['outcome'], $answers));
        $paced = array_sum(array_map(static fn (array $a): int => $a['stats']['paced'], $answers));
        $pacedDropped = array_sum(array_map(static fn (array $a): int => $a['stats']['paced_dropped'], $answers));
        $accepted = $outcomes['accepted'] ?? 0;
        fwrite(STDERR, sprintf(
            "php burst (4 php -S workers): accepted=%d paced=%d paced_dropped=%d rate_limited=%d\n",
            $accepted,
            $paced,
            $pacedDropped,
            $outcomes['rate_limited'] ?? 0,
        ));
        $this->assertArrayNotHasKey('rate_limited', $outcomes, json_encode($outcomes, JSON_THROW_ON_ERROR));
        $this->assertSame(100, $accepted + ($outcomes['dropped'] ?? 0), json_encode($outcomes, JSON_THROW_ON_ERROR));
        $this->assertSame($outcomes['dropped'] ?? 0, $pacedDropped, 'every drop was pacing, counted');
        $this->assertGreaterThanOrEqual(5, $accepted);
        $this->assertLessThanOrEqual(30, $accepted, 'the Free plan takes 30 events a minute');
        $this->assertSame($accepted, $used, 'the service stored every accepted event');
    }
}
