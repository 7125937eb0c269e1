"""The Vigil client: direct or buffered delivery, retries, and the one-hour cooldown on 429."""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import datetime
import json
import logging
import os
import random as _random
import threading
import time
import uuid
import weakref
from collections import deque
from typing import Any, Callable, ContextManager, Deque, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._version import __version__
from .context import current_request
from .errors import DeliveryError, RateLimitedError, VigilError
from .results import BatchResult, Outcome, RiskDecision, Stats, TrackResult
from .pacing import Pacer
from .transport import Cancellable, Clock, HTTPAnswer, SystemClock, Transport, urllib_transport

__all__ = ["Vigil", "Client", "COOLDOWN", "PROBE_PERIOD", "MAX_OVERLOAD_PAUSE"]

logger = logging.getLogger("vigil")

COOLDOWN = 3600.0
"""Seconds of silence after the first 429 (probes excepted)."""
PROBE_PERIOD = 300.0
"""During a cooldown, at most one probe per period of this many seconds, counted from its start."""
MAX_OVERLOAD_PAUSE = 60.0
"""The longest pause, in seconds, an overload answer (503 with Retry-After) imposes, whatever it asks."""

# The cooldown arithmetic runs on whole milliseconds of the clock, so that period boundaries
# are exact whatever the floating-point seconds the clock returns.
_COOLDOWN_MS = round(COOLDOWN * 1000)
_PROBE_PERIOD_MS = round(PROBE_PERIOD * 1000)
_MAX_OVERLOAD_PAUSE_MS = round(MAX_OVERLOAD_PAUSE * 1000)

_SEND, _PROBE, _DROP = "send", "probe", "drop"

Event = Mapping[str, Any]


def uuid7() -> str:
    """A UUID version 7: Unix milliseconds then random bits, so ids sort by creation time."""
    value = (time.time_ns() // 1_000_000 & (1 << 48) - 1) << 80 | int.from_bytes(os.urandom(10), "big")
    value = value & ~(0xF << 76) | 0x7 << 76
    value = value & ~(0x3 << 62) | 0x2 << 62
    return str(uuid.UUID(int=value))


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime.datetime, datetime.date)):
        return value.isoformat()
    return str(value)


def _overload_pause_ms(answer: HTTPAnswer) -> Optional[int]:
    """The pause an overload answer asks for: a 503 whose ``Retry-After`` is a whole number of
    seconds, or without that field a JSON body whose ``retry_after`` is one. None for every other
    answer, a 503 without either included (an ordinary 5xx)."""
    if answer.status != 503:
        return None
    seconds: Optional[int] = None
    header = answer.headers.get("retry-after")
    if header is not None:
        if header.strip().isdigit() and header.strip().isascii():
            seconds = int(header.strip())
    else:
        try:
            value = json.loads(answer.body).get("retry_after")
        except (ValueError, AttributeError):
            value = None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            seconds = value
    return None if seconds is None else min(seconds * 1000, _MAX_OVERLOAD_PAUSE_MS)


@dataclasses.dataclass(frozen=True)
class _Delivery:
    outcome: Outcome
    status: Optional[int]
    body: bytes


class _Worker:
    """The background thread of buffered mode: sends jobs one after the other, in order."""

    def __init__(self, client: "Vigil") -> None:
        self._client = weakref.ref(client)
        self._jobs: Deque[Tuple[str, Any]] = deque()
        self._pending = 0
        self._stopping = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="vigil-sender", daemon=True)
        self._thread.start()

    def submit(self, kind: str, payload: Any) -> None:
        with self._cond:
            self._jobs.append((kind, payload))
            self._pending += 1
            self._cond.notify_all()

    def wait_idle(self, timeout: Optional[float]) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._pending == 0, timeout)

    def stop(self, timeout: Optional[float]) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._jobs or self._stopping)
                if not self._jobs:
                    return
                kind, payload = self._jobs.popleft()
            client = self._client()
            try:
                if client is not None:
                    client._run_job(kind, payload)
            except Exception:  # noqa: BLE001 - the sender thread outlives any bad event
                logger.exception("vigil: unexpected error while sending events")
            finally:
                del client
                with self._cond:
                    self._pending -= 1
                    self._cond.notify_all()


