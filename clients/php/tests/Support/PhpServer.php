<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

use RuntimeException;

/**
 * `php -S` serving tests/Fixtures/web with the given environment: a fresh PHP execution per
 * request (and with workers > 1, several processes), as under PHP-FPM. Its temporary directory
 * is its own, so the default file state store starts empty.
 */
final class PhpServer
{
    /** @var resource */
    private $process;
    public readonly string $url;
    public readonly string $tmp;

    /** @param array<string, string> $env */
    public function __construct(array $env, int $workers = 1)
    {
        $this->tmp = sys_get_temp_dir() . '/vigil-php-server-' . bin2hex(random_bytes(6));
        mkdir($this->tmp);
        $socket = stream_socket_server('tcp://127.0.0.1:0');
        if ($socket === false) {
            throw new RuntimeException('no free port');
        }
        $name = (string) stream_socket_get_name($socket, false);
        $port = (int) substr($name, strrpos($name, ':') + 1);
        fclose($socket);
        $this->url = "http://127.0.0.1:$port";
        $environment = getenv() + ['PATH' => '/usr/bin:/bin'];
        $environment = array_merge($environment, $env, ['TMPDIR' => $this->tmp]);
        if ($workers > 1) {
            $environment['PHP_CLI_SERVER_WORKERS'] = (string) $workers;
        }
        $process = proc_open(
            [PHP_BINARY, '-S', "127.0.0.1:$port", '-t', dirname(__DIR__) . '/Fixtures/web'],
            [0 => ['pipe', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes,
            null,
            $environment,
        );
        if (!is_resource($process)) {
            throw new RuntimeException('cannot start php -S');
        }
        $this->process = $process;
        for ($i = 0; $i < 100; $i++) {
            $probe = @fsockopen('127.0.0.1', $port, $errno, $errstr, 0.1);
            if ($probe !== false) {
                fclose($probe);

                return;
            }
            usleep(50_000);
        }
        $this->stop();

        throw new RuntimeException('php -S did not start');
    }

    /**
     * GETs each path, all at once, and decodes the JSON answers in the order given.
     *
     * @param list<string> $paths
     *
     * @return list<array<string, mixed>>
     */
    public function getAll(array $paths): array
    {
        $multi = curl_multi_init();
        $handles = [];
        foreach ($paths as $path) {
            $curl = curl_init($this->url . $path);
            curl_setopt_array($curl, [CURLOPT_RETURNTRANSFER => true, CURLOPT_TIMEOUT => 60]);
            curl_multi_add_handle($multi, $curl);
            $handles[] = $curl;
        }
        do {
            curl_multi_exec($multi, $running);
            curl_multi_select($multi, 1.0);
        } while ($running > 0);
        $answers = [];
        foreach ($handles as $curl) {
            $decoded = json_decode((string) curl_multi_getcontent($curl), true);
            $answers[] = is_array($decoded) ? $decoded : throw new RuntimeException(
                'php -S answered ' . curl_getinfo($curl, CURLINFO_RESPONSE_CODE) . ': ' . curl_multi_getcontent($curl),
            );
            curl_multi_remove_handle($multi, $curl);
        }
        curl_multi_close($multi);

        return $answers;
    }

    public function stop(): void
    {
        proc_terminate($this->process);
        proc_close($this->process);
        array_map('unlink', glob($this->tmp . '/*') ?: []);
        @rmdir($this->tmp);
    }
}
