"""Pacing: one token bucket per rate-limit policy the service announces, so that a burst waits
a little or is dropped on the client instead of meeting a 429 (and the hour of cooldown after it).

The service announces its policies in ``RateLimit-Policy: "second";q=5;w=1, "minute";q=30;w=60``
and what is left of each in ``RateLimit: "second";r=4;t=1, "minute";r=29;t=42``. Each policy is
a bucket of ``q`` tokens in which a spent token comes back ``w`` seconds after it was spent
(plus a tenth of the window, at most one second: the service's sliding windows count a unit for
up to that much longer). A send takes one token of the ``"second"`` policy (which counts
requests) and one per event of every other policy (``"minute"`` counts events). Before the
first answer the client assumes the smallest plan: 5 requests per second, 30 events per minute.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Dict, List, Mapping, Optional, Tuple

__all__ = ["Pacer", "parse_items", "DEFAULT_POLICIES"]

DEFAULT_POLICIES: Tuple[Tuple[str, int, int], ...] = (("second", 5, 1), ("minute", 30, 60))
"""The smallest plan (Free), assumed until the service says otherwise: name, quota, window seconds."""

# Policies whose quota counts requests; every other policy counts events.
_COUNTS_REQUESTS = frozenset({"second"})


def parse_items(value: Optional[str]) -> List[Tuple[str, Dict[str, int]]]:
    """The members of a structured-field list such as ``"second";q=5;w=1, "minute";q=30;w=60``:
    each member's name and its integer parameters. Members that cannot be read are skipped."""
    items: List[Tuple[str, Dict[str, int]]] = []
    if not value:
        return items
    for member in value[:4096].split(","):
        parts = [part.strip() for part in member.split(";")]
        name = parts[0].strip('"')
        if not name:
            continue
        params: Dict[str, int] = {}
        for part in parts[1:]:
            key, _, number = part.partition("=")
            try:
                params[key.strip()] = int(number.strip())
            except ValueError:
                continue
        items.append((name, params))
    return items


@dataclass
class _Policy:
    quota: int
    window_ms: int
    counts_events: bool
    # (time in ms the tokens were spent, tokens), sorted by time; future times are reservations.
    spent: List[Tuple[int, int]] = field(default_factory=list)

    @property
    def span_ms(self) -> int:
        return self.window_ms + min(self.window_ms // 10, 1000)

    def cost(self, events: int) -> int:
        return min(max(1, events) if self.counts_events else 1, self.quota)

    def forget(self, now_ms: int) -> None:
        expired = bisect.bisect_right(self.spent, (now_ms - self.span_ms, 1 << 62))
        del self.spent[:expired]

    def earliest(self, at_ms: int, cost: int) -> int:
        """The first time from ``at_ms`` on at which ``cost`` tokens are free."""
        used = sum(tokens for when, tokens in self.spent if when > at_ms - self.span_ms)
        if used + cost <= self.quota:
            return at_ms
        for when, tokens in self.spent:
            if when <= at_ms - self.span_ms:
                continue
            used -= tokens
            if used + cost <= self.quota:
                return when + self.span_ms
        return at_ms

    def used(self, now_ms: int) -> int:
        return sum(tokens for when, tokens in self.spent if when > now_ms - self.span_ms)


class Pacer:
    """Decides how long a send waits, or that it would wait too long. Not thread safe: the client
    calls it under its lock."""

    def __init__(self, max_delay_ms: int) -> None:
        self.max_delay_ms = max(0, max_delay_ms)
        self._policies: Dict[str, _Policy] = {
            name: _Policy(quota, window * 1000, name not in _COUNTS_REQUESTS) for name, quota, window in DEFAULT_POLICIES
        }
        self._last_ms = 0
        self.seen = False
        """Whether an answer has told the policies (until then the smallest plan is assumed)."""

    def reserve(self, now_ms: int, events: int) -> Optional[int]:
        """Milliseconds the send of ``events`` events must wait, its tokens taken; None when the
        wait would exceed the bound (nothing is taken then)."""
        start = max(now_ms, self._last_ms)
        at = start
        for policy in self._policies.values():
            policy.forget(now_ms)
            at = max(at, policy.earliest(start, policy.cost(events)))
        if at - now_ms > self.max_delay_ms:
            return None
        for policy in self._policies.values():
            bisect.insort(policy.spent, (at, policy.cost(events)))
        self._last_ms = at
        return at - now_ms

    def observe(self, now_ms: int, status: int, headers: Mapping[str, str]) -> None:
        """Takes the policies and what is left of them from an answer's headers."""
        lowered = {k.lower(): v for k, v in headers.items()}
        announced = parse_items(lowered.get("ratelimit-policy"))
        if not announced:
            # A successful answer without policies: the service does not announce them, and the
            # 429 cooldown is what protects it. Other answers may come from a proxy: keep pacing.
            if 200 <= status < 300:
                self._policies = {}
                self.seen = True
            return
        self.seen = True
        policies: Dict[str, _Policy] = {}
        for name, params in announced:
            quota, window = params.get("q"), params.get("w")
            if quota is None or window is None or quota < 1 or window < 1:
                continue
            known = self._policies.get(name)
            policy = known if known is not None else _Policy(quota, window * 1000, name not in _COUNTS_REQUESTS)
            policy.quota, policy.window_ms = quota, window * 1000
            policies[name] = policy
        self._policies = policies
        for name, params in parse_items(lowered.get("ratelimit")):
            found = self._policies.get(name)
            remaining, reset = params.get("r"), params.get("t", 0)
            if found is None or remaining is None:
                continue
            policy = found
            # The service counts more than this client spent (other processes share the key): the
            # difference is spent until the window frees it.
            missing = policy.quota - policy.used(now_ms) - max(0, remaining)
            if missing > 0:
                bisect.insort(policy.spent, (now_ms + max(0, reset) * 1000 - policy.span_ms, missing))
