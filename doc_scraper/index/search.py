"""Section search: FTS5 candidates re-scored in Python.

Two stages. ``search_sql`` builds the candidate query: bm25 over every
section, weighted towards page title and heading path; ``sections_sql`` keeps
the top ``CANDIDATES`` of the live generations. ``search`` runs both, adds
sections whose identifiers match the query exactly (``section_idents``), and
re-scores every candidate with what bm25 cannot see: the idf-weighted share
of distinct query terms a section holds (in its text, its heading path),
whether it defines a query identifier, whether adjacent query terms occur
close together, and how well the rest of its page matches. Then it keeps the
best section per page and builds snippets for the winners only.

Measured with ``benchmarks/bench_search.py`` and the shared search_eval tool
on search-python.jsonl; the weights below are the result, not guesses.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import re
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import apsw

from doc_scraper.index import snippets
from doc_scraper.index.db import cacheable, change_version, fetch_all, fetch_one
from doc_scraper.index.query import ParsedQuery, parse_query

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    Tokenizer = Callable[..., list[tuple[int, int, str]]]

logger = logging.getLogger(__name__)
T = TypeVar("T")

CANDIDATES = 300
PREFILTER_FACTOR = 2  # FTS5 rows ranked before the joins, per candidate wanted
MAX_LIMIT = 100
# bm25 column weights: title, heading_text, text, identifiers
BM25_WEIGHTS = (6.0, 4.0, 1.0, 1.5)
# Re-scoring weights, tuned on search-python.jsonl (see benchmarks/bench_search.py).
W_COVERAGE = 1.0  # idf-weighted share of query terms in the section
W_HEADING = 1.0  # ... in its own headings (the path below the page's top heading)
# Page-title words are not counted again here: bm25 already weights the title column, and a second
# bonus lifted every section of a page whose title matched (measured: MRR@10 0.860 with, 0.882 without).
W_IDENT_DEFINES = 1.0  # the section's anchor or heading is a query identifier
W_IDENT_MENTIONS = 0.2  # its text mentions one
W_PROXIMITY = 0.5  # share of adjacent query-term pairs found within PAIR_DISTANCE tokens
W_PAGE = 0.3  # times the page's next-best section scores
PAGE_SECTIONS = 3
# Release notes mention every API they touch, in a few words each; an agent asking how something
# works wants the reference or guide page. They are ranked lower, never dropped.
RELEASE_NOTES_FACTOR = 0.85
_RELEASE_NOTES_RE = re.compile(
    r"(?:^|[/_.-])(?:whats?[-_]?new|changelog|changes|release[-_]?notes|releases|news|history)(?:[/_.-]|$)",
    re.IGNORECASE,
)
_RELEASE_TITLE_RE = re.compile(
    r"^(?:what'?s new|changelog|change log|release notes|changes)\b", re.IGNORECASE
)
PAIR_DISTANCE = 3
MAX_PAIRS = 8


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One hit: a section of a page."""

    site_key: str
    url: str  # the page URL, without fragment
    anchor: str  # "" = page top
    title: str  # the page title
    heading_path: tuple[str, ...]
    snippet: str  # matches marked [like this]
    score: float  # higher is better
    crawled_at: str


@dataclass(slots=True)
class Candidate:
    section_id: int
    site_key: str
    url: str
    anchor: str
    title: str
    heading_path: str
    level: int
    crawled_at: str
    bm25: float = 0.0  # positive, higher is better
    ident: int = 0  # 2: defines a query identifier, 1: mentions one
    pairs: int = 0  # adjacent query-term pairs found close together
    # per query term: bit 1 the section holds it, bit 2 its own headings do
    terms: list[int] = field(default_factory=list)
    score: float = 0.0

    @classmethod
    def from_row(cls, row: Any, bm25: float = 0.0) -> Candidate:
        """From a row starting (id, site_key, url, anchor, title, heading_path, level, crawled_at)."""
        section_id, site_key, url, anchor, title, heading_path, level, crawled_at = row[:8]
        return cls(section_id, site_key, url, anchor, title, heading_path, level, crawled_at, bm25=bm25)

    def result(self, snippet: str, score: float | None = None) -> SearchResult:
        return SearchResult(
            site_key=self.site_key,
            url=self.url,
            anchor=self.anchor,
            title=self.title,
            heading_path=_path(self.heading_path),
            snippet=snippet,
            score=round(self.score if score is None else score, 4),
            crawled_at=self.crawled_at,
        )


