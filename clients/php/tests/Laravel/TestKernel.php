<?php

declare(strict_types=1);

namespace Vigil\Tests\Laravel;

use Illuminate\Foundation\Http\Kernel;

/** The HTTP kernel without the bootstrappers that read .env and config files. */
final class TestKernel extends Kernel
{
    protected $bootstrappers = [];
}
