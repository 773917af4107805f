"""Vector storage, fusion, identifier pinning, one-per-page and the relevance cutoff, with a fake model."""

from __future__ import annotations

import math
import re
import zlib
from typing import TYPE_CHECKING, Any

import pytest

from doc_scraper.errors import QueryError, SearchError
from doc_scraper.index import embed, hybrid, vectors
from doc_scraper.index.db import open_connection
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import PageRecord, Section

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from pathlib import Path

    import apsw

SITE = "py"
NOW = "2026-01-01T00:00:00Z"
DIM = 48

# Words that mean the same thing share a dimension: the fake model "understands" paraphrase.
_TOPICS = {
    0: "concurrently concurrent parallel simultaneously gather several many coroutines coroutine task tasks",
    1: "scratch temporary temp directory folder removed deleted cleanup automatically",
    2: "environment variable envvar bytecode pyc",
    3: "rename move replace atomically file files",
    4: "group taskgroup groups",
}
_WORD_TOPIC = {w: t for t, words in _TOPICS.items() for w in words.split()}


class FakeEmbedder:
    """Topic words count 1 on their topic; other words 0.3 on a hashed dimension."""

    def __init__(self, model_id: str = "fake/1") -> None:
        self._model_id = model_id
        self.calls: list[int] = []

    @property
    def model_id(self) -> str:
        return self._model_id

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        out = []
        for text in texts:
            vec = [0.0] * DIM
            for word in re.findall(r"[a-z]+", text.lower()):
                if word in _WORD_TOPIC:
                    vec[_WORD_TOPIC[word]] += 1.0
                else:
                    vec[8 + zlib.crc32(word.encode()) % (DIM - 8)] += 0.3
            norm = math.sqrt(sum(v * v for v in vec)) or 1.0
            out.append([v / norm for v in vec])
        return out


PAGES: dict[str, tuple[str, list[Section]]] = {
    "http://d/asyncio-task.html": (
        "Coroutines and Tasks",
        [
            Section("coroutines", ("Coroutines and Tasks",), 1, "# Coroutines and Tasks\n\nHigh-level APIs."),
            Section(
                "running-tasks-concurrently",
                ("Coroutines and Tasks", "Running Tasks Concurrently"),
                2,
                "Run awaitable objects concurrently with gather; wait until all coroutines finish.",
            ),
            Section(
                "asyncio.TaskGroup",
                ("Coroutines and Tasks", "asyncio.TaskGroup"),
                3,
                "*class* asyncio.TaskGroup\n\nAn asynchronous context manager holding a group of tasks.",
            ),
        ],
    ),
    "http://d/tempfile.html": (
        "tempfile",
        [
            Section(
                "tempfile.TemporaryDirectory",
                ("tempfile", "tempfile.TemporaryDirectory"),
                3,
                "Create a temporary directory; it is removed automatically on cleanup.",
            ),
        ],
    ),
    "http://d/os.html": (
        "os",
        [
            Section("os.replace", ("os", "os.replace"), 3, "os.replace(src, dst): rename a file atomically."),
            Section(
                "os.rename", ("os", "os.rename"), 3, "os.rename(src, dst): rename the file or directory."
            ),
        ],
    ),
    "http://d/cmdline.html": (
        "Command line",
        [
            Section(
                "envvar-PYTHONDONTWRITEBYTECODE",
                ("Command line", "PYTHONDONTWRITEBYTECODE"),
                3,
                "If this environment variable is set, Python won't write .pyc bytecode files.",
            ),
        ],
    ),
}


async def _write(
    db: Path, pages: dict[str, tuple[str, list[Section]]], *, remove: Sequence[str] = ()
) -> None:
    writer = IndexWriter.open(db)
    crawl = await writer.begin_crawl(SITE, "full", NOW, fresh=False)
    for url, (title, sections) in pages.items():
        content = "\n\n".join(s.text for s in sections)
        record = PageRecord(
            url=url, title=title, content=content, content_hash=content, crawled_at=NOW, depth=1
        )
        await writer.upsert_page(crawl, SITE, record, sections)
    if remove:
        await writer.remove_pages(crawl, SITE, list(remove))
    await writer.finish_crawl(crawl, NOW, {"pages": len(pages)}, commit=True, retention=5)
    await writer.close()


@pytest.fixture
async def db(tmp_path: Path) -> Path:
    path = tmp_path / "index.db"
    await _write(path, PAGES)
    return path