class Vigil:
    """Sends security events to Vigil.

    ``track`` and ``track_batch`` never raise into the caller (unless ``raise_errors=True``):
    every outcome is a value, and the totals are in :meth:`stats`.

    In direct mode (the default) a call sends at once and returns what the service said,
    the risk decision included. In buffered mode (``buffered=True``) a call returns at once;
    a background thread sends the buffer through the batch endpoint when it holds
    ``buffer_size`` events, ``flush_interval`` seconds after its first event, on
    :meth:`flush`, on :meth:`close` and when the interpreter exits.

    Sends are paced to the rate-limit policies the service announces (``RateLimit-Policy``):
    a send that would go over one waits until there is room, at most ``max_pacing_delay_ms``;
    past that the event is dropped on the client and counted ``paced_dropped``, so that a burst
    never meets a 429.

    On the first 429 the client sends nothing for one hour except one probe per 5-minute
    period: the first event produced in that period, sent alone. A probe answered with
    anything but 429 ends the cooldown at once. Events produced during the cooldown are
    dropped and counted, never queued.

    A 503 with Retry-After (the service is overloaded) pauses every send for that long, at most
    a minute: a send waits for the end of the pause when it fits ``timeout``, else its events are
    given up (``failed``); buffered mode keeps its buffer and sends it after the pause.

    One client is meant to be shared by every thread of a process.
    """

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = "http://localhost:8080",
        timeout: float = 2.0,
        max_retries: int = 2,
        batch_size: int = 100,
        buffered: bool = False,
        buffer_size: int = 100,
        flush_interval: float = 5.0,
        retry_base: float = 0.2,
        raise_errors: bool = False,
        on_error: Optional[Callable[[VigilError], None]] = None,
        max_pacing_delay_ms: int = 1000,
        clock: Optional[Clock] = None,
        sleep: Optional[Callable[[float], None]] = None,
        random: Optional[Callable[[], float]] = None,
        transport: Optional[Transport] = None,
    ) -> None:
        """
        :param api_key: secret (``vgl_sk_...``) or publishable (``vgl_pk_...``) key.
        :param base_url: where the service listens.
        :param timeout: seconds to wait for the connection and for each read of an answer.
        :param max_retries: retries after the first attempt for 5xx answers, network errors and timeouts.
        :param batch_size: events per batch request, the plan's batch size (Starter 50, Pro and Business 100).
        :param buffered: collect events and send them in batches from a background thread.
        :param buffer_size: buffered mode: send when this many events wait.
        :param flush_interval: buffered mode: send this many seconds after the first event entered an empty buffer.
        :param retry_base: retry ``n`` (from 0) waits a random time between half and all of ``retry_base * 2**n`` seconds.
        :param raise_errors: raise :class:`vigil.DeliveryError` (or :class:`vigil.RateLimitedError`)
            when an event is rejected, given up or rate limited, ``TypeError`` for an event that is
            not a mapping and ``ValueError`` for one that cannot be JSON, instead of returning the outcome.
        :param on_error: called with a :class:`vigil.VigilError` for every event or chunk that was
            rejected, given up or rate limited, and for an event that cannot be sent; it never
            sees dropped events (a cooldown drops thousands). Exceptions it raises are logged.
        :param max_pacing_delay_ms: the longest a send waits for room in the service's rate-limit
            policies; an event that would wait longer is dropped (``paced_dropped``). 0: never wait.
        :param clock: time source (``now()`` and ``call_later()``); the default reads ``time.monotonic``.
        :param sleep: waits between retries; the default is ``time.sleep``.
        :param random: jitter source in [0, 1); the default is ``random.random``.
        :param transport: sends one request; the default uses ``urllib``.
        """
        self._url = base_url.rstrip("/")
        self._headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {api_key}",
            "User-Agent": f"vigil-python/{__version__}",
        }
        self._timeout = timeout
        self._timeout_ms = round(timeout * 1000)
        self._max_retries = max(0, max_retries)
        self._batch_size = max(1, batch_size)
        self._buffered = buffered
        self._buffer_size = max(1, buffer_size)
        self._flush_interval = flush_interval
        self._retry_base = retry_base
        self._raise_errors = raise_errors
        self._on_error = on_error
        self._pacer = Pacer(max_pacing_delay_ms)
        # Until an answer has told the policies, one request at a time.
        self._first_send = threading.Lock()
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._sleep = sleep if sleep is not None else time.sleep
        self._random = random if random is not None else _random.random
        self._transport = transport if transport is not None else urllib_transport

        self._lock = threading.RLock()
        self._cooldown_start: Optional[int] = None
        self._paused_until: Optional[int] = None  # end of the overload pause (clock ms)
        self._probed_period = 0
        self._batch_unavailable = False
        self._buffer: List[Dict[str, Any]] = []
        self._timer: Optional[Cancellable] = None
        self._worker: Optional[_Worker] = None
        self._closed = False
        self._counts = dict.fromkeys(
            ("sent", "accepted", "rejected", "failed", "rate_limited", "dropped", "paced", "paced_dropped", "retries", "probes"), 0
        )
        self._at_exit: Optional[Callable[[], None]] = None
        self._stop_worker_on_collect: Optional[weakref.finalize] = None
        if hasattr(os, "register_at_fork"):
            this = weakref.ref(self)
            os.register_at_fork(after_in_child=lambda: _after_fork(this))

    # Public interface

    def track(self, event: Union[str, Event, None] = None, /, **fields: Any) -> TrackResult:
        """Sends one event and returns what happened to it.

        ``event`` is the event type with its fields as keywords
        (``track("auth.login.failure", actor_id="user-42")``), or a mapping of every field
        whose keys the keywords add to or override, or absent (``track(event="...", ...)``).

        Direct mode waits for the service's answer: an accepted event comes with its risk
        decision. Buffered mode returns at once with outcome ``buffered``. An ``event_id``
        is added when the event has none; the mapping passed in is not modified.
        """
        event_id = ""
        try:
            if event is None:
                event = fields
            elif isinstance(event, str):
                event = {"event": event, **fields}
            elif fields and isinstance(event, Mapping):
                event = {**event, **fields}
            prepared = self._prepare(event)
            event_id = prepared["event_id"]
            buffer_full = False
            with self._lock:
                gate = self._gate()
                if gate == _DROP:
                    self._counts["dropped"] += 1
                    return TrackResult(Outcome.DROPPED, None, None, event_id)
                if self._buffering:
                    if gate == _SEND:
                        buffer_full = self._enqueue([prepared]) > 0
                    else:
                        self._submit("probe", prepared)
                    if not buffer_full:
                        return TrackResult(Outcome.BUFFERED, None, None, event_id)
            if buffer_full:
                result = TrackResult(Outcome.FAILED, None, None, event_id)
                self._report(DeliveryError(result))
            else:
                result = self._deliver_one(prepared, probe=gate == _PROBE)
        except Exception as error:  # noqa: BLE001 - a security signal never breaks the caller's request
            if self._raise_errors:
                raise
            logger.warning("vigil: event not sent: %s", error)
            with self._lock:
                self._counts["rejected"] += 1
            self._report(VigilError(f"event not sent: {error}"))
            return TrackResult(Outcome.REJECTED, None, None, event_id)
        if self._raise_errors:
            _raise_for(result)
        return result

    def track_batch(self, events: Sequence[Event]) -> BatchResult:
        """Sends events in chunks of ``batch_size`` through the batch endpoint.

        When the plan has no batch endpoint (Free answers 403) the same events go one by one,
        and so do later batches. Returns how many events ended in each outcome.
        """
        try:
            prepared = [self._prepare(e) for e in events]
            if not prepared:
                return BatchResult()
            given_up = -1
            with self._lock:
                gate = self._gate()
                if gate == _SEND and self._buffering:
                    given_up = self._enqueue(prepared)
                elif gate != _SEND:
                    # In a cooldown the first event is this period's probe, or nothing goes.
                    dropped = len(prepared) - 1 if gate == _PROBE else len(prepared)
                    self._counts["dropped"] += dropped
                    if gate == _PROBE and self._buffering:
                        self._submit("probe", prepared[0])
                        return BatchResult(dropped=dropped, buffered=1)
                    if gate == _DROP:
                        return BatchResult(dropped=dropped)
            if given_up >= 0:
                if given_up > 0:
                    self._report(VigilError(f"{given_up} events given up: the buffer is full during an overload pause"))
                return BatchResult(failed=given_up, buffered=len(prepared) - given_up)
            if gate == _PROBE:
                probe = self._deliver_one(prepared[0], probe=True)
                return _add(BatchResult(dropped=dropped), probe.outcome, 1)
            return self._send_events(prepared)
        except Exception as error:  # noqa: BLE001 - a security signal never breaks the caller's request
            if self._raise_errors:
                raise
            logger.warning("vigil: events not sent: %s", error)
            count = len(events) if isinstance(events, Sequence) else 0
            with self._lock:
                self._counts["rejected"] += count
            self._report(VigilError(f"events not sent: {error}"))
            return BatchResult(rejected=count)

    def flush(self, timeout: Optional[float] = None) -> bool:
        """Sends what the buffer holds and waits until everything handed over so far is
        delivered or given up. Returns False if ``timeout`` seconds passed first."""
        with self._lock:
            self._start_flush()
        return self.wait_idle(timeout)

    def wait_idle(self, timeout: Optional[float] = None) -> bool:
        """Waits until the background thread has nothing left to send (the buffer itself is not flushed)."""
        worker = self._worker
        return True if worker is None else worker.wait_idle(timeout)

    def close(self, timeout: Optional[float] = 10.0) -> None:
        """Flushes the buffer and stops the background thread. Later events are sent directly."""
        with self._lock:
            if self._closed:
                return
            self._start_flush()
            self._closed = True
            worker, self._worker = self._worker, None
            at_exit, self._at_exit = self._at_exit, None
        if worker is not None:
            worker.wait_idle(timeout)
            worker.stop(timeout)
        if at_exit is not None:
            atexit.unregister(at_exit)

    def stats(self) -> Stats:
        """Totals since the client was created, and whether it is in a cooldown now."""
        with self._lock:
            return Stats(**self._counts, in_cooldown=self._in_cooldown())

    def __enter__(self) -> "Vigil":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Delivery

    @property
    def _buffering(self) -> bool:
        return self._buffered and not self._closed

    def _prepare(self, event: Event) -> Dict[str, Any]:
        if not isinstance(event, Mapping):
            raise TypeError(f"an event is a mapping, not {type(event).__name__}")
        # A JSON round trip: the event is checked once here, sent as the caller had it when the
        # call was made (a buffered event is not changed by later edits), and datetimes become ISO 8601.
        prepared: Dict[str, Any] = json.loads(json.dumps({**current_request(), **event}, default=_json_default, allow_nan=False))
        if not prepared.get("event_id"):
            prepared["event_id"] = uuid7()
        return prepared

    def _now_ms(self) -> int:
        return round(self._clock.now() * 1000)

    def _in_cooldown(self) -> bool:
        if self._cooldown_start is not None and self._now_ms() - self._cooldown_start >= _COOLDOWN_MS:
            self._cooldown_start = None
            logger.info("vigil: cooldown over, delivery resumes")
        return self._cooldown_start is not None

    def _gate(self) -> str:
        """Whether an event produced now is sent, sent as this period's probe, or dropped."""
        if not self._in_cooldown():
            return _SEND
        assert self._cooldown_start is not None
        period = (self._now_ms() - self._cooldown_start) // _PROBE_PERIOD_MS
        if period <= self._probed_period:
            return _DROP
        self._probed_period = period
        return _PROBE

    def _pause_left_ms(self) -> int:
        """Milliseconds left of the overload pause (0 when there is none); callers hold the lock."""
        if self._paused_until is None:
            return 0
        left = self._paused_until - self._now_ms()
        if left <= 0:
            self._paused_until = None
        return max(0, left)

    def _enter_cooldown(self) -> None:
        with self._lock:
            if self._in_cooldown():
                return
            self._cooldown_start = self._now_ms()
            self._probed_period = 0
            self._counts["dropped"] += len(self._take_buffer())
        logger.warning("vigil: rate limited (429): events are dropped for one hour, with a probe every 5 minutes")

    def _end_cooldown(self) -> None:
        with self._lock:
            if self._cooldown_start is not None:
                self._cooldown_start = None
                logger.info("vigil: probe answered, delivery resumes")

    def _send_events(self, events: Sequence[Dict[str, Any]]) -> BatchResult:
        totals = dict.fromkeys(("accepted", "rejected", "failed", "rate_limited", "dropped"), 0)
        i = 0
        counted = 0  # events before this index went out in a batch request: already counted sent
        while i < len(events):
            with self._lock:
                if self._in_cooldown():
                    # A 429 stops the call: what is left is dropped, not queued.
                    totals["dropped"] += len(events) - i
                    self._counts["dropped"] += len(events) - i
                    break
                single = self._batch_unavailable
            if single:
                totals[self._deliver_one(events[i], probe=False, count_sent=i >= counted).outcome.value] += 1
                i += 1
                continue
            chunk = list(events[i : i + self._batch_size])
            delivery = self._post("/v1/events/batch", {"events": chunk}, probe=False)
            if delivery.status == 403:
                # The plan has no batch endpoint (Free): the same events go one by one, now and from now on.
                with self._lock:
                    self._batch_unavailable = True
                counted = i + len(chunk)
                continue
            with self._lock:
                self._counts[delivery.outcome.value] += len(chunk)
            totals[delivery.outcome.value] += len(chunk)
            if delivery.outcome in (Outcome.REJECTED, Outcome.FAILED, Outcome.RATE_LIMITED):
                status = "no answer" if delivery.status is None else f"HTTP {delivery.status}"
                self._report(VigilError(f"a batch of {len(chunk)} events {delivery.outcome.value} ({status})"))
            i += len(chunk)
        return BatchResult(**totals)

    def _deliver_one(self, event: Dict[str, Any], probe: bool, count_sent: bool = True) -> TrackResult:
        delivery = self._post("/v1/events", event, probe, count_sent)
        with self._lock:
            self._counts[delivery.outcome.value] += 1
        risk = None
        if delivery.outcome is Outcome.ACCEPTED:
            try:
                risk = RiskDecision.from_answer(json.loads(delivery.body))
            except ValueError:
                risk = None
        result = TrackResult(delivery.outcome, delivery.status, risk, event["event_id"])
        if delivery.outcome is Outcome.RATE_LIMITED:
            self._report(RateLimitedError(result))
        elif delivery.outcome in (Outcome.REJECTED, Outcome.FAILED):
            self._report(DeliveryError(result))
        return result

    def _post(self, path: str, payload: Any, probe: bool, count_sent: bool = True) -> _Delivery:
        """One request and its retries, each attempt paced. A probe is a single attempt whose
        answer decides the cooldown. ``count_sent`` is False for events already counted ``sent``
        (the single-event fallback of a batch the service has seen)."""
        body = json.dumps(payload, separators=(",", ":")).encode("utf-8")
        events = len(payload["events"]) if path.endswith("/batch") else 1
        attempt = 0
        status: Optional[int] = None
        while True:
            # During an overload pause an attempt waits for its end only when that fits its timeout.
            with self._lock:
                paused = self._pause_left_ms()
            if paused > self._timeout_ms:
                return _Delivery(Outcome.FAILED, status, b"")
            if paused > 0:
                self._sleep(paused / 1000)
            elif attempt > 0:
                self._sleep(self._retry_base * 2 ** (attempt - 1) * (0.5 + self._random() / 2))
            if attempt > 0:
                with self._lock:
                    # Another thread may have met a 429 meanwhile: a cooldown stops the retries too.
                    if self._in_cooldown():
                        return _Delivery(Outcome.DROPPED, status, b"")
            # Until an answer has named the policies, one attempt at a time: the others then pace
            # to what the service announced, not to the smallest plan.
            gate: ContextManager[Any] = contextlib.nullcontext()
            if not self._pacer.learned:
                gate = self._first_send
            with gate:
                outcome = self._attempt(path, body, events, probe, attempt, count_sent)
            if isinstance(outcome, _Delivery):
                return outcome
            status = outcome
            attempt += 1

    def _attempt(self, path: str, body: bytes, events: int, probe: bool, attempt: int, count_sent: bool) -> Union[_Delivery, Optional[int]]:
        """One paced attempt: its delivery, or the status (None: no answer) of one to retry."""
        with self._lock:
            taken_at = self._now_ms()
            delay = self._pacer.reserve(taken_at, events)
            if delay is None:
                if attempt > 0:
                    return _Delivery(Outcome.FAILED, None, b"")
                # Waiting for room would take longer than allowed: dropped here, not sent into a 429.
                self._counts["paced_dropped"] += events
                return _Delivery(Outcome.DROPPED, None, b"")
            if attempt > 0:
                self._counts["retries"] += 1
            else:
                if delay > 0:
                    self._counts["paced"] += events
                if probe:
                    self._counts["probes"] += 1
                if count_sent:
                    self._counts["sent"] += events
        if delay > 0:
            self._sleep(delay / 1000)
        answer = self._transport(self._url + path, self._headers, body, self._timeout)
        with self._lock:
            self._pacer.settle(events, taken_at + delay, self._now_ms())
        status = answer.status if isinstance(answer, HTTPAnswer) else None
        if isinstance(answer, HTTPAnswer):
            pause = _overload_pause_ms(answer)
            with self._lock:
                self._pacer.learn(answer.headers)
                # Any answer but an overload answer means the service takes requests again.
                self._paused_until = None if pause is None else max(self._paused_until or 0, self._now_ms() + pause)
            if answer.status == 429:
                self._enter_cooldown()
                return _Delivery(Outcome.RATE_LIMITED, 429, answer.body)
            if probe:
                self._end_cooldown()
            if answer.status < 300:
                return _Delivery(Outcome.ACCEPTED, status, answer.body)
            if answer.status < 500:
                return _Delivery(Outcome.REJECTED, status, answer.body)
        if probe or attempt >= self._max_retries:
            return _Delivery(Outcome.FAILED, status, b"")
        return status

    def _report(self, error: VigilError) -> None:
        """Hands an error to ``on_error``; a failing hook is logged, never raised into the caller."""
        if self._on_error is None:
            return
        try:
            self._on_error(error)
        except Exception:  # noqa: BLE001 - the application's hook must not break delivery
            logger.exception("vigil: on_error raised")

    # Buffered mode (callers hold the lock)

    def _enqueue(self, events: Sequence[Dict[str, Any]]) -> int:
        """Buffers events; returns how many were given up (``failed``) because a pause holds a full buffer."""
        self._start_worker()
        given_up = 0
        for event in events:
            # A full buffer is only kept while an overload pause holds its flush: it grows no further.
            if len(self._buffer) >= self._buffer_size:
                given_up += 1
                continue
            self._buffer.append(event)
            if len(self._buffer) >= self._buffer_size:
                self._flush_when_unpaused()
        if self._buffer and self._timer is None:
            self._timer = self._clock.call_later(self._flush_interval, self._on_timer)
        self._counts["failed"] += given_up
        return given_up

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            self._flush_when_unpaused()

    def _flush_when_unpaused(self) -> None:
        """A flush by count or by time: at once, or at the end of an overload pause longer than the timeout."""
        left = self._pause_left_ms()
        if left <= self._timeout_ms:
            self._start_flush()
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._clock.call_later(left / 1000, self._on_timer)

    def _take_buffer(self) -> List[Dict[str, Any]]:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        events, self._buffer = self._buffer, []
        return events

    def _start_flush(self) -> None:
        events = self._take_buffer()
        if events:
            self._submit("events", events)

    def _submit(self, kind: str, payload: Any) -> None:
        if self._closed:
            # After close() nothing runs in the background: the caller's thread sends.
            self._run_job(kind, payload)
            return
        self._start_worker().submit(kind, payload)

    def _start_worker(self) -> _Worker:
        """The sender thread, started with the first buffered event, and the exit hook that flushes."""
        if self._worker is None:
            self._worker = _Worker(self)
            # A client dropped without close() takes its sender thread with it.
            self._stop_worker_on_collect = weakref.finalize(self, self._worker.stop, 0)
            this = weakref.ref(self)

            def close_at_exit() -> None:
                client = this()
                if client is not None:
                    client.close()

            self._at_exit = close_at_exit
            atexit.register(close_at_exit)
        return self._worker

    def _run_job(self, kind: str, payload: Any) -> None:
        if kind == "probe":
            self._deliver_one(payload, probe=True)
        else:
            self._send_events(payload)

    def _reset_after_fork(self) -> None:
        # The parent process owns the buffered events, and its sender thread (whose lock may have
        # been held at the fork) does not exist here.
        if self._stop_worker_on_collect is not None:
            self._stop_worker_on_collect.detach()
            self._stop_worker_on_collect = None
        self._lock = threading.RLock()
        self._buffer = []
        self._timer = None
        self._worker = None
        self._at_exit = None


def _after_fork(ref: "weakref.ReferenceType[Vigil]") -> None:
    client = ref()
    if client is not None:
        client._reset_after_fork()


def _add(result: BatchResult, outcome: Outcome, n: int) -> BatchResult:
    return dataclasses.replace(result, **{outcome.value: getattr(result, outcome.value) + n})


def _raise_for(result: TrackResult) -> None:
    if result.outcome is Outcome.RATE_LIMITED:
        raise RateLimitedError(result)
    if result.outcome in (Outcome.REJECTED, Outcome.FAILED):
        raise DeliveryError(result)


Client = Vigil
"""The earlier name of :class:`Vigil`."""
