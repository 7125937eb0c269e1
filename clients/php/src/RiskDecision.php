<?php

declare(strict_types=1);

namespace Vigil;

/** The service's verdict on one accepted event. */
final class RiskDecision
{
    public function __construct(
        /** Composite risk score, 0 to 100. */
        public readonly int $score,
        /** low, medium, high or critical. */
        public readonly string $level,
        /** allow, challenge or block, after the account's thresholds. */
        public readonly string $action,
        /** @var list<array{source: string, points: int}> the lines that add up to the score */
        public readonly array $breakdown = [],
    ) {
    }

    /** The decision in a 202 body, or null when the body has none (not JSON, no risk object). */
    public static function fromResponseBody(string $body): ?self
    {
        $decoded = json_decode($body, true);
        $risk = is_array($decoded) ? ($decoded['risk'] ?? null) : null;
        if (!is_array($risk) || !is_int($risk['score'] ?? null)) {
            return null;
        }

        $breakdown = [];
        foreach (is_array($risk['breakdown'] ?? null) ? $risk['breakdown'] : [] as $line) {
            if (is_array($line) && is_string($line['source'] ?? null) && is_int($line['points'] ?? null)) {
                $breakdown[] = ['source' => $line['source'], 'points' => $line['points']];
            }
        }

        return new self($risk['score'], (string) ($risk['level'] ?? ''), (string) ($risk['action'] ?? ''), $breakdown);
    }

    public function shouldBlock(): bool
    {
        return $this->action === 'block';
    }

    public function shouldChallenge(): bool
    {
        return $this->action === 'challenge';
    }

    /**
     * @return array{score: int, level: string, action: string, breakdown: list<array{source: string, points: int}>}
     */
    public function toArray(): array
    {
        return [
            'score' => $this->score,
            'level' => $this->level,
            'action' => $this->action,
            'breakdown' => $this->breakdown,
        ];
    }
}
