"""Hybrid search: lexical (FTS5) and dense (embeddings) rankings fused, with a relevance cutoff.

Stages, per query:

1. embed the query; rank the live sections by cosine similarity (``vectors``);
2. rank the sections lexically (``search.rank``: every section, no snippets);
3. the relevance cutoff: when the best cosine, the agreement of the two
   rankings and the lexical strength together stay under ``CUTOFF`` and no
   section defines an identifier the query names, the docs do not cover it
   and the answer is no results, not the least bad ones;
4. fusion: each candidate of either ranking scores its lexical score
   relative to the best plus ``W_COS`` x its exact cosine (measured better
   than reciprocal rank fusion, kept as ``FUSION = "rrf"``);
5. a query that is one identifier gets the sections defining it first;
6. one best section per page, snippets for the winners only.

``mode`` is ``lexical`` (FTS5 only, no cutoff), ``dense`` (stages 1, 3, 5, 6)
or ``hybrid``. The weights and the cutoff were measured with
``benchmarks/bench_semantic.py`` on search-python.jsonl (see the README).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from doc_scraper.errors import QueryError, SearchError
from doc_scraper.index import search as _search
from doc_scraper.index import vectors
from doc_scraper.index.db import fetch_all
from doc_scraper.index.query import parse_query

if TYPE_CHECKING:
    import apsw

    from doc_scraper.index.embed import Embedder
    from doc_scraper.index.query import ParsedQuery
    from doc_scraper.index.search import Candidate, SearchResult

logger = logging.getLogger(__name__)

MODES = ("lexical", "dense", "hybrid")
RRF_K = 2  # reciprocal rank fusion constant: small, as the lexical ranking is the stronger one
W_LEXICAL = 1.0
W_DENSE = 0.1
FUSION = "linear"  # or "rrf"
W_COS = 1.0  # measured: 0.2-1.5 all within 0.01 MRR; 1.0 gave the best Recall@5 and section hit@1
DENSE_CANDIDATES = 100  # sections taken from each ranking into the fusion
LEXICAL_CANDIDATES = 40  # each one gets a snippet built: the main cost of a hybrid query
# Relevance below CUTOFF: the docs do not cover the query. Relevance = best cosine + W_AGREE per page
# found in both the dense and the lexical top AGREE_TOP + W_LEX x the best lexical score (capped at
# LEX_CAP). Calibrated on search-python.jsonl and 25 off-topic questions with the default model
# (all-MiniLM-L6-v2, ONNX int8, 32 tokens): on-topic relevance >= 0.63, off-topic <= 0.51.
CUTOFF = 0.57
W_AGREE = 0.03
AGREE_TOP = 10
W_LEX = 0.05
LEX_CAP = 4.0
PIN_STRENGTH = 2  # section_idents strength of a definition
MAX_PINNED = 3  # sections pinned for a one-identifier query


@dataclass(slots=True)
class _Hit:
    key: tuple[str, str, str]  # site_key, url, anchor
    score: float = 0.0
    cosine: float | None = None
    lexical: Candidate | None = None
    section_id: int | None = None
    pinned: bool = False


def runtime_for(model_id: str) -> str:
    """The embedding runtime that made vectors recorded as ``model_id``."""
    if "/static-" in model_id:
        return "static"
    if "/onnx-" in model_id:
        return "onnx" if "/onnx-int8/" in model_id else "onnx-fp32"
    return "torch-int8" if "/int8/" in model_id else "torch"


def resolve_mode(conn: apsw.Connection, requested: str | None = None) -> tuple[str, Embedder | None]:
    """The mode a search runs in and the query embedder it needs (loads the model once per process).

    ``None`` picks ``hybrid`` when the index has embeddings and the semantic
    extra is installed, else ``lexical``. Asking for ``dense`` or ``hybrid``
    explicitly raises ``SearchError`` / ``EmbeddingError`` naming the fix.
    """
    from doc_scraper.index import embed

    if requested is not None and requested not in MODES:
        raise QueryError(f"unknown search mode {requested!r}; use one of {', '.join(MODES)}")
    if requested == "lexical":
        return "lexical", None
    stored = vectors.stored_model(conn)
    if stored is None or (requested is None and not embed.semantic_available()):
        if requested is None:
            return "lexical", None
        raise SearchError(
            f"{requested} search needs section embeddings and this index has none; install the "
            "semantic extra (pip install 'doc-scraper[semantic]') and crawl again, or use -mode lexical"
        )
    try:
        embedder = embed.load_embedder(runtime=runtime_for(stored))
    except embed.EmbeddingError as exc:
        if requested is not None:
            raise
        logger.warning("search.dense_unavailable", extra={"error": str(exc)})
        return "lexical", None
    if embedder.model_id != stored:
        if requested is not None:
            raise SearchError(
                f"the index was embedded with {stored} but this machine has {embedder.model_id}; "
                "crawl again to re-embed, or use -mode lexical"
            )
        logger.warning("search.model_mismatch", extra={"stored": stored, "loaded": embedder.model_id})
        return "lexical", None
    return requested or "hybrid", embedder


def search(
    conn: apsw.Connection,
    query: str,
    *,
    embedder: Embedder | None,
    mode: str = "hybrid",
    db_key: str = "",
    site_key: str | None = None,
    limit: int = 10,
    one_per_page: bool = True,
    cutoff: float | None = None,
) -> list[SearchResult]:
    """Run ``query`` in ``mode``; ``embedder`` must have made the stored vectors (None: lexical).

    ``cutoff`` None means ``CUTOFF``; 0 turns the relevance cutoff off.
    """
    cutoff = CUTOFF if cutoff is None else cutoff
    if mode == "lexical" or embedder is None:
        return _search.search(conn, query, site_key=site_key, limit=limit, one_per_page=one_per_page)
    limit = max(1, min(int(limit), _search.MAX_LIMIT))
    parsed = parse_query(query)
    text = parsed.text
    if not text:
        return []
    # 1-3. dense and lexical rankings, the cutoff
    qvec = embedder.embed([text])[0]
    matrix = vectors.load_matrix(conn, db_key)
    dense = matrix.search(qvec, DENSE_CANDIDATES, site_key=site_key)
    pinned_ids = _defining_sections(conn, parsed, site_key)
    meta = _section_meta(conn, [sid for sid, _ in dense] + list(pinned_ids))
    lexical: list[Candidate] = []
    if mode == "hybrid" or cutoff > 0:
        _, lexical = _search.rank(
            conn, query, site_key=site_key, limit=LEXICAL_CANDIDATES, one_per_page=False
        )
    if cutoff > 0 and not pinned_ids and _relevance(dense, lexical, meta) < cutoff:
        logger.debug(
            "search.cutoff", extra={"query": text, "best_cosine": round(dense[0][1], 3) if dense else 0}
        )
        return []
    hits: dict[tuple[str, str, str], _Hit] = {}
    for rank, (sid, cos) in enumerate(dense, 1):
        if sid not in meta:
            continue
        key = _key(meta[sid])
        hit = hits.setdefault(key, _Hit(key, section_id=sid))
        hit.cosine = cos
        hit.score += W_DENSE / (RRF_K + rank)
    # 4. fusion
    if mode == "hybrid" and FUSION == "linear":
        _fuse_linear(hits, lexical, matrix.cosines(qvec, [c.section_id for c in lexical]), meta)
    elif mode == "hybrid":
        for rank, res in enumerate(lexical, 1):
            key = (res.site_key, res.url, res.anchor)
            hit = hits.setdefault(key, _Hit(key))
            hit.lexical = res
            hit.score += W_LEXICAL / (RRF_K + rank)
    # 5. exact identifier definitions first
    for sid in pinned_ids:
        if sid in meta:
            key = _key(meta[sid])
            hit = hits.setdefault(key, _Hit(key, section_id=sid))
            hit.pinned = True
    ranked = sorted(hits.values(), key=lambda h: (not h.pinned, -h.score))
    # 6. one best section per page
    chosen = _search.best_per_page(ranked, lambda h: (h.key[0], h.key[1]), limit, one_per_page)
    return _results(conn, parsed, chosen, meta)


def _fuse_linear(
    hits: dict[tuple[str, str, str], _Hit],
    lexical: list[Candidate],
    cosines: dict[int, float],
    meta: dict[int, Candidate],
) -> None:
    """Score = lexical score relative to the best + W_COS x cosine; every candidate gets both parts."""
    top = max((c.score for c in lexical), default=0.0) or 1.0
    for hit in hits.values():  # dense candidates: cosine only so far
        hit.score = W_COS * (hit.cosine or 0.0)
    for cand in lexical:
        key = (cand.site_key, cand.url, cand.anchor)
        hit = hits.setdefault(key, _Hit(key, section_id=cand.section_id))
        hit.lexical = cand
        hit.cosine = cosines.get(cand.section_id, hit.cosine)
        hit.score = cand.score / top + W_COS * (hit.cosine or 0.0)


def _relevance(
    dense: list[tuple[int, float]],
    lexical: list[Candidate],
    meta: dict[int, Candidate],
) -> float:
    """How much the docs seem to cover the query: best cosine, agreement of the rankings, lexical strength.

    Cosine alone overlaps (an on-topic question worded far from the page vs.
    an off-topic one sharing a few words); the two rankings pointing at the
    same pages, and query words that are specific in this corpus, are
    evidence the docs really are about the question.
    """
    if not dense:
        return 0.0
    dense_pages = {_key(meta[sid])[:2] for sid, _ in dense[:AGREE_TOP] if sid in meta}
    lexical_pages: list[tuple[str, str]] = []
    for res in lexical:
        page = (res.site_key, res.url)
        if page not in lexical_pages:
            lexical_pages.append(page)
        if len(lexical_pages) >= AGREE_TOP:
            break
    best_lexical = min(max((c.score for c in lexical), default=0.0), LEX_CAP)
    agreement = len(dense_pages.intersection(lexical_pages))
    return dense[0][1] + W_AGREE * agreement + W_LEX * best_lexical


def _defining_sections(conn: apsw.Connection, parsed: ParsedQuery, site_key: str | None) -> list[int]:
    """Live sections defining the identifier when the query is just that identifier (``asyncio.TaskGroup``).

    Only then: for a question that also names an API, the lexical ranking
    already favours definitions, and pinning them ahead of it measured worse.
    """
    words = parsed.text.strip("`'\"()").removesuffix("()").split()
    if len(words) != 1 or not parsed.identifiers:
        return []
    marks = ", ".join("?" for _ in parsed.identifiers)
    where = " AND p.site_key = ?" if site_key else ""
    params: tuple[Any, ...] = (*parsed.identifiers, site_key) if site_key else tuple(parsed.identifiers)
    rows = fetch_all(
        conn,
        "SELECT s.id FROM section_idents i JOIN sections s ON s.id = i.section_id"
        " JOIN pages p ON p.id = s.page_id"
        " JOIN sites st ON st.site_key = p.site_key AND st.live_generation = p.generation"
        f" WHERE i.ident IN ({marks}) AND i.strength >= {PIN_STRENGTH}{where}"
        f" ORDER BY s.level, s.id LIMIT {MAX_PINNED}",
        params,
    )
    return [int(r[0]) for r in rows]


def _section_meta(conn: apsw.Connection, ids: list[int]) -> dict[int, Candidate]:
    """The dense candidates' metadata (no text: snippets are made for the winners only)."""
    if not ids:
        return {}
    rows = fetch_all(
        conn,
        "SELECT s.id, p.site_key, p.url, s.anchor, p.title, s.heading_path, s.level, p.crawled_at"
        " FROM sections s JOIN pages p ON p.id = s.page_id WHERE s.id IN (SELECT value FROM json_each(?))",
        (json.dumps(ids),),
    )
    return {int(r[0]): _search.Candidate.from_row(r) for r in rows}


def _key(cand: Candidate) -> tuple[str, str, str]:
    return (cand.site_key, cand.url, cand.anchor)


def _results(
    conn: apsw.Connection, parsed: ParsedQuery, chosen: list[_Hit], meta: dict[int, Candidate]
) -> list[SearchResult]:
    """Each winner as a result: its lexical candidate, or the dense one's metadata, with a snippet."""
    winners: list[tuple[Candidate, float]] = []
    for hit in chosen:
        if hit.lexical is not None:
            winners.append((hit.lexical, hit.score))
        else:
            assert hit.section_id is not None
            winners.append((meta[hit.section_id], hit.score))
    found = _search.snippets_for(conn, parsed, [cand.section_id for cand, _ in winners])
    return [cand.result(found.get(cand.section_id, ""), score) for cand, score in winners]
