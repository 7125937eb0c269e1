"""Django's authentication signals as Vigil events.

In ``AppConfig.ready()``::

    vigil.django.connect_auth_signals(client)

| Django signal       | Vigil event           |
| ------------------- | --------------------- |
| `user_logged_in`    | `auth.login.success`  |
| `user_login_failed` | `auth.login.failure`  |
| `user_logged_out`   | `auth.logout`         |

Each event carries the user's primary key as ``actor_id`` (the submitted username for a
failed login), the user's email when it has one, and the request's ip, user agent, method
and path. Django never passes the password to these signals.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .client import Client

__all__ = ["connect_auth_signals", "AUTH_EVENTS"]

AUTH_EVENTS = {
    "user_logged_in": "auth.login.success",
    "user_login_failed": "auth.login.failure",
    "user_logged_out": "auth.logout",
}


def _request_fields(request: Any) -> Dict[str, Any]:
    if request is None or not hasattr(request, "META"):
        return {}
    meta = request.META
    fields: Dict[str, Any] = {"request": {"method": request.method, "path": request.path}}
    if meta.get("REMOTE_ADDR"):
        fields["ip"] = meta["REMOTE_ADDR"]
    if meta.get("HTTP_USER_AGENT"):
        fields["user_agent"] = meta["HTTP_USER_AGENT"]
    return fields


def _user_fields(user: Any) -> Dict[str, Any]:
    if user is None or getattr(user, "pk", None) is None:
        return {}
    fields: Dict[str, Any] = {"actor_id": str(user.pk)}
    email = getattr(user, "email", None)
    if email:
        fields["email"] = email
    return fields


def connect_auth_signals(client: Client, *, dispatch_uid: Optional[str] = "vigil") -> None:
    """Tracks logins, failed logins and logouts through ``client``.

    Connecting twice with the same ``dispatch_uid`` keeps one receiver per signal.
    """
    from django.contrib.auth import get_user_model, signals  # type: ignore[import]

    def logged_in(sender: Any, request: Any = None, user: Any = None, **kwargs: Any) -> None:
        client.track({"event": AUTH_EVENTS["user_logged_in"], **_request_fields(request), **_user_fields(user)})

    def login_failed(sender: Any, credentials: Any = None, request: Any = None, **kwargs: Any) -> None:
        event: Dict[str, Any] = {"event": AUTH_EVENTS["user_login_failed"], **_request_fields(request)}
        username = (credentials or {}).get(get_user_model().USERNAME_FIELD)
        if username:
            event["actor_id"] = str(username)
            if "@" in str(username):
                event["email"] = str(username)
        client.track(event)

    def logged_out(sender: Any, request: Any = None, user: Any = None, **kwargs: Any) -> None:
        client.track({"event": AUTH_EVENTS["user_logged_out"], **_request_fields(request), **_user_fields(user)})

    for name, receiver in (("user_logged_in", logged_in), ("user_login_failed", login_failed), ("user_logged_out", logged_out)):
        uid = None if dispatch_uid is None else f"{dispatch_uid}.{name}"
        getattr(signals, name).connect(receiver, weak=False, dispatch_uid=uid)
