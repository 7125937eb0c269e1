<?php

declare(strict_types=1);

namespace Vigil\State;

/**
 * State shared by every PHP process of one machine through a small JSON file, read and
 * written under an exclusive flock(), so that PHP-FPM workers agree on one cooldown and
 * send one probe per period between them, and pace their requests together. Standard library only.
 */
final class FileStateStore implements StateStore, SharedPacing
{
    public function __construct(private readonly string $path)
    {
    }

    /** A file in the system temporary directory, one per API key. */
    public static function forApiKey(string $apiKey): self
    {
        return new self(sys_get_temp_dir() . '/vigil-state-' . substr(hash('sha256', $apiKey), 0, 16) . '.json');
    }

    public function cooldownStart(): ?int
    {
        return $this->update(static fn (array $state): array => [$state, $state['cooldown_start'] ?? null]);
    }

    public function startCooldown(int $nowMs): bool
    {
        return $this->update(static function (array $state) use ($nowMs): array {
            if (($state['cooldown_start'] ?? null) !== null) {
                return [$state, false];
            }
            $state['cooldown_start'] = $nowMs;
            $state['probed_period'] = 0;

            return [$state, true];
        });
    }

    public function claimProbe(int $cooldownStart, int $period): bool
    {
        return $this->update(static function (array $state) use ($cooldownStart, $period): array {
            if (($state['cooldown_start'] ?? null) !== $cooldownStart || $period <= ($state['probed_period'] ?? 0)) {
                return [$state, false];
            }
            $state['probed_period'] = $period;

            return [$state, true];
        });
    }

    public function endCooldown(int $cooldownStart): void
    {
        $this->update(static function (array $state) use ($cooldownStart): array {
            if (($state['cooldown_start'] ?? null) === $cooldownStart) {
                $state['cooldown_start'] = null;
            }

            return [$state, null];
        });
    }

    public function pausedUntil(): ?int
    {
        return $this->update(static fn (array $state): array => [$state, $state['paused_until'] ?? null]);
    }

    public function extendPause(int $untilMs): void
    {
        $this->update(static function (array $state) use ($untilMs): array {
            $state['paused_until'] = max($state['paused_until'] ?? $untilMs, $untilMs);

            return [$state, null];
        });
    }

    public function endPause(): void
    {
        $this->update(static function (array $state): array {
            unset($state['paused_until']);

            return [$state, null];
        });
    }

    public function batchUnavailable(): bool
    {
        return $this->update(
            static fn (array $state): array => [$state, (bool) ($state['batch_unavailable'] ?? false)],
        );
    }

    public function markBatchUnavailable(): void
    {
        $this->update(static function (array $state): array {
            $state['batch_unavailable'] = true;

            return [$state, null];
        });
    }

    public function updatePacing(callable $change): mixed
    {
        return $this->update(static function (array $state) use ($change): array {
            [$pacing, $answer] = $change(is_array($state['pacing'] ?? null) ? $state['pacing'] : []);
            $state['pacing'] = $pacing;

            return [$state, $answer];
        });
    }

    /**
     * Runs $change on the stored state under the file's exclusive lock and writes back what
     * it returns. A file that cannot be opened behaves as an empty, unshared state.
     *
     * @template T
     *
     * @param callable(array<string, mixed>): array{0: array<string, mixed>, 1: T} $change
     *
     * @return T
     */
    private function update(callable $change): mixed
    {
        $handle = @fopen($this->path, 'c+');
        if ($handle === false) {
            return $change([])[1];
        }
        try {
            flock($handle, LOCK_EX);
            $text = stream_get_contents($handle);
            $state = is_string($text) && $text !== '' ? json_decode($text, true) : [];
            [$next, $answer] = $change(is_array($state) ? $state : []);
            if ($next !== $state) {
                ftruncate($handle, 0);
                rewind($handle);
                fwrite($handle, json_encode($next, JSON_THROW_ON_ERROR));
                fflush($handle);
            }

            return $answer;
        } finally {
            flock($handle, LOCK_UN);
            fclose($handle);
        }
    }
}
