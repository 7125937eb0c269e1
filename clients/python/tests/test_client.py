"""The Python client's own interface, over real HTTP to the kit's scripted server: results and
errors, backoff, the background thread, threads sharing a client, atexit and fork."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from typing import Any, Callable, Dict, List

import pytest

import vigil
from support import FakeClock, ScriptedServer

KEY = "vgl_sk_test0123456789abcdef"
RATE_LIMITED = {"status": 429, "body": {"error": "RATE_LIMITED", "message": "Retry in 60 seconds.", "retry_after": 60}}


def make_client(server: ScriptedServer, **options: Any) -> vigil.Client:
    options.setdefault("sleep", lambda _seconds: None)
    return vigil.Client(KEY, base_url=server.url, **options)


def wait_for_requests(server: ScriptedServer, count: int, deadline: float = 10.0) -> List[Dict[str, Any]]:
    """Requests received, polling until ``count`` arrived (for deliveries triggered by real time)."""
    received: List[Dict[str, Any]] = []
    end = time.monotonic() + deadline
    while len(received) < count and time.monotonic() < end:
        received += server.requests()
        if len(received) < count:
            time.sleep(0.02)
    return received


def event_ids(requests: List[Dict[str, Any]]) -> List[str]:
    ids = []
    for r in requests:
        body = r["body"]
        ids += [e["event_id"] for e in body["events"]] if "events" in body else [body["event_id"]]
    return ids


class TestTrack:
    def test_accepted_event_returns_the_risk_decision_and_a_uuid7_event_id(self, server: ScriptedServer) -> None:
        client = make_client(server)
        event = {"event": "auth.login.failure", "actor_id": "user-1"}
        result = client.track(event)
        assert result.outcome is vigil.Outcome.ACCEPTED and result.outcome == "accepted" and result.ok
        assert result.status == 202
        assert result.risk == vigil.RiskDecision(score=10, level="low", action="allow", breakdown=(vigil.RiskFactor("base", 10),))
        assert uuid.UUID(result.event_id).version == 7
        assert "event_id" not in event, "the caller's event is not modified"
        [request] = server.requests()
        assert request["headers"]["authorization"] == f"Bearer {KEY}"
        assert request["headers"]["content-type"] == "application/json"
        assert request["body"] == {"event": "auth.login.failure", "actor_id": "user-1", "event_id": result.event_id}

    def test_the_type_and_fields_can_be_given_as_keywords(self, server: ScriptedServer) -> None:
        client = make_client(server)
        assert client.track("auth.login.failure", actor_id="user-2", email="a@example.com").ok
        base = {"event": "auth.login.success", "actor_id": "user-3"}
        assert client.track(base, actor_id="user-4").ok and base["actor_id"] == "user-3"
        assert client.track(event="auth.logout", actor_id="user-5").ok
        sent = [r["body"] for r in server.requests()]
        assert (sent[2]["event"], sent[2]["actor_id"]) == ("auth.logout", "user-5")
        assert {k: sent[0][k] for k in ("event", "actor_id", "email")} == {"event": "auth.login.failure", "actor_id": "user-2", "email": "a@example.com"}
        assert (sent[1]["event"], sent[1]["actor_id"]) == ("auth.login.success", "user-4")

    def test_datetimes_are_sent_as_iso_8601(self, server: ScriptedServer) -> None:
        moment = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
        make_client(server).track({"event": "custom.thing.done", "timestamp": moment})
        assert server.requests()[0]["body"]["timestamp"] == "2026-01-02T03:04:05+00:00"

    def test_a_buffered_event_is_sent_as_it_was_when_tracked(self, server: ScriptedServer) -> None:
        client = make_client(server, buffered=True, flush_interval=3600)
        event = {"event": "data.exported", "metadata": {"rows": 10}}
        client.track(event)
        event["metadata"]["rows"] = 99999
        client.close()
        assert server.requests()[0]["body"]["events"][0]["metadata"] == {"rows": 10}

    def test_an_event_that_cannot_be_json_is_rejected_without_a_request(self, server: ScriptedServer) -> None:
        client = make_client(server)
        assert client.track({"event": "custom.x.y", "metadata": {"ratio": float("nan")}}).outcome is vigil.Outcome.REJECTED
        circular: Dict[str, Any] = {"event": "custom.x.y"}
        circular["metadata"] = circular
        assert client.track(circular).outcome is vigil.Outcome.REJECTED
        assert server.requests() == []

    def test_an_event_that_is_not_a_mapping_is_a_rejected_result(self, server: ScriptedServer) -> None:
        client = make_client(server)
        result = client.track(["not", "an", "event"])  # type: ignore[arg-type]
        assert result.outcome is vigil.Outcome.REJECTED and result.status is None
        assert client.track_batch([{"event": "auth.logout"}, 42]) == vigil.BatchResult(rejected=2)  # type: ignore[list-item]
        assert client.stats().rejected == 3
        assert server.requests() == []

    def test_an_unreachable_service_is_a_failed_result(self) -> None:
        client = vigil.Client(KEY, base_url="http://127.0.0.1:9", max_retries=1, sleep=lambda _s: None)
        result = client.track({"event": "auth.logout"})
        assert (result.outcome, result.status, result.risk) == (vigil.Outcome.FAILED, None, None)
        assert client.stats().retries == 1 and client.stats().failed == 1


class TestRaiseErrors:
    def test_rejected_and_failed_events_raise_delivery_error(self, server: ScriptedServer) -> None:
        client = make_client(server, raise_errors=True, max_retries=0)
        server.script({"status": 400, "body": {"error": "INVALID_EVENT", "message": "bad"}}, {"status": 503})
        with pytest.raises(vigil.DeliveryError) as rejected:
            client.track({"event": "Not.Valid"})
        assert rejected.value.result.outcome is vigil.Outcome.REJECTED and rejected.value.result.status == 400
        with pytest.raises(vigil.DeliveryError) as failed:
            client.track({"event": "auth.logout"})
        assert failed.value.result.status == 503 and not isinstance(failed.value, vigil.RateLimitedError)

    def test_a_429_raises_rate_limited_error_and_cooldown_drops_stay_silent(self, server: ScriptedServer) -> None:
        client = make_client(server, raise_errors=True)
        server.script(RATE_LIMITED)
        with pytest.raises(vigil.RateLimitedError):
            client.track({"event": "auth.logout"})
        assert client.track({"event": "auth.logout"}).outcome is vigil.Outcome.DROPPED
        assert len(server.requests()) == 1

    def test_an_event_that_cannot_be_sent_raises_type_or_value_error(self, server: ScriptedServer) -> None:
        client = make_client(server, raise_errors=True)
        with pytest.raises(TypeError):
            client.track(["auth.logout"])  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            client.track({"event": "custom.x.y", "metadata": {"ratio": float("inf")}})
        assert server.requests() == []


class TestRetries:
    def test_backoff_is_exponential_with_jitter_between_half_and_all(self, server: ScriptedServer) -> None:
        for draw, expected in ((0.0, [0.1, 0.2, 0.4]), (1.0, [0.2, 0.4, 0.8])):
            waits: List[float] = []
            client = make_client(server, max_retries=3, sleep=waits.append, random=lambda draw=draw: draw)
            server.script({"status": 500}, {"status": 502}, {"reset_connection": True}, {"status": 503})
            assert client.track({"event": "auth.logout"}).outcome is vigil.Outcome.FAILED
            assert waits == pytest.approx(expected)
            assert len(server.requests()) == 4 and client.stats().retries == 3

    def test_an_overload_pause_replaces_the_backoff_and_on_error_hears_of_what_is_given_up(self, server: ScriptedServer) -> None:
        waits: List[float] = []
        errors: List[vigil.VigilError] = []
        client = make_client(server, clock=FakeClock(), sleep=waits.append, on_error=errors.append)

        def overloaded(seconds: int) -> Dict[str, Any]:
            return {"status": 503, "headers": {"Retry-After": str(seconds)}, "body": {"error": "OVERLOADED", "retry_after": seconds}}

        server.script(overloaded(2), overloaded(30))
        first = client.track({"event": "auth.login.failure"})
        # The first pause (2 s) fits the 2 s timeout: waited through the sleep; the second (30 s) does not.
        assert (first.outcome, first.status) == (vigil.Outcome.FAILED, 503) and waits == [2.0]
        second = client.track({"event": "auth.login.failure"})
        assert (second.outcome, second.status) == (vigil.Outcome.FAILED, None)
        assert len(server.requests()) == 2 and len(errors) == 2
        stats = client.stats()
        assert (stats.sent, stats.failed, stats.retries, stats.dropped, stats.in_cooldown) == (1, 2, 1, 0, False)

    def test_a_cooldown_started_by_another_thread_stops_the_retries(self, server: ScriptedServer) -> None:
        client: vigil.Client

        def other_thread_meets_429(_seconds: float) -> None:
            server.script(RATE_LIMITED)
            other = threading.Thread(target=client.track, args=({"event": "auth.logout"},))
            other.start()
            other.join()

        client = make_client(server, sleep=other_thread_meets_429)
        server.script({"status": 500})
        assert client.track({"event": "auth.login.failure"}).outcome is vigil.Outcome.DROPPED
        assert [r["body"]["event"] for r in server.requests()] == ["auth.login.failure", "auth.logout"]
        assert client.stats().retries == 0 and client.stats().in_cooldown


class TestBuffered:
    def test_events_buffered_while_a_429_is_on_its_way_are_dropped_with_the_buffer(self, server: ScriptedServer) -> None:
        clock = FakeClock()
        client = make_client(server, buffered=True, buffer_size=2, clock=clock)
        server.script({**RATE_LIMITED, "delay_ms": 500})
        client.track({"event": "auth.logout", "actor_id": "a"})
        client.track({"event": "auth.logout", "actor_id": "b"})  # fills the buffer: the batch leaves
        client.track({"event": "auth.logout", "actor_id": "c"})  # buffered before the 429 arrives
        assert client.wait_idle(10)
        assert client.stats().rate_limited == 2 and client.stats().dropped == 1
        assert clock.pending() == 0, "the emptied buffer has no flush timer left"
        clock.advance(60_000)
        client.flush()
        assert len(server.requests()) == 1
        client.close()

    def test_the_system_clock_flushes_after_the_interval(self, server: ScriptedServer) -> None:
        client = make_client(server, buffered=True, flush_interval=0.05)
        result = client.track({"event": "data.exported", "actor_id": "u"})
        assert result.outcome is vigil.Outcome.BUFFERED and result.risk is None
        [request] = wait_for_requests(server, 1)
        assert request["path"] == "/v1/events/batch" and event_ids([request]) == [result.event_id]
        client.close()

    def test_close_flushes_and_stops_the_sender_thread_then_sends_directly(self, server: ScriptedServer) -> None:
        client = make_client(server, buffered=True, flush_interval=3600)
        client.track({"event": "auth.logout"})
        assert any(t.name == "vigil-sender" for t in threading.enumerate())
        client.close()
        assert not any(t.name == "vigil-sender" and t.is_alive() for t in threading.enumerate())
        assert len(server.requests()) == 1
        after = client.track({"event": "auth.logout"})
        assert after.outcome is vigil.Outcome.ACCEPTED and after.risk is not None
        assert len(server.requests()) == 1

    def test_the_context_manager_closes(self, server: ScriptedServer) -> None:
        with make_client(server, buffered=True, flush_interval=3600) as client:
            client.track_batch([{"event": "auth.logout"}] * 3)
            assert server.requests() == []
        assert event_ids(server.requests()) and client.stats().accepted == 3


class TestThreads:
    def test_threads_sharing_a_buffered_client_lose_and_duplicate_nothing(self, server: ScriptedServer) -> None:
        client = make_client(server, buffered=True, buffer_size=7, batch_size=5, flush_interval=3600)
        produced: List[str] = []
        lock = threading.Lock()

        def produce(n: int) -> None:
            for i in range(25):
                result = client.track({"event": "api.request", "actor_id": f"t{n}-{i}"})
                with lock:
                    produced.append(result.event_id)

        threads = [threading.Thread(target=produce, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert client.flush(30)
        sent = event_ids(server.requests())
        assert sorted(sent) == sorted(produced) and len(set(sent)) == 200
        assert client.stats().accepted == 200
        client.close()

    def test_threads_sharing_a_direct_client_all_see_one_cooldown(self, server: ScriptedServer) -> None:
        client = make_client(server)
        server.script(RATE_LIMITED)
        client.track({"event": "auth.logout"})
        outcomes: List[vigil.Outcome] = []
        threads = [threading.Thread(target=lambda: outcomes.append(client.track({"event": "auth.logout"}).outcome)) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert outcomes == [vigil.Outcome.DROPPED] * 16
        assert len(server.requests()) == 1 and client.stats().dropped == 16


class TestRequestContext:
    def test_bound_fields_fill_events_that_do_not_set_them(self, server: ScriptedServer) -> None:
        client = make_client(server)
        with vigil.request_context(ip="203.0.113.9", user_agent="curl/8", request={"method": "POST", "path": "/login"}):
            client.track({"event": "auth.login.failure"})
            client.track({"event": "auth.login.failure", "ip": "198.51.100.1"})
        client.track({"event": "auth.logout"})
        bodies = [r["body"] for r in server.requests()]
        assert bodies[0]["ip"] == "203.0.113.9" and bodies[0]["request"] == {"method": "POST", "path": "/login"}
        assert bodies[0]["user_agent"] == "curl/8"
        assert bodies[1]["ip"] == "198.51.100.1"
        assert "ip" not in bodies[2] and "request" not in bodies[2]


def run_python(code: str, server: ScriptedServer) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = {**os.environ, "PYTHONPATH": src, "VIGIL_TEST_URL": server.url}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=60)


class TestProcess:
    def test_the_buffer_is_flushed_when_the_interpreter_exits(self, server: ScriptedServer) -> None:
        done = run_python(
            """
            import os, vigil
            client = vigil.Client("vgl_sk_x", base_url=os.environ["VIGIL_TEST_URL"], buffered=True, flush_interval=3600)
            for i in range(3):
                client.track({"event": "auth.logout", "actor_id": f"u{i}"})
            """,
            server,
        )
        assert done.returncode == 0, done.stderr
        [request] = server.requests()
        assert [e["actor_id"] for e in request["body"]["events"]] == ["u0", "u1", "u2"]

    @pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
    def test_a_forked_child_sends_its_own_events_only(self, server: ScriptedServer) -> None:
        done = run_python(
            """
            import os, vigil
            client = vigil.Client("vgl_sk_x", base_url=os.environ["VIGIL_TEST_URL"], buffered=True, flush_interval=3600)
            client.track({"event": "auth.logout", "actor_id": "parent-1"})
            client.flush()
            client.track({"event": "auth.logout", "actor_id": "parent-2"})
            pid = os.fork()
            if pid == 0:
                client.track({"event": "auth.logout", "actor_id": "child"})
                client.flush(10)
                os._exit(0 if client.stats().accepted == 2 else 1)
            _, status = os.waitpid(pid, 0)
            assert status == 0, status
            client.close()
            """,
            server,
        )
        assert done.returncode == 0, done.stderr
        batches = [[e["actor_id"] for e in r["body"]["events"]] for r in server.requests()]
        assert batches == [["parent-1"], ["child"], ["parent-2"]]