@dataclass(slots=True)
class _IndexState:
    """What the queries on one connection share until the index changes (counts, tokenizer, heading stems)."""

    version: tuple[int, int]  # db.change_version when built
    tok: Tokenizer
    total_sections: int | None = None
    foreign_share: dict[str | None, float] = field(default_factory=dict)
    heading_stems: dict[str, tuple[str, ...]] = field(default_factory=dict)  # heading_path JSON -> own stems


_MEMO_LIMIT = 100_000  # heading stems kept per connection (one entry per distinct heading path)
_STATES: weakref.WeakKeyDictionary[apsw.Connection, _IndexState] = weakref.WeakKeyDictionary()


def _state(conn: apsw.Connection) -> _IndexState:
    """The cached state of ``conn``, rebuilt when any connection (this one included) changed the database.

    A state built inside a write connection's transaction is used once, never
    kept: those writes may still be rolled back.
    """
    version = change_version(conn)
    state = _STATES.get(conn)
    if state is not None and state.version == version:
        return state
    state = _IndexState(version, snippets.tokenizer(conn))
    if cacheable(conn):
        _STATES[conn] = state
    return state


def search_sql(*, limit: int) -> str:
    """Stage 1: the best ``limit`` sections matching ``?1`` by weighted bm25 (FTS5 only, no joins)."""
    weights = ", ".join(f"{w:g}" for w in BM25_WEIGHTS)
    return (
        f"SELECT rowid, bm25(sections_fts, {weights}) AS rank_score FROM sections_fts"
        f" WHERE sections_fts MATCH ? ORDER BY rank_score LIMIT {int(limit)}"
    )


def sections_sql(*, site_filter: bool) -> str:
    """Stage 2: metadata of the candidate sections (JSON id list ``?1``) in live generations."""
    where = " AND p.site_key = ?2" if site_filter else ""
    return (
        "SELECT s.id, p.site_key, p.url, s.anchor, p.title, s.heading_path, s.level, p.crawled_at"
        " FROM sections s JOIN pages p ON p.id = s.page_id"
        " JOIN sites st ON st.site_key = p.site_key AND st.live_generation = p.generation"
        f" WHERE s.id IN (SELECT value FROM json_each(?1)){where}"
    )


def search(
    conn: apsw.Connection,
    query: str,
    *,
    site_key: str | None = None,
    limit: int = 10,
    one_per_page: bool = True,
) -> list[SearchResult]:
    """Run ``query`` against the live index; never raises for odd query text."""
    parsed, chosen = rank(conn, query, site_key=site_key, limit=limit, one_per_page=one_per_page)
    found = _snippets(conn, parsed, [c.section_id for c in chosen]) if chosen else {}
    return [c.result(found.get(c.section_id, "")) for c in chosen]


