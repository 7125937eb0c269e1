"""The middlewares and the Django signals in real Flask and Django applications: WSGI apps served
over real HTTP by wsgiref, Django's ASGI handler driven through the ASGI interface."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Optional, Tuple
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

import vigil
from vigil.middleware import ASGIMiddleware, WSGIMiddleware
from support import ScriptedServer

AGENT = "Mozilla/5.0 (pytest)"


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class _ThreadingWSGIServer(WSGIServer):
    daemon_threads = True


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serves a WSGI application over HTTP on a free port, on a background thread."""
    httpd = make_server("127.0.0.1", 0, app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def http(url: str, data: Optional[Dict[str, str]] = None, opener: Any = None) -> int:
    body = None if data is None else urllib.parse.urlencode(data).encode()
    request = urllib.request.Request(url, data=body, headers={"User-Agent": AGENT})
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def bodies(server: ScriptedServer) -> List[Dict[str, Any]]:
    return [r["body"] for r in server.requests()]


def test_flask_views_track_with_the_request_and_401_answers_are_tracked(server: ScriptedServer) -> None:
    flask = pytest.importorskip("flask")
    client = vigil.Client("vgl_sk_test", base_url=server.url)
    app = flask.Flask("shop")

    @app.get("/orders/<int:order_id>")
    def order(order_id: int) -> str:
        result = client.track({"event": "data.accessed", "actor_id": "user-7", "metadata": {"order": order_id}})
        return result.risk.action if result.risk else "none"

    @app.post("/login")
    def login() -> Tuple[str, int]:
        return "no", 401

    app.wsgi_app = WSGIMiddleware(app.wsgi_app, client, track_statuses={401, 403})  # type: ignore[method-assign]
    with serve(app) as base:
        assert http(f"{base}/orders/7?view=full") == 200
        assert http(f"{base}/login", {"user": "x"}) == 401
    accessed, failure = bodies(server)
    assert accessed["event"] == "data.accessed" and accessed["metadata"] == {"order": 7}
    assert accessed["ip"] == "127.0.0.1" and accessed["user_agent"] == AGENT
    assert accessed["request"] == {"method": "GET", "path": "/orders/7", "query": "view=full"}
    assert failure["event"] == "api.request" and failure["ip"] == "127.0.0.1"
    assert failure["request"] == {"method": "POST", "path": "/login", "status": 401}


def test_track_statuses_needs_a_client() -> None:
    with pytest.raises(ValueError):
        WSGIMiddleware(lambda environ, start_response: [], track_statuses={401})


# Django is configured once for the whole test process.
urlpatterns: List[Any] = []
_client_box: Dict[str, vigil.Client] = {}


@pytest.fixture(scope="module")
def django_app() -> Iterator[Any]:
    pytest.importorskip("django")
    import django
    from django.conf import settings

    with tempfile.TemporaryDirectory() as data:
        settings.configure(
            DEBUG=False,
            SECRET_KEY="test-only",
            ALLOWED_HOSTS=["*"],
            ROOT_URLCONF=__name__,
            INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "django.contrib.sessions"],
            MIDDLEWARE=[
                "django.contrib.sessions.middleware.SessionMiddleware",
                "django.contrib.auth.middleware.AuthenticationMiddleware",
            ],
            DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": f"{data}/db.sqlite3"}},
            PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
            USE_TZ=True,
        )
        django.setup()
        from django.contrib import auth
        from django.contrib.auth.models import User
        from django.core.management import call_command
        from django.http import HttpRequest, HttpResponse
        from django.urls import path

        call_command("migrate", verbosity=0)
        User.objects.create_user("ada", email="ada@example.com", password="correct horse")

        def login(request: HttpRequest) -> HttpResponse:
            user = auth.authenticate(request, username=request.POST.get("username"), password=request.POST.get("password"))
            if user is None:
                return HttpResponse("no", status=401)
            auth.login(request, user)
            return HttpResponse("ok")

        def logout(request: HttpRequest) -> HttpResponse:
            auth.logout(request)
            return HttpResponse("bye")

        def report(request: HttpRequest) -> HttpResponse:
            _client_box["client"].track({"event": "data.exported", "metadata": {"rows": 5000}})
            return HttpResponse("sent", status=403 if request.GET.get("deny") else 200)

        urlpatterns[:] = [path("login", login), path("logout", logout), path("reports/export", report)]
        yield django


def test_django_auth_signals_become_vigil_events(server: ScriptedServer, django_app: Any) -> None:
    from django.core.wsgi import get_wsgi_application

    import vigil.django

    client = vigil.Client("vgl_sk_test", base_url=server.url)
    vigil.django.connect_auth_signals(client, dispatch_uid="vigil-test")
    with serve(WSGIMiddleware(get_wsgi_application(), client)) as base:
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        assert http(f"{base}/login", {"username": "ada", "password": "wrong"}, browser) == 401
        assert http(f"{base}/login", {"username": "ada", "password": "correct horse"}, browser) == 200
        assert http(f"{base}/logout", {}, browser) == 200
    failure, success, logout = bodies(server)
    assert failure["event"] == "auth.login.failure" and failure["actor_id"] == "ada"
    assert failure["ip"] == "127.0.0.1" and failure["user_agent"] == AGENT
    assert failure["request"] == {"method": "POST", "path": "/login"}
    assert "password" not in str(failure)
    assert success["event"] == "auth.login.success" and success["email"] == "ada@example.com"
    assert success["actor_id"] == logout["actor_id"] != "ada"
    assert logout["event"] == "auth.logout" and logout["request"]["path"] == "/logout"


def test_django_asgi_views_track_with_the_request(server: ScriptedServer, django_app: Any) -> None:
    from django.core.asgi import get_asgi_application

    _client_box["client"] = client = vigil.Client("vgl_sk_test", base_url=server.url)
    app = ASGIMiddleware(get_asgi_application(), client, track_statuses={403})

    async def call(query: bytes) -> int:
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/reports/export",
            "raw_path": b"/reports/export",
            "root_path": "",
            "query_string": query,
            "headers": [(b"host", b"shop.example"), (b"user-agent", AGENT.encode())],
            "client": ("198.51.100.20", 50000),
            "server": ("shop.example", 80),
        }
        sent: List[Dict[str, Any]] = []

        async def receive() -> Dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Dict[str, Any]) -> None:
            sent.append(message)

        await app(scope, receive, send)
        return int(sent[0]["status"])

    assert asyncio.run(call(b"")) == 200
    assert asyncio.run(call(b"deny=1")) == 403
    exported, denied_export, denied = bodies(server)
    for event in (exported, denied_export):
        assert event["event"] == "data.exported" and event["ip"] == "198.51.100.20" and event["user_agent"] == AGENT
    assert exported["request"] == {"method": "GET", "path": "/reports/export"}
    assert denied["event"] == "api.request"
    assert denied["request"] == {"method": "GET", "path": "/reports/export", "query": "deny=1", "status": 403}
