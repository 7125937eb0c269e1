<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Vigil\RiskDecision;

final class RiskDecisionTest extends TestCase
{
    public function testReadsTheDecisionOfAnAcceptedEvent(): void
    {
        $risk = RiskDecision::fromResponseBody(
            '{"id":"evt_1","status":"accepted","risk":{"score":85,"level":"critical","action":"block",'
            . '"breakdown":[{"source":"base","points":60},{"source":"tor_exit","points":25},{"source":7}]}}',
        );

        $this->assertNotNull($risk);
        $this->assertSame([
            'score' => 85,
            'level' => 'critical',
            'action' => 'block',
            'breakdown' => [['source' => 'base', 'points' => 60], ['source' => 'tor_exit', 'points' => 25]],
        ], $risk->toArray());
        $this->assertTrue($risk->shouldBlock());
        $this->assertFalse($risk->shouldChallenge());
    }

    /** @return iterable<string, array{string}> */
    public function bodiesWithoutADecision(): iterable
    {
        yield 'not JSON' => ['<html>ok</html>'];
        yield 'empty' => [''];
        yield 'dropped by the monthly cap' => ['{"status":"dropped"}'];
        yield 'a JSON list' => ['[1,2]'];
        yield 'score not a number' => ['{"risk":{"score":"high"}}'];
    }

    /** @dataProvider bodiesWithoutADecision */
    public function testABodyWithoutADecisionGivesNull(string $body): void
    {
        $this->assertNull(RiskDecision::fromResponseBody($body));
    }
}
