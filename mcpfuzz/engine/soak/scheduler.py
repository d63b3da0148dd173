"""Which target a soak fuzzes next: the ones that still show new behaviour get more slices."""

from __future__ import annotations

import random
from collections.abc import Sequence

FLOOR = 0.05  # every target keeps some chance: a quiet target may still hide a bug
FINDING_WEIGHT = 10.0  # a new finding counts as this many new behaviours
DECAY = 0.5  # how much of a target's score the next slice keeps


class Scheduler:
    """A weighted choice over targets; a target's score is a decaying rate of new behaviours per case.

    Every target gets one slice before any gets a second, so that nothing is judged before it was tried.
    """

    def __init__(self, targets: Sequence[str], seed: int, scores: dict[str, float] | None = None) -> None:
        self.targets = list(targets)
        restored = scores or {}
        self.scores = {name: restored[name] for name in self.targets if name in restored}
        self.slices = dict.fromkeys(self.targets, 0)
        self._random = random.Random(seed)

    def pick(self) -> str:
        """The next target: an untried one in order, else a weighted draw."""
        for name in self.targets:
            if name not in self.scores:
                return name
        weights = [FLOOR + self.scores[name] for name in self.targets]
        return self._random.choices(self.targets, weights)[0]

    def update(self, name: str, cases: int, new_behaviours: int, new_findings: int) -> None:
        """Score a finished slice of `name`."""
        self.slices[name] = self.slices.get(name, 0) + 1
        rate = (new_behaviours + FINDING_WEIGHT * new_findings) / max(cases, 1)
        previous = self.scores.get(name, rate)
        self.scores[name] = DECAY * previous + (1 - DECAY) * rate
