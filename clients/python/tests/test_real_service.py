"""Against the real service (started by the kit's real-service.mjs on a free port): risk
decisions, batches on a paid plan, the Free fallback, event_id idempotency, and a Free key
reaching its 30 events per minute then staying silent in its cooldown, and a burst of logins on a
Free key paced to its policies without a single 429."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any, Callable, Dict, Iterator, List

import pytest

import vigil
from support import NodeProcess


@pytest.fixture(scope="module")
def service() -> Iterator[Dict[str, Any]]:
    process = NodeProcess("real-service.mjs", ["--plan", "free", "--plan", "free", "--plan", "free", "--plan", "pro"])
    try:
        yield process.info
    finally:
        process.stop()


def read(service: Dict[str, Any], plan: str, path: str) -> Any:
    request = urllib.request.Request(service["base"] + path, headers={"Authorization": f"Bearer {service['accounts'][plan]['secret']}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def eventually(probe: Callable[[], Any], expected: Any, deadline: float = 15.0) -> Any:
    """Polls ``probe`` until it returns ``expected`` (stored events are committed in groups)."""
    end = time.monotonic() + deadline
    value = probe()
    while value != expected and time.monotonic() < end:
        time.sleep(0.1)
        value = probe()
    return value


def used(service: Dict[str, Any], plan: str) -> int:
    return int(read(service, plan, "/v1/usage")["used"])


def client_for(service: Dict[str, Any], plan: str, **options: Any) -> vigil.Vigil:
    return vigil.Vigil(service["accounts"][plan]["secret"], base_url=service["base"], **options)


def test_a_single_event_gets_its_risk_decision(service: Dict[str, Any]) -> None:
    client = client_for(service, "pro")
    result = client.track({"event": "server.container.escape_attempt", "actor_id": "host-1", "host": "web-1"})
    assert result.outcome is vigil.Outcome.ACCEPTED and result.status == 202
    assert result.risk is not None and result.risk.score >= 60, "the type's base score alone is 60"
    assert result.risk.level in ("high", "critical") and result.risk.action in ("challenge", "block")
    stored = eventually(lambda: [e.get("event_id") for e in read(service, "pro", "/v1/events?actor_id=host-1")["data"]], [result.event_id])
    assert stored == [result.event_id]


def test_a_batch_on_a_paid_plan_and_event_id_idempotency(service: Dict[str, Any]) -> None:
    client = client_for(service, "pro")
    before = eventually(lambda: used(service, "pro"), 1)
    events = [{"event": "data.accessed", "actor_id": f"reader-{i}"} for i in range(150)]
    assert client.track_batch(events) == vigil.BatchResult(accepted=150)
    assert eventually(lambda: used(service, "pro"), before + 150) == before + 150
    again = {"event": "auth.login.failure", "actor_id": "retried", "event_id": "py-idempotent-1"}
    first, second = client.track(again), client.track(again)
    assert first.ok and second.ok and first.risk == second.risk
    assert eventually(lambda: used(service, "pro"), before + 151) == before + 151
    stats = client.stats()
    assert (stats.accepted, stats.rejected, stats.failed, stats.rate_limited, stats.dropped, stats.in_cooldown) == (152, 0, 0, 0, 0, False)


def test_the_free_plan_falls_back_to_single_events(service: Dict[str, Any]) -> None:
    client = client_for(service, "free")
    events = [{"event": "auth.login.success", "actor_id": f"member-{i}"} for i in range(4)]
    assert client.track_batch(events) == vigil.BatchResult(accepted=4)
    time.sleep(1.1)  # Free allows 5 events per second
    assert client.track_batch(events[:2]) == vigil.BatchResult(accepted=2)
    assert client.stats().rejected == 0
    assert eventually(lambda: used(service, "free"), 6) == 6


def test_a_free_key_over_30_events_per_minute_enters_a_silent_cooldown(service: Dict[str, Any]) -> None:
    client = client_for(service, "free-2")
    outcomes = []
    for i in range(40):
        result = client.track({"event": "api.request", "actor_id": f"visitor-{i}", "request": {"method": "GET", "path": "/"}})
        outcomes.append(result.outcome)
        if result.outcome is not vigil.Outcome.ACCEPTED:
            break
        time.sleep(0.25)  # 4 per second: the per-minute limit answers, not the per-second one
    # Pacing keeps this client under its 30 events per minute: the 31st is dropped here, not sent.
    assert outcomes == [vigil.Outcome.ACCEPTED] * 30 + [vigil.Outcome.DROPPED]
    assert client.stats().paced_dropped == 1 and client.stats().rate_limited == 0
    # Another process on the same key (a fresh client knows nothing of the minute) meets the 429.
    other = client_for(service, "free-2")
    first = other.track({"event": "api.request", "actor_id": "visitor-other"})
    assert first.outcome is vigil.Outcome.RATE_LIMITED
    later = [other.track({"event": "api.request", "actor_id": "visitor-late"}).outcome for _ in range(5)]
    assert later == [vigil.Outcome.DROPPED] * 5
    stats = other.stats()
    assert stats.in_cooldown and (stats.accepted, stats.rate_limited, stats.dropped, stats.probes) == (0, 1, 5, 0)
    assert eventually(lambda: used(service, "free-2"), 30) == 30


def test_a_burst_of_logins_on_a_free_key_is_paced_without_a_429(service: Dict[str, Any]) -> None:
    """100 logins at once from 100 threads: the client sends what the Free plan takes, drops and
    counts the rest, and the service never answers 429 (so protection stays on)."""
    # The service's first answers are slow while it warms up: one event on another key first, and
    # a generous timeout, so that what is measured is pacing, not a cold start.
    client_for(service, "pro").track("auth.login.success", actor_id="warm-up")
    client = client_for(service, "free-3", timeout=10.0)
    results: List[vigil.TrackResult] = []
    lock = threading.Lock()

    def login(i: int) -> None:
        result = client.track("auth.login.success", actor_id=f"member-{i}", ip="203.0.113.9")
        with lock:
            results.append(result)

    threads = [threading.Thread(target=login, args=(i,)) for i in range(100)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stats = client.stats()
    print(f"python burst: sent={stats.sent} accepted={stats.accepted} paced={stats.paced} paced_dropped={stats.paced_dropped} rate_limited={stats.rate_limited}")
    assert stats.rate_limited == 0 and not stats.in_cooldown
    assert stats.accepted + stats.paced_dropped == 100 and stats.dropped == stats.paced_dropped
    assert stats.sent == stats.accepted >= 5 and stats.failed == stats.rejected == 0
    assert sorted(r.outcome.value for r in results) == sorted(["accepted"] * stats.accepted + ["dropped"] * stats.paced_dropped)
    assert eventually(lambda: used(service, "free-3"), stats.accepted) == stats.accepted
