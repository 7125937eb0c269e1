"""Test helpers: the fake clock, and the Node processes of the conformance kit."""

from __future__ import annotations

import json
import pathlib
import subprocess
import threading
import urllib.request
from typing import Any, Callable, Dict, List, Optional, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[3]
KIT = ROOT / "clients" / "conformance"


class FakeClock:
    """Virtual time in whole milliseconds, starting at 1,800,000,000,000: ``advance`` moves it
    and runs the timers that came due, in due order, on the calling thread."""

    def __init__(self, start_ms: int = 1_800_000_000_000) -> None:
        self._ms = start_ms
        self._timers: List[Dict[str, Any]] = []
        self._next_id = 0
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._ms / 1000

    def call_later(self, delay: float, callback: Callable[[], None]) -> "_Handle":
        with self._lock:
            timer = {"due": self._ms + round(delay * 1000), "fn": callback, "id": self._next_id}
            self._next_id += 1
            self._timers.append(timer)
        return _Handle(self, timer)

    def advance(self, ms: int) -> None:
        target = self._ms + ms
        while True:
            with self._lock:
                due = sorted((t for t in self._timers if t["due"] <= target), key=lambda t: (t["due"], t["id"]))
                if not due:
                    break
                timer = due[0]
                self._timers.remove(timer)
                self._ms = timer["due"]
            timer["fn"]()
        self._ms = target

    def pending(self) -> int:
        with self._lock:
            return len(self._timers)


class _Handle:
    def __init__(self, clock: FakeClock, timer: Dict[str, Any]) -> None:
        self._clock, self._timer = clock, timer

    def cancel(self) -> None:
        with self._clock._lock:
            if self._timer in self._clock._timers:
                self._clock._timers.remove(self._timer)


class NodeProcess:
    """A Node script of the conformance kit that prints one JSON line when ready and stops
    when its stdin closes."""

    def __init__(self, script: str, args: Sequence[str] = ()) -> None:
        self.process = subprocess.Popen(
            ["node", str(KIT / script), *args],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            self.process.wait(10)
            raise RuntimeError(f"{script} exited with {self.process.returncode} before it was ready")
        self.info: Dict[str, Any] = json.loads(line)

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            self.process.wait(5)


class ScriptedServer:
    """Control interface of the kit's scripted server."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    def _call(self, path: str, body: Optional[Any] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method="GET" if body is None else "POST")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def reset(self) -> None:
        self._call("/__reset", {})

    def script(self, *responses: Dict[str, Any]) -> None:
        self._call("/__script", {"responses": list(responses)})

    def requests(self) -> List[Dict[str, Any]]:
        return self._call("/__requests")["requests"]
