<?php

declare(strict_types=1);

// A plain-PHP login endpoint as the README's quick start writes it, served by `php -S` in the
// tests: every request builds its own client with the default state store, exactly as PHP-FPM
// runs it, and answers what happened to its event as JSON.

require __DIR__ . '/../../bootstrap.php';

$vigil = new Vigil\Vigil(
    (string) getenv('VIGIL_API_KEY'),
    baseUrl: (string) getenv('VIGIL_BASE_URL'),
    maxRetries: 0,
    // A loaded test machine may answer slowly; the event is not retried, so a timeout would lose it.
    timeoutMs: 10_000,
);
$result = $vigil->track([
    'event' => 'auth.login.success',
    'actor_id' => $_GET['user'] ?? 'member',
    'ip' => '203.0.113.9',
]);

header('Content-Type: application/json');
echo json_encode(['result' => $result->toArray(), 'stats' => $vigil->stats()->toArray()], JSON_THROW_ON_ERROR);
