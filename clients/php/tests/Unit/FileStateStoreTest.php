<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use Vigil\State\FileStateStore;
use Vigil\State\StateStore;
use Vigil\Tests\Support\StateStoreContract;

/** The state store on one file, shared by the workers of a host. */
final class FileStateStoreTest extends StateStoreContract
{
    private string $path;

    protected function setUp(): void
    {
        $this->path = tempnam(sys_get_temp_dir(), 'vigil-state-test-');
    }

    protected function tearDown(): void
    {
        @unlink($this->path);
    }

    protected function worker(): StateStore
    {
        return new FileStateStore($this->path);
    }

    protected function workerInAnotherProcess(): string
    {
        return sprintf('new Vigil\State\FileStateStore(%s)', var_export($this->path, true));
    }

    public function testAnUnwritableFileBehavesAsAnUnsharedEmptyState(): void
    {
        $store = new FileStateStore('/nonexistent-directory/vigil.json');

        $this->assertNull($store->cooldownStart());
        $this->assertTrue($store->startCooldown(1000));
    }
}