@pytest.fixture
def conn(db: Path) -> Iterator[apsw.Connection]:
    c = open_connection(db, readonly=True)
    yield c
    c.close()


def _search(conn: apsw.Connection, db: Path, fake: FakeEmbedder, query: str, **kw: Any) -> list[Any]:
    return hybrid.search(conn, query, embedder=fake, db_key=str(db), **kw)


async def test_every_section_is_embedded_once_and_unchanged_text_is_never_embedded_again(db: Path) -> None:
    fake = FakeEmbedder()
    first = await embed.embed_pending(db, fake)
    assert (first.embedded, first.reused, first.model_changed) == (7, 0, False)
    again = embed.embed_pending_sync(db, fake)
    assert (again.embedded, again.reused) == (0, 0)
    # The page is rewritten (new section rows): one changed section goes through the model.
    title, sections = PAGES["http://d/os.html"]
    changed = [
        sections[0],
        Section("os.rename", ("os", "os.rename"), 3, "os.rename(src, dst): now different."),
    ]
    await _write(db, {"http://d/os.html": (title, changed)})
    third = embed.embed_pending_sync(db, fake)
    assert (third.embedded, third.reused, third.pruned) == (1, 1, 1)
    conn = open_connection(db, readonly=True)
    try:
        assert vectors.coverage(conn) == (7, 7)
        assert vectors.stored_model(conn) == "fake/1"
    finally:
        conn.close()


async def test_a_different_model_re_embeds_everything(db: Path) -> None:
    embed.embed_pending_sync(db, FakeEmbedder("fake/1"))
    stats = embed.embed_pending_sync(db, FakeEmbedder("fake/2"))
    assert stats.model_changed
    assert stats.embedded == 7


async def test_removed_pages_take_their_vectors_with_them(db: Path) -> None:
    embed.embed_pending_sync(db, FakeEmbedder())
    await _write(db, {}, remove=["http://d/os.html"])
    conn = open_connection(db, readonly=True)
    try:
        assert vectors.coverage(conn) == (5, 5)
        assert vectors.load_matrix(conn, str(db)).search([1.0] + [0.0] * (DIM - 1), 50).__len__() == 5
    finally:
        conn.close()


async def test_an_index_without_vectors_reports_lexical_mode(conn: apsw.Connection) -> None:
    assert vectors.stored_model(conn) is None
    assert embed.index_mode(conn) == "lexical"


async def test_dense_search_finds_a_paraphrase_that_shares_no_words(db: Path) -> None:
    fake = FakeEmbedder()
    embed.embed_pending_sync(db, fake)
    conn = open_connection(db, readonly=True)
    try:
        results = _search(conn, db, fake, "folder deleted by itself", mode="dense")
        assert results[0].anchor == "tempfile.TemporaryDirectory"
        assert results[0].snippet
        hybrid_results = _search(conn, db, fake, "simultaneously in parallel", mode="hybrid")
        assert (hybrid_results[0].url, hybrid_results[0].anchor) == (
            "http://d/asyncio-task.html",
            "running-tasks-concurrently",
        )
    finally:
        conn.close()


async def test_fusion_keeps_one_best_section_per_page_unless_asked(db: Path) -> None:
    fake = FakeEmbedder()
    embed.embed_pending_sync(db, fake)
    conn = open_connection(db, readonly=True)
    try:
        per_page = _search(conn, db, fake, "rename file atomically replace", mode="hybrid")
        urls = [r.url for r in per_page]
        assert len(urls) == len(set(urls))
        assert per_page[0].anchor == "os.replace"
        every = _search(conn, db, fake, "rename file atomically replace", mode="hybrid", one_per_page=False)
        assert [r.anchor for r in every if r.url == "http://d/os.html"] == ["os.replace", "os.rename"]
    finally:
        conn.close()


async def test_an_exact_identifier_definition_is_pinned_on_top(db: Path) -> None:
    fake = FakeEmbedder()
    embed.embed_pending_sync(db, fake)
    conn = open_connection(db, readonly=True)
    try:
        # Dense alone prefers the concurrency section (more topic words); the identifier names another.
        assert _search(conn, db, fake, "asyncio.TaskGroup", mode="dense")[0].anchor == "asyncio.TaskGroup"
        assert _search(conn, db, fake, "TaskGroup()", mode="hybrid")[0].anchor == "asyncio.TaskGroup"
    finally:
        conn.close()


