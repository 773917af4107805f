"""Operations every front end uses (CLI, MCP, watch, run).

Front ends call these and nothing below them; they take a loaded ``Config``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Callable

    from doc_scraper.config.schema import Config
    from doc_scraper.index.reader import IndexReader
    from doc_scraper.index.search import SearchResult
    from doc_scraper.models import CrawlProgress, CrawlSummary, ExtractOptions, ParsedPage

INDEX_FILENAME = "index.db"
SEARCH_MODES = ("lexical", "dense", "hybrid")
SEMANTIC_EXTRA = "pip install 'doc-scraper[semantic]'"


async def crawl_sites(
    config: Config,
    site_keys: list[str],
    *,
    mode: str = "full",
    stop: asyncio.Event | None = None,
    progress: Callable[[CrawlProgress], None] | None = None,
    embeddings: str | None = None,
) -> list[CrawlSummary]:
    """Crawl the given sites in parallel, sharing global and per-host limits.

    ``mode`` is "full" (fresh crawl, staged and swapped in on success),
    "resume" (continue an interrupted crawl) or "incremental" (conditional
    re-crawl of a finished one). Setting ``stop`` asks for a graceful stop:
    in-flight pages finish, state is flushed, and the crawl stays resumable.
    ``embeddings`` ("auto" or "off") overrides the config's setting for
    computing section embeddings after each site's index commit.
    """
    from doc_scraper.engine import run_crawls

    return await run_crawls(config, site_keys, mode=mode, stop=stop, progress=progress, embeddings=embeddings)


# -- search ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchStatus:
    """Which mode a search runs in by default, and why."""

    mode: str  # the default: "hybrid" or "lexical"
    reason: str
    semantic_installed: bool  # the embedding runtime imports (embed.semantic_available)
    index_has_vectors: bool
    embedding_model: str | None = None  # the model id the stored vectors were made with
    embedded_sections: int = 0  # live sections with a vector
    indexed_sections: int = 0  # live sections

    @property
    def available_modes(self) -> tuple[str, ...]:
        return SEARCH_MODES if self.mode == "hybrid" else ("lexical",)


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """Ranked results and the mode that produced them."""

    mode: str
    results: list[SearchResult] = field(default_factory=list)


def index_path(config: Config) -> Path:
    return Path(config.state_dir) / INDEX_FILENAME


def search_status(config: Config) -> SearchStatus:
    """The default search mode for ``config``'s index and the reason (blocking: call it in a thread)."""
    return index_search_status(index_path(config))


def index_search_status(db_path: Path) -> SearchStatus:
    """The default search mode of the index at ``db_path`` (hybrid needs the extra and stored vectors)."""
    from doc_scraper.index import embed, vectors
    from doc_scraper.index.db import open_connection

    installed = embed.semantic_available()
    if not Path(db_path).is_file():
        return SearchStatus(
            "lexical", "no search index yet; crawl a site first", installed, index_has_vectors=False
        )
    conn = open_connection(Path(db_path), readonly=True)
    try:
        model = vectors.stored_model(conn)
        done, total = vectors.coverage(conn)
    finally:
        conn.close()
    has_vectors = model is not None
    if installed and has_vectors:
        mode = "hybrid"
        reason = f"the semantic extra is installed and {done} of {total} sections have embeddings"
    elif has_vectors:
        mode = "lexical"
        reason = f"the index has embeddings but the semantic extra is not installed here; {SEMANTIC_EXTRA}"
    elif installed:
        mode = "lexical"
        reason = (
            "the semantic extra is installed but the index has no embeddings yet; they are computed "
            "after the next crawl"
        )
    else:
        mode = "lexical"
        reason = f"the semantic extra is not installed ({SEMANTIC_EXTRA}, then crawl again for hybrid search)"
    return SearchStatus(mode, reason, installed, has_vectors, model, done, total)


def check_search_mode(mode: str | None) -> str | None:
    """``mode`` normalised (None or "auto": the index's default); QueryError for an unknown one."""
    from doc_scraper.errors import QueryError

    if mode is None:
        return None
    value = mode.strip().lower()
    if value in ("", "auto"):
        return None
    if value not in SEARCH_MODES:
        raise QueryError(f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES)} (or auto)")
    return value


