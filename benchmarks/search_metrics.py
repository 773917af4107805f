"""The in-process search metrics bench_search and bench_semantic share (search_eval's definitions)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class QueryScore:
    """How one query's results did against its gold rows."""

    rank: int | None  # 1-based rank of the first relevant page, None if not in the results
    ndcg: float  # nDCG@10 over distinct pages
    has_sections: bool  # the gold names anchors, so section hits count
    sec1: bool  # the first result is a gold (page, anchor)
    sec10: bool  # some result is a gold (page, anchor)
    gold_sections: frozenset[tuple[str, str]]


def score_query(query: dict[str, Any], keys: list[str], anchors: list[str]) -> QueryScore:
    """``keys`` are the results' page paths relative to the site, ``anchors`` their anchors."""
    gold = {r["path"]: r for r in query["relevant"]}
    rank = next((i + 1 for i, k in enumerate(keys) if k in gold), None)
    seen: set[str] = set()
    dcg = 0.0
    for i, k in enumerate(keys[:10]):
        if k in gold and k not in seen:
            dcg += gold[k]["grade"] / math.log2(i + 2)
        seen.add(k)
    ideal = sorted((g["grade"] for g in query["relevant"]), reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:10]))
    ok = frozenset(
        (r["path"], a.lower())
        for r in query["relevant"]
        for a in (r.get("anchors_ok") or [r.get("anchor")])
        if a
    )
    pairs = [(k, a.lower()) for k, a in zip(keys, anchors, strict=False)]
    return QueryScore(
        rank=rank,
        ndcg=dcg / idcg if idcg else 0.0,
        has_sections=any(r.get("anchor") for r in query["relevant"]),
        sec1=bool(pairs) and pairs[0] in ok,
        sec10=any(p in ok for p in pairs),
        gold_sections=ok,
    )


def percentile(values: list[float], p: float, digits: int = 1) -> float:
    """The ``p`` quantile (nearest rank below) of ``values``, rounded."""
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * p))], digits)
