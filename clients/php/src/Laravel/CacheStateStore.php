<?php

declare(strict_types=1);

namespace Vigil\Laravel;

use Illuminate\Contracts\Cache\LockProvider;
use Illuminate\Contracts\Cache\LockTimeoutException;
use Illuminate\Contracts\Cache\Repository;
use Vigil\State\SharedPacing;
use Vigil\State\StateStore;
use Vigil\Vigil;

/**
 * The client's shared state in a Laravel cache store: every worker and every server using
 * the same store honours one cooldown and sends one probe per period between them. add()
 * is atomic in Laravel's stores (Redis, Memcached, database, file), which is what makes
 * the start of a cooldown and the claim of a probe happen once. The pacer's state is updated
 * under the store's lock (every store of Laravel's but the null store has one), so the workers
 * pace their requests together.
 */
final class CacheStateStore implements StateStore, SharedPacing
{
    /** Entries outlive the cooldown a little; the client decides when a cooldown is over. */
    private const TTL_SECONDS = Vigil::COOLDOWN_MS / 1000 + 600;
    /** An overload pause lasts a minute at most; its entry outlives it a little. */
    private const PAUSE_TTL_SECONDS = Vigil::MAX_OVERLOAD_PAUSE_MS / 1000 + 60;
    /** The plan is asked again for a batch endpoint after a day (plans get upgraded). */
    private const BATCH_TTL_SECONDS = 86_400;
    /** Pacing holds units for at most 1.1 minutes and 100 ms; an idle key's pacing state expires. */
    private const PACING_TTL_SECONDS = 600;

    public function __construct(private readonly Repository $cache, private readonly string $prefix)
    {
    }

    public static function forApiKey(Repository $cache, string $apiKey): self
    {
        return new self($cache, 'vigil:' . substr(hash('sha256', $apiKey), 0, 16) . ':');
    }

    public function cooldownStart(): ?int
    {
        $start = $this->cache->get($this->prefix . 'cooldown');

        return is_numeric($start) ? (int) $start : null;
    }

    public function startCooldown(int $nowMs): bool
    {
        return $this->cache->add($this->prefix . 'cooldown', $nowMs, self::TTL_SECONDS);
    }

    public function claimProbe(int $cooldownStart, int $period): bool
    {
        return $this->cooldownStart() === $cooldownStart
            && $this->cache->add($this->prefix . "probe:$cooldownStart:$period", 1, self::TTL_SECONDS);
    }

    public function endCooldown(int $cooldownStart): void
    {
        if ($this->cooldownStart() === $cooldownStart) {
            $this->cache->forget($this->prefix . 'cooldown');
        }
    }

    public function pausedUntil(): ?int
    {
        $until = $this->cache->get($this->prefix . 'paused-until');

        return is_numeric($until) ? (int) $until : null;
    }

    public function extendPause(int $untilMs): void
    {
        $current = $this->pausedUntil();
        if ($current === null || $untilMs > $current) {
            $this->cache->put($this->prefix . 'paused-until', $untilMs, self::PAUSE_TTL_SECONDS);
        }
    }

    public function endPause(): void
    {
        $this->cache->forget($this->prefix . 'paused-until');
    }

    public function batchUnavailable(): bool
    {
        return (bool) $this->cache->get($this->prefix . 'batch-unavailable', false);
    }

    public function markBatchUnavailable(): void
    {
        $this->cache->put($this->prefix . 'batch-unavailable', true, self::BATCH_TTL_SECONDS);
    }

    public function updatePacing(callable $change): mixed
    {
        $apply = function () use ($change): mixed {
            $saved = $this->cache->get($this->prefix . 'pacing');
            [$next, $answer] = $change(is_array($saved) ? $saved : []);
            $this->cache->put($this->prefix . 'pacing', $next, self::PACING_TTL_SECONDS);

            return $answer;
        };
        $store = $this->cache->getStore();
        if (!$store instanceof LockProvider) {
            return $apply();
        }
        try {
            return $store->lock($this->prefix . 'pacing-lock', 5)->block(5, $apply);
        } catch (LockTimeoutException) {
            // A lock held past its time by a crashed worker: pace on what the cache holds.
            return $apply();
        }
    }
}
