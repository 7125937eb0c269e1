<?php

declare(strict_types=1);

return [
    // Secret key of your Vigil account (vgl_sk_...). Without a valid one the service answers
    // 401 and every event counts as rejected (and is logged).
    'api_key' => env('VIGIL_API_KEY'),

    // The service's address, without /v1.
    'base_url' => env('VIGIL_BASE_URL', 'http://localhost:8080'),

    // 'direct': Vigil::track() sends at once and returns the risk decision.
    // 'buffered': events wait in a buffer sent in batches when it is full and at the end
    // of the request, after the response has gone to the browser.
    'mode' => env('VIGIL_MODE', 'direct'),

    'timeout_ms' => (int) env('VIGIL_TIMEOUT_MS', 2000),
    'max_retries' => (int) env('VIGIL_MAX_RETRIES', 2),

    // Events per batch request: your plan's batch size (Starter 50, Pro and Business 100).
    'batch_size' => (int) env('VIGIL_BATCH_SIZE', 100),
    'buffer_size' => (int) env('VIGIL_BUFFER_SIZE', 100),
    'flush_interval_ms' => (int) env('VIGIL_FLUSH_INTERVAL_MS', 5000),

    // Where the 429 cooldown is kept, so that every PHP worker honours it:
    // 'cache' (a Laravel cache store shared by your servers, e.g. redis), 'file' (one
    // machine), or 'memory' (one process; for workers and tests).
    'state' => env('VIGIL_STATE', 'cache'),
    'cache_store' => env('VIGIL_CACHE_STORE'),

    // Send auth.login.success, auth.login.failure, auth.logout and
    // auth.password.reset_completed from Laravel's authentication events.
    'auth_events' => (bool) env('VIGIL_AUTH_EVENTS', true),

    // The longest a request waits for room in your key's rate limits (the service announces
    // them on every answer); an event that would wait longer is dropped and counted
    // (paced_dropped) instead of meeting a 429 and the hour of cooldown after it. 0: never wait.
    'max_pacing_delay_ms' => (int) env('VIGIL_MAX_PACING_DELAY_MS', 1000),

    // Throw Vigil\Exception\DeliveryException when an event is rejected, given up or rate
    // limited, instead of logging it. Leave off in production.
    'throw_on_error' => (bool) env('VIGIL_THROW_ON_ERROR', false),
];
