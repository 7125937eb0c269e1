"""Pacing to the service's announced rate-limit policies, the asyncio client and the error hook,
over real HTTP to the kit's scripted server with a fake clock (waits go through the injected sleep)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Dict, List

import vigil
from support import FakeClock, ScriptedServer
from vigil.pacing import Pacer, parse_items

KEY = "vgl_sk_test0123456789abcdef"
FREE = {"ratelimit-policy": '"second";q=5;w=1, "minute";q=30;w=60'}
PRO = {"ratelimit-policy": '"second";q=100;w=1, "minute";q=1000;w=60'}


def accepted(headers: Dict[str, str]) -> Dict[str, Any]:
    return {"status": 202, "headers": headers}


class Sleeps:
    """The injected sleep: records each wait and moves the fake clock by it."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.waits: List[int] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(round(seconds * 1000))
        self.clock.advance(round(seconds * 1000))


def test_the_policy_fields_are_read_as_structured_field_lists() -> None:
    assert parse_items('"second";q=5;w=1, "minute";q=30;w=60') == [("second", {"q": 5, "w": 1}), ("minute", {"q": 30, "w": 60})]
    assert parse_items('"second";r=0;t=1,"minute";r=x;t=3') == [("second", {"r": 0, "t": 1}), ("minute", {"t": 3})]
    assert parse_items(None) == [] and parse_items("") == []


def test_before_any_answer_the_smallest_plan_is_assumed() -> None:
    pacer = Pacer(1000)
    delays = [pacer.reserve(0, 1) for _ in range(6)]
    # Five requests per second: the sixth waits for the first unit to be released (1.1 s and 100 ms
    # of jitter), longer than allowed, so it would be dropped.
    assert delays == [0, 0, 0, 0, 0, None]
    assert not pacer.learned
    slow = Pacer(2000)
    assert [slow.reserve(0, 1) for _ in range(7)] == [0, 0, 0, 0, 0, 1200, 1200]


def test_the_minute_policy_counts_events_and_the_second_policy_requests() -> None:
    pacer = Pacer(1000)
    pacer.learn({"RateLimit-Policy": '"second";q=5;w=1, "minute";q=30;w=60'})
    assert pacer.learned
    assert pacer.reserve(0, 25) == 0
    assert pacer.reserve(0, 5) == 0
    # 30 events taken this minute: one more waits 66.1 s, far beyond the bound.
    assert pacer.reserve(0, 1) is None
    assert pacer.reserve(65_099, 1) is None and pacer.reserve(66_100, 1) == 0


def test_an_answer_without_policies_changes_nothing() -> None:
    pacer = Pacer(0)
    pacer.learn({"RateLimit-Policy": '"second";q=2;w=1'})
    pacer.learn({})
    pacer.learn({"RateLimit-Policy": '"second";w=1, minute'})
    assert [pacer.reserve(0, 1) for _ in range(3)] == [0, 0, None]


def test_a_burst_waits_for_room_within_the_bound_then_is_dropped_and_counted(server: ScriptedServer, clock: FakeClock) -> None:
    server.script(*[accepted({**FREE, "ratelimit": '"second";r=4;t=1, "minute";r=29;t=1'})] * 40)
    sleeps = Sleeps(clock)
    client = vigil.Vigil(KEY, base_url=server.url, clock=clock, sleep=sleeps, max_pacing_delay_ms=1500)
    outcomes = [client.track("auth.login.success", actor_id=f"user-{i}").outcome for i in range(40)]
    received = server.requests()
    stats = client.stats()
    # Thirty events a minute: every one the Free plan takes is sent, each after waiting for room
    # in the per-second window; the rest would wait a minute and are dropped, none sent into a 429.
    assert len(received) == 30 and stats.accepted == 30 and stats.rate_limited == 0
    assert outcomes.count(vigil.Outcome.ACCEPTED) == 30 and outcomes.count(vigil.Outcome.DROPPED) == 10
    assert stats.paced == 5 and stats.paced_dropped == 10 and stats.dropped == 10 and stats.sent == 30
    # Five at once, then the first of each next five waits for the window to release them.
    assert sleeps.waits == [1200] * 5 and not stats.in_cooldown


