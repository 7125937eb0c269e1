<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

use Psr\Log\AbstractLogger;

/** A PSR-3 logger that keeps what it was told. */
final class RecordingLogger extends AbstractLogger
{
    /** @var list<array{level: string, message: string}> */
    public array $records = [];

    /** @param array<string, mixed> $context */
    public function log($level, $message, array $context = []): void
    {
        $this->records[] = ['level' => (string) $level, 'message' => (string) $message];
    }

    /** @return list<string> */
    public function messages(string $level): array
    {
        return array_values(array_map(
            static fn (array $r): string => $r['message'],
            array_filter($this->records, static fn (array $r): bool => $r['level'] === $level),
        ));
    }
}
