"""One HTTP attempt over the standard library, and the clock the client reads."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Mapping, Protocol, Tuple, Union


@dataclass(frozen=True)
class HTTPAnswer:
    """The service answered, with any status."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    """The answer's header fields (the client reads the rate-limit policies from them)."""


@dataclass(frozen=True)
class NoAnswer:
    """No answer at all: connection refused or reset, DNS failure, timeout."""

    reason: str


Answer = Union[HTTPAnswer, NoAnswer]

Transport = Callable[[str, Mapping[str, str], bytes, float], Answer]
"""``transport(url, headers, body, timeout) -> Answer``: one POST; never raises."""


class _KeepMethod(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer: following it would turn the POST into a GET without its body."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


_opener = urllib.request.build_opener(_KeepMethod)


def urllib_transport(url: str, headers: Mapping[str, str], body: bytes, timeout: float) -> Answer:
    """POSTs ``body`` with ``urllib``; ``timeout`` bounds the connection and each read, in seconds."""
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")
    try:
        with _opener.open(request, timeout=timeout) as response:
            return HTTPAnswer(response.status, response.read(), _fields(response.headers.items()))
    except urllib.error.HTTPError as error:
        try:
            content = error.read()
        except (OSError, ValueError):
            content = b""
        finally:
            error.close()
        return HTTPAnswer(error.code, content, _fields(error.headers.items() if error.headers else []))
    except (socket.timeout, TimeoutError):
        return NoAnswer("timeout")
    except urllib.error.URLError as error:
        reason = error.reason
        return NoAnswer("timeout" if isinstance(reason, (socket.timeout, TimeoutError)) else str(reason))
    except (OSError, ValueError) as error:
        # Connection reset mid-answer, an answer that is not HTTP, an unusable URL.
        return NoAnswer(str(error) or type(error).__name__)
    except Exception as error:  # noqa: BLE001 - http.client raises its own exception types too
        return NoAnswer(f"{type(error).__name__}: {error}")


def _fields(items: Iterable[Tuple[str, str]]) -> Dict[str, str]:
    fields: Dict[str, str] = {}
    for name, value in items:
        key = str(name).lower()
        # Repeated fields of a structured-field list join with commas.
        fields[key] = f"{fields[key]}, {value}" if key in fields else str(value)
    return fields


class Cancellable(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    """Time as the client sees it. Tests pass a fake one to check the cooldown without waiting."""

    def now(self) -> float:
        """Seconds on a clock that never goes backwards."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        """Runs ``callback`` once, ``delay`` seconds from now, on any thread."""
        ...


class SystemClock:
    """``time.monotonic`` and daemon timer threads: a pending flush never keeps a process alive."""

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        timer = threading.Timer(delay, callback)
        timer.daemon = True
        timer.name = "vigil-flush-timer"
        timer.start()
        return timer
