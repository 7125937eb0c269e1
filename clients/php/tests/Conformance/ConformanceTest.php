<?php

declare(strict_types=1);

namespace Vigil\Tests\Conformance;

use PHPUnit\Framework\TestCase;
use stdClass;
use Vigil\Tests\Support\NodeProcess;
use Vigil\Tests\Support\ScriptedServer;

/** Every scenario of the conformance kit, replayed against the scripted server: one test each. */
final class ConformanceTest extends TestCase
{
    private static ?ScriptedServer $server = null;

    public static function setUpBeforeClass(): void
    {
        self::$server = new ScriptedServer();
    }

    public static function tearDownAfterClass(): void
    {
        self::$server?->stop();
        self::$server = null;
    }

    /** @return iterable<string, array{stdClass}> */
    public function scenarios(): iterable
    {
        $files = glob(NodeProcess::repositoryRoot() . '/clients/conformance/scenarios/*.json') ?: [];
        sort($files);
        foreach ($files as $file) {
            $scenario = json_decode((string) file_get_contents($file), false, 512, JSON_THROW_ON_ERROR);
            yield $scenario->name => [$scenario];
        }
    }

    /** @dataProvider scenarios */
    public function testScenario(stdClass $scenario): void
    {
        $replayer = new ScenarioReplayer(self::$server);
        $replayer->replay($scenario);
        $this->addToAssertionCount(count($scenario->steps));
    }

    public function testEveryScenarioOfTheKitIsReplayed(): void
    {
        $this->assertCount(
            count(glob(NodeProcess::repositoryRoot() . '/clients/conformance/scenarios/*.json') ?: []),
            iterator_to_array($this->scenarios()),
        );
        $this->assertGreaterThanOrEqual(25, count(iterator_to_array($this->scenarios())));
    }
}
