"""Reconnection delays: exponential with full jitter, first retry within a second.

Jitter keeps many subscribers from hammering a restarted producer at the same
instant; the cap keeps a long outage from turning into hour-long silences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(slots=True)
class Backoff:
    first: float = 0.5
    factor: float = 2.0
    cap: float = 30.0
    attempts: int = 0
    rng: random.Random = field(default_factory=random.Random)

    def next_delay(self) -> float:
        ceiling = min(self.cap, self.first * self.factor**self.attempts)
        self.attempts += 1
        # Half fixed, half random: never zero, never above the ceiling.
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.attempts = 0
