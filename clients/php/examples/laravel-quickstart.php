<?php

/**
 * The README's Laravel quick start as one runnable file: a Laravel application with the
 * package registered (as package discovery does), a login route that asks Vigil for a risk
 * decision, and the auth listener reporting the failed attempts.
 *
 *   VIGIL_API_KEY=vgl_sk_... VIGIL_BASE_URL=http://127.0.0.1:8080 php examples/laravel-quickstart.php
 */

declare(strict_types=1);

use Illuminate\Auth\Events\Failed;
use Illuminate\Cache\CacheServiceProvider;
use Illuminate\Config\Repository;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Http\Kernel as KernelContract;
use Illuminate\Filesystem\FilesystemServiceProvider;
use Illuminate\Foundation\Application;
use Illuminate\Foundation\Exceptions\Handler;
use Illuminate\Foundation\Http\Kernel;
use Illuminate\Http\Request;
use Illuminate\Http\Response;
use Illuminate\Support\Facades\Event;
use Illuminate\Support\Facades\Facade;
use Illuminate\Support\Facades\Route;
use Vigil\Laravel\Facades\Vigil;
use Vigil\Laravel\VigilServiceProvider;

// Composer's autoloader in an application; here the package's own, with Debian's Laravel.
$composer = __DIR__ . '/../vendor/autoload.php';
require is_file($composer) ? $composer : __DIR__ . '/../tests/bootstrap.php';

$app = new Application(sys_get_temp_dir() . '/vigil-quickstart');
$app->instance('config', new Repository([
    'app' => ['debug' => false],
    'cache' => ['default' => 'array', 'stores' => ['array' => ['driver' => 'array']]],
    'logging' => ['default' => 'stderr', 'channels' => ['stderr' => ['driver' => 'errorlog']]],
]));
// The configuration is given above instead of config/*.php and .env files, and the facades
// are set up below instead of by the bootstrappers.
$app->singleton(KernelContract::class, fn (Application $app) => new class ($app, $app['router']) extends Kernel {
    protected $bootstrappers = [];
});
$app->singleton(ExceptionHandler::class, Handler::class);
$app->register(FilesystemServiceProvider::class);
$app->register(CacheServiceProvider::class);
$app->register(VigilServiceProvider::class);
$app->boot();
Facade::setFacadeApplication($app);

// routes/web.php
Route::post('/login', function (Request $request) {
    // What Auth::attempt() dispatches when the password is wrong; the package's listener reports it.
    Event::dispatch(new Failed('web', null, $request->only('email', 'password')));

    return new Response('invalid credentials', 401);
})->middleware('vigil.context');

Route::post('/export', function () {
    $risk = Vigil::track(['event' => 'data.exported', 'actor_id' => 'user-42', 'metadata' => ['rows' => 250000]])->risk;
    if ($risk?->shouldBlock()) {
        return new Response('export blocked', 403);
    }

    return new Response("exported (risk {$risk?->score}, {$risk?->level}, {$risk?->action})");
})->middleware('vigil.context');

$kernel = $app->make(KernelContract::class);
$server = ['REMOTE_ADDR' => '203.0.113.50', 'HTTP_USER_AGENT' => 'Mozilla/5.0 (quick start)'];
$requests = [];
for ($attempt = 1; $attempt <= 3; $attempt++) {
    $form = ['email' => 'ann@example.com', 'password' => "guess-$attempt"];
    $requests[] = Request::create('/login', 'POST', $form, [], [], $server);
}
$requests[] = Request::create('/export', 'POST', [], [], [], $server);
foreach ($requests as $request) {
    $response = $kernel->handle($request);
    echo $request->getMethod(), ' ', $request->getPathInfo(), ' -> ', $response->getStatusCode(), ' ';
    echo $response->getContent(), "\n";
    $kernel->terminate($request, $response);
}
echo 'Vigil stats: ', json_encode(Vigil::stats()->toArray()), "\n";