def rank(
    conn: apsw.Connection,
    query: str,
    *,
    site_key: str | None = None,
    limit: int = 10,
    one_per_page: bool = True,
) -> tuple[ParsedQuery, list[Candidate]]:
    """The parsed query and the best ``limit`` sections, without snippets (the costly part)."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    # A lone surrogate (valid JSON from an MCP client) cannot reach SQLite as UTF-8.
    query = (query or "").encode("utf-8", "replace").decode("utf-8")
    parsed = parse_query(query)
    if not parsed.terms and not parsed.identifiers:
        return parsed, []
    match = parsed.match
    try:
        candidates = _fts_candidates(conn, match, site_key)
    except apsw.SQLError:
        if not parsed.fallback:
            return parsed, []
        match = parsed.fallback  # the user's FTS5 syntax was invalid: search its words instead
        candidates = _fts_candidates(conn, match, site_key)
    _add_identifier_candidates(conn, parsed, site_key, candidates)
    if not candidates:
        return parsed, []
    weights = _term_info(conn, parsed, candidates)
    n_pairs = _pair_info(conn, parsed, candidates)
    ranked = _rescore(weights, n_pairs, list(candidates.values()))
    return parsed, best_per_page(ranked, lambda c: (c.site_key, c.url), limit, one_per_page)


def best_per_page(
    ranked: Iterable[T], page_of: Callable[[T], tuple[str, str]], limit: int, one_per_page: bool
) -> list[T]:
    """The first ``limit`` of ``ranked``, skipping a page's later sections when ``one_per_page``."""
    chosen: list[T] = []
    pages_seen: set[tuple[str, str]] = set()
    for item in ranked:
        page = page_of(item)
        if one_per_page and page in pages_seen:
            continue
        pages_seen.add(page)
        chosen.append(item)
        if len(chosen) >= limit:
            break
    return chosen


def snippets_for(conn: apsw.Connection, parsed: ParsedQuery, ids: list[int]) -> dict[int, str]:
    """Highlighted snippets of the given sections, by section id."""
    return _snippets(conn, parsed, ids) if ids else {}


def _fts_candidates(conn: apsw.Connection, match: str, site_key: str | None) -> dict[int, Candidate]:
    if not match:
        return {}
    fetch = CANDIDATES * PREFILTER_FACTOR
    ranked = fetch_all(conn, search_sql(limit=fetch), (match,))
    if len(ranked) == fetch and _cached_foreign_share(conn, site_key) > 0.5:
        # Most indexed rows belong to other sites or a staging generation: rank them all.
        ranked = fetch_all(conn, search_sql(limit=1_000_000), (match,))
    bm25 = {int(r[0]): -float(r[1]) for r in ranked}
    ids = list(bm25)
    out: dict[int, Candidate] = {}
    # Metadata for the best CANDIDATES first; more only if the live-generation or site filter dropped some.
    for chunk in (ids[:CANDIDATES], ids[CANDIDATES:]):
        if not chunk or len(out) >= CANDIDATES:
            break
        params: tuple[Any, ...] = (json.dumps(chunk), site_key) if site_key else (json.dumps(chunk),)
        for row in conn.execute(sections_sql(site_filter=bool(site_key)), params):
            out[row[0]] = Candidate.from_row(row, bm25=bm25[row[0]])
    if len(out) > CANDIDATES:
        keep = sorted(out.values(), key=lambda c: -c.bm25)[:CANDIDATES]
        out = {c.section_id: c for c in keep}
    return out


def _cached_foreign_share(conn: apsw.Connection, site_key: str | None) -> float:
    state = _state(conn)
    share = state.foreign_share.get(site_key)
    if share is None:
        share = state.foreign_share[site_key] = _foreign_share(conn, site_key)
    return share


def _foreign_share(conn: apsw.Connection, site_key: str | None) -> float:
    """Share of indexed sections outside the searched live generation(s)."""
    row = fetch_one(
        conn,
        "SELECT count(*), sum(CASE WHEN st.site_key IS NOT NULL AND (?1 IS NULL OR p.site_key = ?1)"
        " THEN 1 ELSE 0 END) FROM pages p LEFT JOIN sites st ON st.site_key = p.site_key"
        " AND st.live_generation = p.generation",
        (site_key,),
    )
    total, ours = (int(row[0] or 0), int(row[1] or 0)) if row else (0, 0)
    return 1.0 - ours / total if total else 0.0


