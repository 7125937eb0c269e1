"""WSGI and ASGI middleware: events tracked while serving a request carry its ip, user agent,
method and path; answers with chosen statuses (401, 403...) can be tracked as well.

Flask::

    app.wsgi_app = vigil.middleware.WSGIMiddleware(app.wsgi_app, client, track_statuses={401, 403})

Django (``wsgi.py`` or ``asgi.py``)::

    application = vigil.middleware.WSGIMiddleware(get_wsgi_application(), client)
    application = vigil.middleware.ASGIMiddleware(get_asgi_application(), client)

The ip is the address the server saw (``REMOTE_ADDR`` or the ASGI ``client``). Behind a
reverse proxy, let the framework or server rewrite it from the proxy's headers first (for
example Werkzeug's ``ProxyFix`` or uvicorn's ``--proxy-headers``), so that a client cannot
choose its own address.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Collection, Dict, Generic, Iterable, List, Mapping, MutableMapping, Optional, TypeVar

from .client import Client
from .context import request_context

__all__ = ["ASGIMiddleware", "WSGIMiddleware"]

WSGIApp = Callable[[Dict[str, Any], Callable[..., Any]], Iterable[bytes]]
ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def _request(method: str, path: str, query: str) -> Dict[str, Any]:
    request: Dict[str, Any] = {"method": method, "path": path or "/"}
    if query:
        request["query"] = query
    return request


AppT = TypeVar("AppT")


class _Middleware(Generic[AppT]):
    """What both middlewares share: the wrapped application, the client and the statuses whose
    answers become events."""

    def __init__(
        self,
        app: AppT,
        client: Optional[Client] = None,
        *,
        track_statuses: Collection[int] = (),
        event: str = "api.request",
    ) -> None:
        if track_statuses and client is None:
            raise ValueError("track_statuses needs a client")
        self.app = app
        self.client = client
        self.track_statuses = frozenset(track_statuses)
        self.event = event

    def _answer_event(self, fields: Mapping[str, Any], statuses: List[int]) -> Optional[Dict[str, Any]]:
        """The event for the answer to the request, when its (last) status is tracked."""
        status = statuses[-1] if statuses else None
        if status is None or status not in self.track_statuses:
            return None
        present = {k: v for k, v in fields.items() if v}
        return {"event": self.event, **present, "request": {**present["request"], "status": status}}


class WSGIMiddleware(_Middleware[WSGIApp]):
    """Wraps a WSGI application (Flask's ``app.wsgi_app``, Django's ``get_wsgi_application()``).

    :param client: the client that tracks answers with a status in ``track_statuses``.
    :param track_statuses: statuses whose answers are tracked as ``event`` (default none).
        The service infers failed logins from ``api.request`` events answered 401 or 403 on
        authentication paths. With a direct-mode client the event is sent before the answer
        is returned: use a buffered client to keep it off the request path.
    :param event: the event type of those answers.
    """

    def __call__(self, environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        fields: Dict[str, Any] = {
            "ip": environ.get("REMOTE_ADDR") or None,
            "user_agent": environ.get("HTTP_USER_AGENT") or None,
            "request": _request(environ.get("REQUEST_METHOD", "GET"), path, environ.get("QUERY_STRING", "")),
        }
        statuses: List[int] = []

        def recording_start_response(status: str, headers: Any, exc_info: Any = None) -> Any:
            try:
                statuses.append(int(status.split(" ", 1)[0]))
            except ValueError:
                pass
            return start_response(status, headers, exc_info) if exc_info is not None else start_response(status, headers)

        with request_context(ip=fields["ip"], user_agent=fields["user_agent"], request=fields["request"]):
            body = self.app(environ, recording_start_response)
            event = self._answer_event(fields, statuses)
            if event is not None and self.client is not None:
                self.client.track(event)
        return body


class ASGIMiddleware(_Middleware[ASGIApp]):
    """Wraps an ASGI application (Django's ``get_asgi_application()``, Starlette, Quart...).

    Same parameters as :class:`WSGIMiddleware`. Answers are tracked on the default executor's
    threads, never on the event loop. Inside ``async`` views, call ``track`` through
    ``await asyncio.to_thread(client.track, event)`` or use a buffered client: a direct-mode
    ``track`` waits for the service.
    """

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        peer = scope.get("client")
        path = scope.get("root_path", "") + scope.get("path", "")
        fields = {
            "ip": peer[0] if peer else None,
            "user_agent": headers.get("user-agent"),
            "request": _request(scope.get("method", "GET"), path, (scope.get("query_string") or b"").decode("latin-1")),
        }
        statuses: List[int] = []

        async def recording_send(message: Any) -> None:
            if message.get("type") == "http.response.start":
                statuses.append(int(message["status"]))
            await send(message)

        with request_context(ip=fields["ip"], user_agent=fields["user_agent"], request=fields["request"]):
            await self.app(scope, receive, recording_send)
        event = self._answer_event(fields, statuses)
        if event is not None and self.client is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.client.track, event)
