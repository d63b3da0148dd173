"""The soak scheduler with its per-target scores shared: machines spread over the targets that still yield."""

from __future__ import annotations

from collections.abc import Sequence

from mcpfuzz.engine.shared.link import SharedLink
from mcpfuzz.engine.soak.scheduler import Scheduler


class SharedScheduler(Scheduler):
    """A scheduler whose scores are the whole fleet's: read before each pick, written after each slice.

    A target another machine has already sliced counts as tried, so the first round spreads too.
    While Redis is down the machine goes on with the scores it has.
    """

    def __init__(self, link: SharedLink, targets: Sequence[str], seed: int,
                 scores: dict[str, float] | None = None) -> None:
        super().__init__(targets, seed, scores)
        self.link = link

    def pick(self) -> str:
        """The next target, by the shared scores."""
        shared = self.link.call(lambda client: client.hgetall(self.link.key("scores")))
        for name, score in (shared or {}).items():
            target = name.decode() if isinstance(name, bytes) else str(name)
            if target in self.slices:
                self.scores[target] = float(score)
        return super().pick()

    def update(self, name: str, cases: int, new_behaviours: int, new_findings: int) -> None:
        """Score the slice and share the target's new score and slice count."""
        super().update(name, cases, new_behaviours, new_findings)
        key, counts, ttl = self.link.key("scores"), self.link.key("slices-per-target"), int(self.link.options.ttl)

        def write(client: object) -> object:
            pipe = client.pipeline(transaction=False)  # type: ignore[attr-defined]
            pipe.hset(key, name, repr(self.scores[name]))
            pipe.hincrby(counts, name, 1)
            pipe.expire(key, ttl)
            pipe.expire(counts, ttl)
            return pipe.execute()

        self.link.call(write)
