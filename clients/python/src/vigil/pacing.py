"""Pacing: one token bucket per rate-limit policy the service announces, so that a burst waits
a little or is dropped on the client instead of meeting a 429 (and the hour of cooldown after it).

The service announces its policies in ``RateLimit-Policy: "second";q=5;w=1, "minute";q=30;w=60``
and what is left of each in ``RateLimit: "second";r=4;t=1, "minute";r=29;t=42``. Each policy is
a bucket of ``q`` units in which a unit taken at time ``s`` is held until ``s + 1100 w + 100`` ms
(the service's sliding windows keep a unit at most 1.1 w; 100 ms cover the network's jitter). A
request takes one unit of the ``"second"`` policy (which counts requests) and one per event of
every other policy (``"minute"`` counts events), at most ``q``. ``RateLimit`` (what is left) is
informational: pacing counts this client's own requests. Before the first answer naming the
policies the client assumes the smallest plan: 5 requests per second, 30 events per minute.
These are the rules of the conformance kit (clients/conformance/README.md, "Pacing"), so every
client of the family takes the same decisions.
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
    window_s: int
    counts_events: bool
    # The times (client clock, ms) at which units were taken, oldest first; future times are
    # reservations of requests still waiting.
    held: List[int] = field(default_factory=list)

    @property
    def hold_ms(self) -> int:
        # The service's sliding windows keep a unit at most 1.1 x w; 100 ms cover the network's
        # jitter between two requests.
        return self.window_s * 1100 + 100

    def cost(self, events: int) -> int:
        return min(max(1, events) if self.counts_events else 1, self.quota)

    def release(self, now_ms: int) -> None:
        released = 0
        while released < len(self.held) and self.held[released] + self.hold_ms <= now_ms:
            released += 1
        del self.held[:released]

    def earliest(self, now_ms: int, cost: int) -> int:
        """When a request of this cost fits: now, or when enough held units are released."""
        n = len(self.held)
        if n + cost <= self.quota:
            return now_ms
        return self.held[n - self.quota + cost - 1] + self.hold_ms


class Pacer:
    """Decides how long a request waits, or that it would wait too long. Not thread safe: the
    client calls it under its lock."""

    def __init__(self, max_delay_ms: int) -> None:
        self.max_delay_ms = max(0, max_delay_ms)
        self._policies: Dict[str, _Policy] = {
            name: _Policy(quota, window, name not in _COUNTS_REQUESTS) for name, quota, window in DEFAULT_POLICIES
        }
        self.learned = False
        """Whether an answer has named the policies (until then the smallest plan is assumed)."""

    def reserve(self, now_ms: int, events: int) -> Optional[int]:
        """Milliseconds a request of ``events`` events must wait, its units taken; None when the
        wait would exceed the bound (nothing is taken then)."""
        at = now_ms
        for policy in self._policies.values():
            policy.release(now_ms)
            at = max(at, policy.earliest(now_ms, policy.cost(events)))
        if at - now_ms > self.max_delay_ms:
            return None
        for policy in self._policies.values():
            for _ in range(policy.cost(events)):
                bisect.insort_right(policy.held, at)
        return at - now_ms

    def settle(self, events: int, taken_at: int, answered_at: int) -> None:
        """The answer to a request whose units were taken at ``taken_at`` arrived at
        ``answered_at``: its units are held from then on. The service counted the request when it
        arrived, after it was handed over and before it was answered, so a hold that starts at
        the answer never ends early."""
        if answered_at <= taken_at:
            return
        for policy in self._policies.values():
            cost = policy.cost(events)
            i = len(policy.held) - 1
            while i >= 0 and cost > 0:
                if policy.held[i] == taken_at:
                    del policy.held[i]
                    bisect.insort_right(policy.held, answered_at)
                    cost -= 1
                i -= 1

    def learn(self, headers: Mapping[str, str]) -> None:
        """Takes the policies of an answer's ``RateLimit-Policy``, if it names any; held units
        are kept by policy name."""
        lowered = {k.lower(): v for k, v in headers.items()}
        policies: Dict[str, _Policy] = {}
        for name, params in parse_items(lowered.get("ratelimit-policy")):
            quota, window = params.get("q"), params.get("w")
            if quota is None or window is None or quota < 1 or window < 1:
                continue
            known = self._policies.get(name)
            policy = known if known is not None else _Policy(quota, window, name not in _COUNTS_REQUESTS)
            policy.quota, policy.window_s = quota, window
            policies[name] = policy
        if policies:
            self._policies = policies
            self.learned = True
