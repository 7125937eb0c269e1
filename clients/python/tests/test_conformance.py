"""Replays every scenario of the conformance kit against this client and the scripted server.

Each scenario is one test named after the scenario. After every step the harness waits until
the sender thread has nothing left to send (``Client.wait_idle``), so request lists are exact.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, Optional

import pytest

import vigil
from support import KIT, FakeClock, ScriptedServer

DEFAULT_API_KEY = "vgl_pk_conformance0123456789abcdef"
SCENARIOS = sorted((KIT / "scenarios").glob("*.json"))

# Scenario options (milliseconds, string mode) to this client's keyword arguments (seconds, bool).
OPTIONS = {
    "api_key": lambda v: {"api_key": v},
    "timeout_ms": lambda v: {"timeout": v / 1000},
    "max_retries": lambda v: {"max_retries": v},
    "batch_size": lambda v: {"batch_size": v},
    "mode": lambda v: {"buffered": v == "buffered"},
    "buffer_size": lambda v: {"buffer_size": v},
    "flush_interval_ms": lambda v: {"flush_interval": v / 1000},
    "max_pacing_delay_ms": lambda v: {"max_pacing_delay_ms": v},
}


def client_for(options: Dict[str, Any], base_url: str, clock: FakeClock) -> vigil.Vigil:
    kwargs: Dict[str, Any] = {"api_key": DEFAULT_API_KEY}
    for key, value in options.items():
        if key not in OPTIONS:
            raise AssertionError(f"unknown client option {key!r}")
        kwargs.update(OPTIONS[key](value))
    return vigil.Vigil(base_url=base_url, clock=clock, sleep=lambda _seconds: None, **kwargs)


MISSING = object()


def mismatch(expected: Any, actual: Any, where: str, ids: Dict[str, str]) -> Optional[str]:
    """The kit's matching rules (``<any>``, ``<id:NAME>``, subset objects, exact arrays); None when it matches."""
    if actual is MISSING:
        return f"{where}: missing"
    if expected == "<any>":
        return None
    if isinstance(expected, str) and expected.startswith("<id:") and expected.endswith(">"):
        name = expected[4:-1]
        if not isinstance(actual, str) or not actual:
            return f"{where}: expected an id, got {actual!r}"
        if name in ids:
            return None if ids[name] == actual else f"{where}: expected the id bound to {name} ({ids[name]}), got {actual}"
        for other, value in ids.items():
            if value == actual:
                return f"{where}: id {actual} is already bound to {other}, expected a new one for {name}"
        ids[name] = actual
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where}: expected {len(expected)} items, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            problem = mismatch(e, a, f"{where}[{i}]", ids)
            if problem:
                return problem
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            problem = mismatch(value, actual.get(key, MISSING), f"{where}.{key}", ids)
            if problem:
                return problem
        return None
    # JSON has no 1 == true: booleans match booleans only.
    if isinstance(expected, bool) != isinstance(actual, bool) or expected != actual:
        return f"{where}: expected {json.dumps(expected)}, got {actual!r}"
    return None


def as_json(value: Any) -> Any:
    return json.loads(json.dumps(dataclasses.asdict(value)))


def replay(scenario: Dict[str, Any], server: ScriptedServer) -> None:
    clock = FakeClock()
    client = client_for(scenario["client"], server.url, clock)
    ids: Dict[str, str] = {}
    last: Any = None
    try:
        for index, step in enumerate(scenario["steps"], start=1):
            where = f"step {index} ({step['op']})"
            op = step["op"]
            if op == "script":
                server.script(*step["responses"])
            elif op == "track":
                last = client.track(step["event"])
            elif op == "track_batch":
                last = client.track_batch(step["events"])
            elif op == "advance":
                clock.advance(step["ms"])
            elif op == "flush":
                assert client.flush(timeout=30), f"{where}: flush did not finish"
            elif op == "expect_requests":
                received = server.requests()
                expected = step["requests"]
                seen = ", ".join(f"{r['method']} {r['path']}" for r in received) or "none"
                assert len(received) == len(expected), f"{where}: expected {len(expected)} requests, got {len(received)} ({seen})"
                for i, (e, r) in enumerate(zip(expected, received), start=1):
                    if "headers" in e:
                        e = {**e, "headers": {k.lower(): v for k, v in e["headers"].items()}}
                    problem = mismatch(e, r, f"{where}: request {i}", ids)
                    assert problem is None, problem
            elif op == "expect_result":
                problem = mismatch(step["result"], as_json(last), f"{where}: result", ids)
                assert problem is None, problem
            elif op == "expect_stats":
                problem = mismatch(step["stats"], as_json(client.stats()), f"{where}: stats", ids)
                assert problem is None, problem
            else:
                raise AssertionError(f"{where}: unknown op")
            assert client.wait_idle(timeout=30), f"{where}: the sender thread did not finish"
    finally:
        client.close(timeout=5)


def test_every_scenario_file_is_replayed() -> None:
    assert len(SCENARIOS) >= 25
    names = [json.loads(path.read_text())["name"] for path in SCENARIOS]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem.split("-", 1)[1] for p in SCENARIOS])
def test_scenario(path: Any, server: ScriptedServer) -> None:
    replay(json.loads(path.read_text()), server)


def test_the_matcher_rejects_what_the_kit_says_differs() -> None:
    ids: Dict[str, str] = {}
    assert mismatch({"a": 1}, {"a": 1, "b": 2}, "x", ids) is None
    assert mismatch({"a": None}, {}, "x", ids) is not None
    assert mismatch({"in_cooldown": False}, {"in_cooldown": 0}, "x", ids) is not None
    assert mismatch([1, 2], [1, 2, 3], "x", ids) is not None
    assert mismatch("<any>", None, "x", ids) is None and mismatch({"k": "<any>"}, {}, "x", ids) is not None
    assert mismatch("<id:a>", "id-1", "x", ids) is None and mismatch("<id:a>", "id-1", "x", ids) is None
    assert mismatch("<id:a>", "id-2", "x", ids) is not None, "a name stays bound to its id"
    assert mismatch("<id:b>", "id-1", "x", ids) is not None, "two names never share an id"
    assert mismatch("<id:c>", "", "x", ids) is not None
