<?php

declare(strict_types=1);

namespace Vigil\Tests\Support;

/** One scripted server for every test of a class (a test resets it in setUp), stopped after the last. */
trait SharesScriptedServer
{
    private static ScriptedServer $server;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ScriptedServer();
    }

    public static function tearDownAfterClass(): void
    {
        self::$server->stop();
    }
}
