<?php

declare(strict_types=1);

namespace Vigil\Tests\Unit;

use PHPUnit\Framework\TestCase;
use Vigil\Pacing\Pacer;

/** The pacing rules of the conformance kit (the state stores' contract checks a shared pacer). */
final class PacerTest extends TestCase
{
    public function testTheSmallestPlanIsAssumedBeforeAnyAnswer(): void
    {
        $pacer = Pacer::fresh();
        $waits = array_map(static fn (): ?int => $pacer->reserve(1, 0, 1000), range(1, 6));

        // Five requests a second; the sixth waits for the first unit's release (1.1 s + 100 ms): too long.
        $this->assertSame([0, 0, 0, 0, 0, null], $waits);
        $this->assertFalse($pacer->learned);
        $slow = Pacer::fresh();
        $slowWaits = array_map(static fn (): ?int => $slow->reserve(1, 0, 2000), range(1, 7));
        $this->assertSame([0, 0, 0, 0, 0, 1200, 1200], $slowWaits);
    }

    public function testTheMinutePolicyCountsEventsAndTheSecondPolicyRequests(): void
    {
        $pacer = Pacer::fresh();
        $pacer->learn('"second";q=5;w=1, "minute";q=30;w=60');
        $this->assertTrue($pacer->learned);
        $this->assertSame(0, $pacer->reserve(25, 0, 1000));
        $this->assertSame(0, $pacer->reserve(5, 0, 1000));
        $this->assertNull($pacer->reserve(1, 0, 1000));
        $this->assertNull($pacer->reserve(1, 65_099, 1000));
        $this->assertSame(0, $pacer->reserve(1, 66_100, 1000));
    }

    public function testAnAnswerWithoutValidPoliciesChangesNothing(): void
    {
        $pacer = Pacer::fresh();
        $pacer->learn('"second";q=2;w=1');
        $pacer->learn(null);
        $pacer->learn('"second";w=1, minute');
        $this->assertSame([0, 0, null], array_map(static fn (): ?int => $pacer->reserve(1, 0, 0), range(1, 3)));
    }
}
