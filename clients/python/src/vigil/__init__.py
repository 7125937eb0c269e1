"""Official Python client for Vigil, the security event ingestion service.

    import vigil

    client = vigil.Vigil(os.environ["VIGIL_API_KEY"], base_url="https://vigil.example.com")
    result = client.track({"event": "auth.login.success", "actor_id": "user-42"})
    if result.risk and result.risk.action == "block": ...
"""

import logging

from ._version import __version__
from .aio import AsyncVigil
from .client import COOLDOWN, PROBE_PERIOD, Client, Vigil
from .context import current_request, request_context
from .errors import DeliveryError, RateLimitedError, VigilError
from .results import BatchResult, Outcome, RiskDecision, RiskFactor, Stats, TrackResult
from .transport import Answer, Clock, HTTPAnswer, NoAnswer, SystemClock, Transport, urllib_transport

__all__ = [
    "__version__",
    "COOLDOWN",
    "PROBE_PERIOD",
    "Answer",
    "AsyncVigil",
    "BatchResult",
    "Client",
    "Clock",
    "DeliveryError",
    "HTTPAnswer",
    "NoAnswer",
    "Outcome",
    "RateLimitedError",
    "RiskDecision",
    "RiskFactor",
    "Stats",
    "SystemClock",
    "TrackResult",
    "Transport",
    "Vigil",
    "VigilError",
    "current_request",
    "request_context",
    "urllib_transport",
]

logging.getLogger("vigil").addHandler(logging.NullHandler())