def _add_identifier_candidates(
    conn: apsw.Connection, parsed: ParsedQuery, site_key: str | None, candidates: dict[int, Candidate]
) -> None:
    if not parsed.identifiers:
        return
    marks = ", ".join("?" for _ in parsed.identifiers)
    where = " AND p.site_key = ?" if site_key else ""
    params: tuple[Any, ...] = (*parsed.identifiers, site_key) if site_key else tuple(parsed.identifiers)
    sql = (
        f"SELECT s.id, p.site_key, p.url, s.anchor, p.title, s.heading_path, s.level, p.crawled_at,"
        f" max(i.strength) FROM section_idents i JOIN sections s ON s.id = i.section_id"
        f" JOIN pages p ON p.id = s.page_id"
        f" JOIN sites st ON st.site_key = p.site_key AND st.live_generation = p.generation"
        f" WHERE i.ident IN ({marks}){where} GROUP BY s.id ORDER BY max(i.strength) DESC LIMIT {CANDIDATES}"
    )
    for row in conn.execute(sql, params):
        cand = candidates.get(row[0])
        if cand is None:
            cand = Candidate.from_row(row)
            candidates[row[0]] = cand
        cand.ident = max(cand.ident, int(row[8]))


def _term_info(conn: apsw.Connection, parsed: ParsedQuery, candidates: dict[int, Candidate]) -> list[float]:
    """Which query terms each candidate contains, in its text and in its headings; returns term weights.

    Presence in the section comes from one FTS5 lookup per term, intersected
    with the candidates inside SQLite (far cheaper than asking FTS5 about each
    candidate row); presence in the section's own headings from tokenizing
    them here. Weights are idf-like: rare terms count more.
    """
    state = _state(conn)
    if state.total_sections is None:
        total_row = fetch_one(conn, "SELECT count(*) FROM sections")
        state.total_sections = int(total_row[0]) if total_row else 0
    total = max(1, state.total_sections)
    tok = state.tok
    ids = json.dumps(list(candidates))
    n_terms = len(parsed.terms)
    for cand in candidates.values():
        cand.terms = [0] * n_terms
    in_heading = _heading_stems(state, candidates)
    wanted_by_term = [snippets.query_stems(tok, [term]) for term in parsed.terms]
    doc_counts = _document_frequencies(conn, set().union(*wanted_by_term))
    weights: list[float] = []
    for i, (term, wanted) in enumerate(zip(parsed.terms, wanted_by_term, strict=True)):
        quoted = '"' + term.replace('"', '""') + '"'
        # The rarest token of a multi-token term; 0 for a term without tokens.
        df = min(doc_counts.get(stem, 0) for stem in wanted) if wanted else 0
        weights.append(math.log(1 + total / (1 + df)))
        if df or not wanted:  # df 0: a token of the term is in no section, so FTS5 would find none
            inside = fetch_all(
                conn,
                "SELECT value FROM json_each(?2) WHERE value IN"
                " (SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?1)",
                ("{heading_text text identifiers}: " + quoted, ids),
            )
            for (sid,) in inside:
                candidates[sid].terms[i] |= 1
        if not wanted:
            continue
        for sid in set.intersection(*(in_heading.get(stem, set()) for stem in wanted)):
            candidates[sid].terms[i] |= 2
    return weights


def _heading_stems(state: _IndexState, candidates: dict[int, Candidate]) -> dict[str, set[int]]:
    """Inverted map over the candidates: stem -> sections whose own headings hold it."""
    in_heading: dict[str, set[int]] = {}
    memo = state.heading_stems
    for sid, cand in candidates.items():
        stems = memo.get(cand.heading_path)
        if stems is None:
            # Headings below the page's top one: the top heading names the page, not this section.
            path = _path(cand.heading_path)
            own_path = " ".join(path[1:] if len(path) > 1 else path)
            tokens = state.tok(own_path.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None)
            stems = tuple(dict.fromkeys(token[2] for token in tokens))
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            memo[cand.heading_path] = stems
        for stem in stems:
            found = in_heading.get(stem)
            if found is None:
                in_heading[stem] = {sid}
            else:
                found.add(sid)
    return in_heading


def _document_frequencies(conn: apsw.Connection, stems: set[str]) -> dict[str, int]:
    """Sections holding each stem, from the FTS5 vocabulary (stems not indexed are left out)."""
    if not stems:
        return {}
    marks = ", ".join("?" for _ in stems)
    rows = fetch_all(conn, f"SELECT term, doc FROM sections_vocab WHERE term IN ({marks})", tuple(stems))
    return {str(term): int(doc) for term, doc in rows}


