"""Exceptions, raised only by a client created with ``raise_errors=True``."""

from __future__ import annotations

from .results import TrackResult


class VigilError(Exception):
    """Base class of the exceptions this package raises."""


class DeliveryError(VigilError):
    """The event was not accepted: rejected by the service, or given up after the retries."""

    def __init__(self, result: TrackResult) -> None:
        status = "no answer" if result.status is None else f"HTTP {result.status}"
        super().__init__(f"event {result.event_id} {result.outcome.value} ({status})")
        self.result = result


class RateLimitedError(DeliveryError):
    """The service answered 429: the client entered its one-hour cooldown."""
