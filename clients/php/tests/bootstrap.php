<?php

declare(strict_types=1);

// Composer (when present) or the package's own PSR-4 map plus Debian's autoloaders for
// PHPUnit, PSR-3 and the Laravel framework (php-laravel-framework installs it under /usr/share/php).
if (is_file(__DIR__ . '/../vendor/autoload.php')) {
    require __DIR__ . '/../vendor/autoload.php';

    return;
}

spl_autoload_register(static function (string $class): void {
    foreach (['Vigil\\Tests\\' => __DIR__ . '/', 'Vigil\\' => __DIR__ . '/../src/'] as $prefix => $dir) {
        if (str_starts_with($class, $prefix)) {
            $file = $dir . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }

            return;
        }
    }
});

foreach (['Psr/Log/autoload.php', 'Illuminate/autoload.php'] as $debianAutoloader) {
    $found = stream_resolve_include_path($debianAutoloader);
    if ($found !== false) {
        require_once $found;
    }
}