def _pair_info(conn: apsw.Connection, parsed: ParsedQuery, candidates: dict[int, Candidate]) -> int:
    """Count, per candidate, the adjacent query-term pairs it holds close together; returns the pair count."""
    pairs = list(zip(parsed.terms, parsed.terms[1:], strict=False))[:MAX_PAIRS]
    for a, b in pairs:
        near = f'NEAR("{_fts_escape(a)}" "{_fts_escape(b)}", {PAIR_DISTANCE})'
        for (rowid,) in conn.execute("SELECT rowid FROM sections_fts WHERE sections_fts MATCH ?", (near,)):
            cand = candidates.get(rowid)
            if cand is not None:
                cand.pairs += 1
    return len(pairs)


def _fts_escape(term: str) -> str:
    return term.replace('"', '""')


def _rescore(weights: list[float], n_pairs: int, cands: list[Candidate]) -> list[Candidate]:
    """Final score = normalised bm25 + term coverage + heading coverage + identifier + proximity + page.

    Coverage terms are idf-weighted shares of the query's distinct terms, so a
    section holding every rare term beats one repeating a common term. The
    page part adds the page's next-best sections, favouring pages that are
    about the query over a stray mention.
    """
    top_bm25 = max((c.bm25 for c in cands), default=0.0) or 1.0
    total_weight = sum(weights) or 1.0
    # Many candidates share a pattern of held terms: compute its coverage once.
    coverages: dict[tuple[int, ...], tuple[float, float]] = {}
    for cand in cands:
        key = tuple(cand.terms)
        cov = coverages.get(key)
        if cov is None:
            coverage = sum(w for w, t in zip(weights, key, strict=False) if t) / total_weight
            heading_cov = sum(w for w, t in zip(weights, key, strict=False) if t & 2) / total_weight
            cov = coverages[key] = (W_COVERAGE * coverage, W_HEADING * heading_cov)
        score = cand.bm25 / top_bm25 + cov[0] + cov[1]
        score += W_IDENT_DEFINES if cand.ident == 2 else W_IDENT_MENTIONS if cand.ident == 1 else 0.0
        cand.score = score
    by_page: dict[tuple[str, str], list[float]] = {}
    for cand in cands:
        page = (cand.site_key, cand.url)
        scores = by_page.get(page)
        if scores is None:
            by_page[page] = [cand.score]
        else:
            scores.append(cand.score)
    page_bonus: dict[tuple[str, str], float] = {}
    for page, scores in by_page.items():
        scores.sort(reverse=True)
        page_bonus[page] = W_PAGE * sum(scores[1:PAGE_SECTIONS])
    for cand in cands:
        final = cand.score + page_bonus[(cand.site_key, cand.url)]
        if n_pairs:  # proximity counts for the section itself, not for its page
            final += W_PROXIMITY * cand.pairs / n_pairs
        if _is_release_notes(cand.url, cand.title):
            final *= RELEASE_NOTES_FACTOR
        cand.score = final
    return sorted(cands, key=lambda c: -c.score)


@functools.lru_cache(maxsize=65536)
def _is_release_notes(url: str, title: str) -> bool:
    path = url.split("://", 1)[-1].partition("/")[2].split("?", 1)[0]
    return bool(_RELEASE_NOTES_RE.search(path) or _RELEASE_TITLE_RE.match(title.strip()))


def _snippets(conn: apsw.Connection, parsed: ParsedQuery, ids: list[int]) -> dict[int, str]:
    if not ids:
        return {}
    tok = _state(conn).tok
    stems = snippets.query_stems(tok, parsed.terms)
    rows = fetch_all(
        conn, "SELECT id, text FROM sections WHERE id IN (SELECT value FROM json_each(?))", (json.dumps(ids),)
    )
    return {int(sid): snippets.make_snippet(tok, str(text), stems) for sid, text in rows}


@functools.lru_cache(maxsize=65536)
def _path(heading_json: str) -> tuple[str, ...]:
    try:
        value = json.loads(heading_json)
    except ValueError:
        return ()
    return tuple(str(v) for v in value) if isinstance(value, list) else ()
