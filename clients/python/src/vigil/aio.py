"""The asyncio client: the same delivery as :class:`vigil.Vigil`, awaited without blocking the loop."""

from __future__ import annotations

import asyncio
import contextvars
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, Sequence, TypeVar, Union

from .client import Event, Vigil
from .results import BatchResult, Stats, TrackResult

__all__ = ["AsyncVigil"]

T = TypeVar("T")


class AsyncVigil:
    """Sends security events to Vigil from asyncio code.

    Takes the keyword arguments of :class:`vigil.Vigil`. Each call runs the blocking part (the
    HTTP request, a pacing wait, the retry backoff) on a small thread pool of its own, so the
    event loop keeps serving while an event is on its way; the delivery rules, results and stats
    are those of the synchronous client, and one ``AsyncVigil`` is shared by every task::

        client = vigil.AsyncVigil(os.environ["VIGIL_API_KEY"], base_url="https://vigil.example.com")
        result = await client.track("auth.login.success", actor_id="user-42")
        await client.close()
    """

    def __init__(self, api_key: str, *, max_workers: int = 8, **options: Any) -> None:
        """:param max_workers: threads that send at the same time (pacing orders them anyway)."""
        self._client = Vigil(api_key, **options)
        self._executor = ThreadPoolExecutor(max_workers=max(1, max_workers), thread_name_prefix="vigil-async")

    async def _run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        # The request context (vigil.request_context) travels with the call into the thread.
        context = contextvars.copy_context()

        def call() -> T:
            return context.run(fn, *args, **kwargs)

        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def track(self, event: Union[str, Event, None] = None, /, **fields: Any) -> TrackResult:
        """Sends one event (see :meth:`vigil.Vigil.track`) and returns what happened to it."""
        return await self._run(self._client.track, event, **fields)

    async def track_batch(self, events: Sequence[Event]) -> BatchResult:
        """Sends events in chunks of ``batch_size`` (see :meth:`vigil.Vigil.track_batch`)."""
        return await self._run(self._client.track_batch, events)

    async def flush(self, timeout: Optional[float] = None) -> bool:
        """Buffered mode: sends the buffer and waits until it is delivered or given up."""
        return await self._run(self._client.flush, timeout)

    async def close(self, timeout: Optional[float] = 10.0) -> None:
        """Flushes, waits at most ``timeout`` seconds, and stops the client's threads."""
        try:
            await self._run(self._client.close, timeout)
        finally:
            self._executor.shutdown(wait=False)

    def stats(self) -> Stats:
        """Totals since the client was created (see :meth:`vigil.Vigil.stats`)."""
        return self._client.stats()

    async def __aenter__(self) -> "AsyncVigil":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
