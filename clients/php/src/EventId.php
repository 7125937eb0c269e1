<?php

declare(strict_types=1);

namespace Vigil;

/** Generates event_id values: UUID version 7, time-ordered, 74 random bits. */
final class EventId
{
    public static function generate(int $nowMs): string
    {
        $bytes = substr(pack('J', $nowMs), 2, 6) . random_bytes(10);
        $bytes[6] = chr((ord($bytes[6]) & 0x0f) | 0x70);
        $bytes[8] = chr((ord($bytes[8]) & 0x3f) | 0x80);
        $hex = bin2hex($bytes);

        return implode('-', [
            substr($hex, 0, 8),
            substr($hex, 8, 4),
            substr($hex, 12, 4),
            substr($hex, 16, 4),
            substr($hex, 20),
        ]);
    }
}
