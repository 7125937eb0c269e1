<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

use RuntimeException;

/**
 * A Node script of the conformance kit run as a child process: it prints one JSON line when
 * ready and stops when its stdin closes, so it never outlives the test run.
 */
final class NodeProcess
{
    /** @var resource */
    private $process;
    /** @var array<int, resource> */
    private array $pipes;
    /** @var array<string, mixed> */
    public readonly array $ready;

    /** @param list<string> $args */
    public function __construct(string $script, array $args = [], int $readyTimeoutSeconds = 60)
    {
        $root = self::repositoryRoot();
        $command = array_merge(['node', $root . '/' . $script], $args);
        $process = proc_open($command, [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => STDERR], $pipes, $root);
        if (!is_resource($process)) {
            throw new RuntimeException("cannot start node $script");
        }
        $this->process = $process;
        $this->pipes = $pipes;
        $read = [$pipes[1]];
        $write = null;
        $except = null;
        if (stream_select($read, $write, $except, $readyTimeoutSeconds) !== 1) {
            $this->stop();

            throw new RuntimeException("node $script did not print its ready line in {$readyTimeoutSeconds}s");
        }
        $line = fgets($pipes[1]);
        $ready = is_string($line) ? json_decode($line, true) : null;
        if (!is_array($ready)) {
            $this->stop();

            throw new RuntimeException("node $script printed no JSON line: " . var_export($line, true));
        }
        $this->ready = $ready;
    }

    public static function repositoryRoot(): string
    {
        return dirname(__DIR__, 4);
    }

    public function stop(): void
    {
        if (!is_resource($this->process)) {
            return;
        }
        foreach ($this->pipes as $pipe) {
            if (is_resource($pipe)) {
                fclose($pipe);
            }
        }
        proc_close($this->process);
    }

    public function __destruct()
    {
        $this->stop();
    }
}
