"""The request being served, so that events tracked while serving it carry its details."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Any, Dict, Iterator, Mapping, Optional

_current: contextvars.ContextVar[Optional[Mapping[str, Any]]] = contextvars.ContextVar("vigil_request", default=None)


def current_request() -> Mapping[str, Any]:
    """The fields (``ip``, ``user_agent``, ``request``) bound for the code running now."""
    return _current.get() or {}


@contextlib.contextmanager
def request_context(
    *, ip: Optional[str] = None, user_agent: Optional[str] = None, request: Optional[Mapping[str, Any]] = None
) -> Iterator[None]:
    """Binds the end user's ``ip``, ``user_agent`` and ``request`` (method, path...) for the block.

    Every event tracked inside the block (same thread or same asyncio task) gets these fields
    unless it sets them itself. The middlewares in :mod:`vigil.middleware` open this block
    around each request; other frameworks can open it themselves.
    """
    fields: Dict[str, Any] = {}
    if ip:
        fields["ip"] = ip
    if user_agent:
        fields["user_agent"] = user_agent
    if request:
        fields["request"] = dict(request)
    token = _current.set(fields)
    try:
        yield
    finally:
        _current.reset(token)
