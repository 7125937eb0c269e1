<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use PHPUnit\Framework\TestCase;

/** The package follows PSR-12 (phpcs.xml.dist), warnings included. */
final class CodeStyleTest extends TestCase
{
    public function testTheCodeFollowsPsr12(): void
    {
        $phpcs = trim((string) shell_exec('command -v phpcs'));
        if ($phpcs === '') {
            if (getenv('CI') === 'true') {
                $this->fail('phpcs is not installed (Debian package php-codesniffer)');
            }
            $this->markTestSkipped('phpcs is not installed (Debian package php-codesniffer)');
        }
        $root = dirname(__DIR__, 2);
        $command = sprintf('%s --standard=%s --report=emacs -q 2>&1', $phpcs, escapeshellarg("$root/phpcs.xml.dist"));
        exec($command, $output, $status);

        $this->assertSame(0, $status, implode("\n", $output));
    }
}