async def test_an_off_topic_question_returns_nothing_when_the_cutoff_is_on(db: Path) -> None:
    fake = FakeEmbedder()
    embed.embed_pending_sync(db, fake)
    conn = open_connection(db, readonly=True)
    try:
        for query in ("how long to boil an egg", "who won the football match", "best pasta recipe"):
            assert _search(conn, db, fake, query, mode="hybrid", cutoff=0.325) == []
            assert _search(conn, db, fake, query, mode="hybrid", cutoff=0.0)  # off: the least bad come back
        # Lexical mode has no cutoff: a shared word still finds something.
        assert hybrid.search(conn, "rename a football", embedder=None, mode="lexical", cutoff=0.325)
        assert _search(conn, db, fake, "rename a file", mode="hybrid", cutoff=0.325)
    finally:
        conn.close()


async def test_the_site_filter_applies_to_dense_results(db: Path) -> None:
    fake = FakeEmbedder()
    embed.embed_pending_sync(db, fake)
    conn = open_connection(db, readonly=True)
    try:
        assert _search(conn, db, fake, "temporary folder", mode="dense", site_key="other") == []
        assert _search(conn, db, fake, "temporary folder", mode="dense", site_key=SITE)
    finally:
        conn.close()


def test_vectors_round_trip_through_blobs_and_rank_by_cosine() -> None:
    blob = vectors.to_blob([0.5, -0.25, 1.0])
    assert list(vectors.from_blob(blob)) == [0.5, -0.25, 1.0]
    matrix = vectors.VectorMatrix(
        [1, 2, 3],
        ["a", "a", "b"],
        [vectors.to_blob(v) for v in ([1.0, 0.0], [0.6, 0.8], [0.0, 1.0])],
    )
    assert [sid for sid, _ in matrix.search([0.0, 1.0], 2)] == [3, 2]
    assert [sid for sid, _ in matrix.search([0.0, 1.0], 2, site_key="a")] == [2, 1]


def test_embedded_text_starts_with_the_heading_path_and_drops_link_targets() -> None:
    text = vectors.embed_text("os > os.replace", "See [`os.rename()`](os.html#os.rename) **now**.")
    assert text == "os > os.replace: See os.rename() now ."


async def test_the_mode_is_lexical_until_the_index_has_vectors_and_the_model_loads(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeEmbedder("fake/1")
    monkeypatch.setattr(embed, "semantic_available", lambda: True)
    monkeypatch.setattr(embed, "load_embedder", lambda model=None, runtime=None: fake)
    conn = open_connection(db, readonly=True)
    try:
        assert hybrid.resolve_mode(conn) == ("lexical", None)
        with pytest.raises(SearchError, match="-mode lexical"):
            hybrid.resolve_mode(conn, "hybrid")
        with pytest.raises(QueryError, match="fuzzy"):
            hybrid.resolve_mode(conn, "fuzzy")
    finally:
        conn.close()
    embed.embed_pending_sync(db, fake)
    conn = open_connection(db, readonly=True)
    try:
        assert hybrid.resolve_mode(conn) == ("hybrid", fake)
        assert hybrid.resolve_mode(conn, "dense") == ("dense", fake)
        assert hybrid.resolve_mode(conn, "lexical") == ("lexical", None)
        monkeypatch.setattr(embed, "semantic_available", lambda: False)
        assert hybrid.resolve_mode(conn) == ("lexical", None)
    finally:
        conn.close()


async def test_vectors_of_another_model_are_not_searched_with_this_one(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embed.embed_pending_sync(db, FakeEmbedder("fake/old"))
    monkeypatch.setattr(embed, "semantic_available", lambda: True)
    monkeypatch.setattr(embed, "load_embedder", lambda model=None, runtime=None: FakeEmbedder("fake/new"))
    conn = open_connection(db, readonly=True)
    try:
        assert hybrid.resolve_mode(conn) == ("lexical", None)
        with pytest.raises(SearchError, match="crawl again"):
            hybrid.resolve_mode(conn, "hybrid")
    finally:
        conn.close()


async def test_an_open_connection_sees_vectors_change_when_another_connection_commits(db: Path) -> None:
    embed.embed_pending_sync(db, FakeEmbedder())
    conn = open_connection(db, readonly=True)
    try:
        assert len(vectors.load_matrix(conn, str(db))) == 7
        assert len(vectors.load_matrix(conn, str(db))) == 7  # unchanged: served from the cache
        await _write(db, {}, remove=["http://d/os.html"])
        assert len(vectors.load_matrix(conn, str(db))) == 5
    finally:
        conn.close()
