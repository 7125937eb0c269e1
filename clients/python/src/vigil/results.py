"""Values the client returns: what happened to an event, a batch, and the running totals."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Mapping, Optional, Tuple


class Outcome(str, enum.Enum):
    """What happened to one event. Compares equal to its string value (``"accepted"``...)."""

    ACCEPTED = "accepted"
    """The service answered 2xx."""
    REJECTED = "rejected"
    """The service answered a 4xx that is not retried (400, 401, 403, 413, 415...)."""
    FAILED = "failed"
    """Given up after the retries (5xx, network errors, timeouts), or a probe without answer."""
    RATE_LIMITED = "rate_limited"
    """The service answered 429: the client is now in its one-hour cooldown."""
    DROPPED = "dropped"
    """Not sent because of a cooldown; never sent later."""
    BUFFERED = "buffered"
    """Buffered mode: taken for delivery by the background thread."""

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class RiskFactor:
    """One line of a score's breakdown: where points came from."""

    source: str
    """What added the points, such as ``threat_intel`` or ``new_device``."""
    points: int


@dataclass(frozen=True)
class RiskDecision:
    """The service's verdict on an accepted event."""

    score: int
    """Composite risk score, 0 to 100."""
    level: str
    """``low``, ``medium``, ``high`` or ``critical``."""
    action: str
    """``allow``, ``challenge`` or ``block``."""
    breakdown: Tuple[RiskFactor, ...] = ()
    """The lines that add up to ``score``, as the service computed them."""

    @classmethod
    def from_answer(cls, answer: Any) -> Optional["RiskDecision"]:
        """The ``risk`` object of a 202 body, or None when the body has none."""
        risk = answer.get("risk") if isinstance(answer, Mapping) else None
        if not isinstance(risk, Mapping):
            return None
        score = risk.get("score")
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            return None
        lines = risk.get("breakdown")
        breakdown = tuple(
            RiskFactor(str(line.get("source")), int(line["points"]))
            for line in (lines if isinstance(lines, list) else [])
            if isinstance(line, Mapping) and isinstance(line.get("points"), (int, float)) and not isinstance(line.get("points"), bool)
        )
        return cls(score=int(score), level=str(risk.get("level")), action=str(risk.get("action")), breakdown=breakdown)


@dataclass(frozen=True)
class TrackResult:
    """What :meth:`vigil.Vigil.track` did with one event."""

    outcome: Outcome
    status: Optional[int]
    """HTTP status of the last answer, or None when there was none."""
    risk: Optional[RiskDecision]
    """The risk decision of an accepted event, or None."""
    event_id: str
    """The event's ``event_id``: the caller's, or the one the client generated."""

    @property
    def ok(self) -> bool:
        """True when the service accepted the event."""
        return self.outcome is Outcome.ACCEPTED


@dataclass(frozen=True)
class BatchResult:
    """How many events of one :meth:`vigil.Vigil.track_batch` call ended in each outcome."""

    accepted: int = 0
    rejected: int = 0
    failed: int = 0
    rate_limited: int = 0
    dropped: int = 0
    buffered: int = 0


@dataclass(frozen=True)
class Stats:
    """Totals since the client was created."""

    sent: int
    """Events put on the wire (retries not counted again)."""
    accepted: int
    """Events answered 2xx."""
    rejected: int
    """Events answered a 4xx that is not retried."""
    failed: int
    """Events given up after the retries, and probes that got no answer."""
    rate_limited: int
    """Events in requests answered 429."""
    dropped: int
    """Events not sent: because of a cooldown, or because pacing would have waited too long (never sent later)."""
    paced: int
    """Events that waited for room in the service's rate-limit policies, then went."""
    paced_dropped: int
    """Events dropped because room would have come later than ``max_pacing_delay_ms`` (also in ``dropped``)."""
    retries: int
    """Retry requests sent (first attempts not counted)."""
    probes: int
    """Probe requests sent during cooldowns."""
    in_cooldown: bool
    """Whether the client is in a cooldown now."""