def resolve_search_mode(db_path: Path, mode: str | None = None) -> str:
    """The mode a search of ``db_path`` runs in; EmbeddingError naming the fix if ``mode`` cannot run.

    Blocking (it may load the embedding model, once per process): call it in a thread.
    """
    from doc_scraper.index import embed, hybrid, vectors
    from doc_scraper.index.db import open_connection

    requested = check_search_mode(mode)
    if requested == "lexical":
        return "lexical"
    installed = embed.semantic_available()
    if requested is None and not installed:
        return "lexical"
    conn = open_connection(Path(db_path), readonly=True)
    try:
        if requested is not None:
            _require_embeddings(requested, installed, has_vectors=vectors.stored_model(conn) is not None)
        chosen, _ = hybrid.resolve_mode(conn, requested)
        return chosen
    finally:
        conn.close()


def _require_embeddings(requested: str, installed: bool, *, has_vectors: bool) -> None:
    from doc_scraper.errors import EmbeddingError

    if installed and has_vectors:
        return
    if installed:
        problem = "this index has no section embeddings yet"
        fix = "crawl again (e.g. crawl -site KEY -incremental): sections are embedded after each crawl"
    elif has_vectors:
        problem = "the semantic extra is not installed"
        fix = SEMANTIC_EXTRA
    else:
        problem = "the semantic extra is not installed and this index has no section embeddings"
        fix = f"{SEMANTIC_EXTRA}, then crawl again so the sections get embeddings"
    raise EmbeddingError(f"{requested} search needs embeddings, but {problem}; {fix}; or use -mode lexical")


def search_in_index(
    reader: IndexReader,
    query: str,
    *,
    site_key: str | None = None,
    limit: int = 10,
    mode: str | None = None,
) -> SearchAnswer:
    """Search an open index in ``mode`` (None: its default); blocking, for a worker thread."""
    chosen = resolve_search_mode(reader.db_path, mode)
    results = reader.search(query, site_key=site_key, limit=limit, mode=chosen)
    return SearchAnswer(chosen, results)


def answer_query(
    config: Config, query: str, *, site_key: str | None = None, limit: int = 10, mode: str | None = None
) -> SearchAnswer:
    """Ranked sections for ``query`` from the local index (no network), with the mode that answered.

    Errors name the fix: an unknown site lists the valid keys, a missing index
    says which crawl to run first, a dense or hybrid search without embeddings
    says what to install and run.
    """
    from doc_scraper.errors import ConfigError, DocScraperError
    from doc_scraper.index.reader import IndexReader

    if site_key is not None and site_key not in config.sites:
        valid = ", ".join(sorted(config.sites)) or "(none)"
        raise ConfigError(f"unknown site {site_key!r} in {config.path}; valid keys: {valid}", key="-site")
    check_search_mode(mode)
    db_path = index_path(config)
    hint = f"run doc-scraper crawl -site {site_key or 'KEY'} first"
    if not db_path.is_file():
        raise DocScraperError(f"no search index yet at {db_path}; {hint}")
    reader = IndexReader.open(db_path)
    try:
        if site_key is not None and site_key not in reader.sites():
            raise DocScraperError(f"site {site_key!r} has no indexed pages yet; {hint}")
        return search_in_index(reader, query, site_key=site_key, limit=limit, mode=mode)
    finally:
        reader.close()


def search_docs(
    config: Config, query: str, *, site_key: str | None = None, limit: int = 10, mode: str | None = None
) -> list[SearchResult]:
    """Ranked sections for ``query`` (see ``answer_query``, which also says which mode answered)."""
    return answer_query(config, query, site_key=site_key, limit=limit, mode=mode).results


def extract_page(body: bytes, url: str, options: ExtractOptions, charset: str | None = None) -> ParsedPage:
    """Convert one HTML page with the crawl's own code path (detection included)."""
    from doc_scraper.worker import parse_page

    return parse_page(body, url, options, charset)
