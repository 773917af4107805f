"""Counters with slash keys (``fetch/status/404``, ``retry/reason/timeout``)."""

from __future__ import annotations

from collections import Counter


class Stats:
    """A bag of counters for one site's crawl."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def inc(self, key: str, n: int = 1) -> None:
        self.counts[key] += n

    def get(self, key: str) -> int:
        return self.counts.get(key, 0)

    def prefixed(self, prefix: str) -> dict[str, int]:
        """Counters under ``prefix/`` with the prefix removed."""
        cut = len(prefix) + 1
        return {k[cut:]: v for k, v in sorted(self.counts.items()) if k.startswith(prefix + "/")}