def test_a_zero_bound_never_waits(server: ScriptedServer, clock: FakeClock) -> None:
    server.script(*[accepted(FREE)] * 5)
    sleeps = Sleeps(clock)
    client = vigil.Vigil(KEY, base_url=server.url, clock=clock, sleep=sleeps, max_pacing_delay_ms=0)
    results = [client.track("auth.login.success").outcome for _ in range(7)]
    assert results == [vigil.Outcome.ACCEPTED] * 5 + [vigil.Outcome.DROPPED] * 2
    assert sleeps.waits == [] and client.stats().paced_dropped == 2 and len(server.requests()) == 5


def test_a_paid_plan_announced_by_the_service_lifts_the_assumed_one(server: ScriptedServer, clock: FakeClock) -> None:
    server.script(*[accepted(PRO)] * 50)
    client = vigil.Vigil(KEY, base_url=server.url, clock=clock, sleep=Sleeps(clock), max_pacing_delay_ms=0)
    results = [client.track("auth.login.success").outcome for _ in range(50)]
    assert results == [vigil.Outcome.ACCEPTED] * 50 and client.stats().paced == 0


def test_threads_sharing_a_client_never_go_over_the_policy(server: ScriptedServer, clock: FakeClock) -> None:
    server.script(*[accepted(FREE)] * 30)
    client = vigil.Vigil(KEY, base_url=server.url, clock=clock, sleep=lambda _s: None, max_pacing_delay_ms=0)
    threads = [threading.Thread(target=client.track, args=("auth.login.success",)) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = client.stats()
    assert len(server.requests()) == 5 and stats.accepted == 5 and stats.paced_dropped == 15


def test_on_error_sees_rejections_failures_and_429s_but_not_drops(server: ScriptedServer, clock: FakeClock) -> None:
    errors: List[vigil.VigilError] = []
    server.script({"status": 400}, {"status": 429})
    client = vigil.Vigil(KEY, base_url=server.url, clock=clock, sleep=lambda _s: None, on_error=errors.append)
    client.track("auth.login.success")
    client.track("auth.login.success")
    for _ in range(100):
        client.track("auth.login.success")
    assert [type(e) for e in errors] == [vigil.DeliveryError, vigil.RateLimitedError]
    assert all(isinstance(e, vigil.VigilError) for e in errors) and errors[0].result.status == 400
    assert client.stats().dropped == 100


def test_a_failing_error_hook_never_reaches_the_caller(server: ScriptedServer, clock: FakeClock) -> None:
    def hook(_error: vigil.VigilError) -> None:
        raise RuntimeError("hook")

    server.script({"status": 400})
    client = vigil.Vigil(KEY, base_url=server.url, clock=clock, on_error=hook)
    assert client.track("auth.login.success").outcome is vigil.Outcome.REJECTED


def test_the_async_client_does_not_block_the_event_loop(server: ScriptedServer) -> None:
    # The answer takes 300 ms of real time: a ticker on the loop must run while the event is on its
    # way (a track that blocked the loop would let it run only after the event was delivered).
    server.script({"status": 202, "delay_ms": 300, "headers": PRO})

    async def main() -> Any:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        async with vigil.AsyncVigil(KEY, base_url=server.url) as client:
            tick_task = asyncio.ensure_future(ticker())
            result = await client.track("auth.login.success", actor_id="user-1")
            done.set()
            await tick_task
            return result, ticks, client.stats()

    result, ticks, stats = asyncio.run(main())
    assert result.outcome is vigil.Outcome.ACCEPTED and result.risk is not None
    assert ticks >= 1 and stats.accepted == 1


def test_the_async_client_paces_concurrent_tasks_and_closes(server: ScriptedServer) -> None:
    server.script(*[accepted(FREE)] * 10)

    async def main() -> Any:
        client = vigil.AsyncVigil(KEY, base_url=server.url, max_pacing_delay_ms=0)
        results = await asyncio.gather(*(client.track("auth.login.success") for _ in range(10)))
        batch = await client.track_batch([{"event": "auth.login.success"}])
        await client.close(timeout=5)
        return results, batch, client.stats()

    results, batch, stats = asyncio.run(main())
    assert [r.outcome for r in results].count(vigil.Outcome.ACCEPTED) == 5
    assert stats.paced_dropped == 5 + batch.dropped and len(server.requests()) == 5
