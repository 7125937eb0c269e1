<?php

declare(strict_types=1);

namespace Vigil\Tests\Integration;

use PHPUnit\Framework\TestCase;
use Vigil\Tests\Support\RealService;

/**
 * The README's install path works today: an empty Composer project with this folder as a `path`
 * repository (the README's composer.json), `composer install` with the network disabled, then the
 * README's plain-PHP quick start run against the real service.
 */
final class ComposerInstallTest extends TestCase
{
    public function testTheReadmeInstallAndQuickStartWorkOffline(): void
    {
        $composer = trim((string) shell_exec('command -v composer'));
        if ($composer === '') {
            if (getenv('CI') === 'true') {
                $this->fail('composer is not installed (Debian package composer)');
            }
            $this->markTestSkipped('composer is not installed (Debian package composer)');
        }
        $readme = (string) file_get_contents(dirname(__DIR__, 2) . '/README.md');
        $this->assertSame(1, preg_match('/## Install.*?```json\n(.*?)```/s', $readme, $json));
        $this->assertSame(1, preg_match('/## Quick start.*?```php\n(.*?)```/s', $readme, $php));
        $project = sys_get_temp_dir() . '/vigil-composer-' . bin2hex(random_bytes(6));
        mkdir($project);
        file_put_contents(
            "$project/composer.json",
            str_replace('/path/to/vigil/clients/php', dirname(__DIR__, 2), $json[1]),
        );
        file_put_contents("$project/quickstart.php", $php[1]);
        $env = 'COMPOSER_DISABLE_NETWORK=1 COMPOSER_HOME=' . escapeshellarg("$project/.composer");
        exec("cd $project && $env $composer install --no-interaction --no-progress 2>&1", $installed, $status);
        $this->assertSame(0, $status, implode("\n", $installed));

        $service = new RealService(['free']);
        try {
            $command = sprintf(
                'cd %s && VIGIL_API_KEY=%s VIGIL_BASE_URL=%s %s quickstart.php 2>&1',
                escapeshellarg($project),
                escapeshellarg($service->account('free')['secret']),
                escapeshellarg($service->base),
                escapeshellarg(PHP_BINARY),
            );
            exec($command, $output, $status);
        } finally {
            $service->stop();
            exec('rm -rf ' . escapeshellarg($project));
        }

        $this->assertSame(0, $status, implode("\n", $output));
        $this->assertMatchesRegularExpression('/^accepted \d+$/', implode("\n", $output));
    }
}
