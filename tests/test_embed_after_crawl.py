"""The engine embeds sections after each committed crawl: only changed ones, stoppable, never fatal."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from doc_scraper import api, engine
from doc_scraper.errors import DocScraperError, EmbeddingError
from doc_scraper.index import embed, hybrid, vectors
from doc_scraper.index.db import open_connection
from tests.docsite import DocSite, page_html, start
from tests.test_engine import make_config
from tests.test_hybrid import FakeEmbedder

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

pytestmark = pytest.mark.e2e


@pytest.fixture
async def site() -> AsyncIterator[tuple[DocSite, str]]:
    docs = DocSite.linked(6)
    server = await start(docs)
    try:
        yield docs, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


class Passes:
    """Records every embedding pass (db path, live sections at that moment) and runs it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[Path, int]] = []
        real = embed.embed_pending_sync

        def spy(db_path: Path, embedder: Any, **kwargs: Any) -> embed.EmbedStats:
            self.calls.append((Path(db_path), coverage(Path(db_path))[1]))
            return real(db_path, embedder, **kwargs)

        monkeypatch.setattr(embed, "embed_pending_sync", spy)


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> Passes:
    return Passes(monkeypatch)


def install(monkeypatch: pytest.MonkeyPatch, embedder: Any) -> None:
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: True)
    monkeypatch.setattr(embed, "load_embedder", lambda model=None, runtime=None: embedder)
    # The relevance cutoff is calibrated for the real model; these tests check the wiring.
    defaults = hybrid.search.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "cutoff", 0.0)


def coverage(db: Path) -> tuple[int, int]:
    conn = open_connection(db, readonly=True)
    try:
        return vectors.coverage(conn)
    finally:
        conn.close()


def events(caplog: pytest.LogCaptureFixture, name: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == name]


@pytest.fixture(autouse=True)
def _engine_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="doc_scraper.engine")


@pytest.fixture(autouse=True)
def _no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    # Whatever this machine has installed: tests that want the extra patch it in.
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: False)


async def test_a_crawl_embeds_its_sections_after_the_index_commit(
    tmp_path: Path,
    site: tuple[DocSite, str],
    passes: Passes,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _docs, base = site
    fake = FakeEmbedder()
    install(monkeypatch, fake)
    config = make_config(tmp_path, base)
    db = Path(config.state_dir) / "index.db"
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    # One pass, on this state dir's index, when the crawl's sections were already live.
    [(path, live_then)] = passes.calls
    assert path == db
    done, total = coverage(db)
    assert live_then == total > 0
    assert done == total
    [record] = events(caplog, "index.embed.done")
    assert record.__dict__["site"] == "demo"
    assert record.__dict__["model"] == "fake/1"
    assert (record.__dict__["embedded"], record.__dict__["reused"]) == (total, 0)
    assert record.__dict__["seconds"] >= 0
    # The crawl summary does not wait for, nor count, the embedding.
    assert events(caplog, "crawl.finished")[0].created <= record.created


async def test_a_recrawl_embeds_only_the_sections_that_changed(
    tmp_path: Path,
    site: tuple[DocSite, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    docs, base = site
    fake = FakeEmbedder()
    install(monkeypatch, fake)
    config = make_config(tmp_path, base)
    [first] = await api.crawl_sites(config, ["demo"])
    assert first.ok, first.error
    _, total = coverage(Path(config.state_dir) / "index.db")
    docs.pages["/docs/p3.html"] = page_html(
        "Page 3", "Rewritten: a new paragraph.", ["p4.html", "index.html"]
    )
    caplog.clear()
    [second] = await api.crawl_sites(config, ["demo"], mode="incremental")
    assert second.ok and second.changed == 1, second
    [record] = events(caplog, "index.embed.done")
    assert (record.__dict__["embedded"], record.__dict__["reused"]) == (1, 0)  # unchanged rows kept theirs
    assert coverage(Path(config.state_dir) / "index.db") == (total, total)
    # A full re-crawl writes every section anew: each finds its vector in the cache.
    caplog.clear()
    [third] = await api.crawl_sites(config, ["demo"])
    assert third.ok, third.error
    [record] = events(caplog, "index.embed.done")
    assert (record.__dict__["embedded"], record.__dict__["reused"]) == (0, total)
    assert fake.calls == [total, 1]


async def test_embeddings_off_or_the_extra_missing_skips_the_step(
    tmp_path: Path,
    site: tuple[DocSite, str],
    passes: Passes,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _docs, base = site
    config = make_config(tmp_path, base)
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: False)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    install(monkeypatch, FakeEmbedder())
    [summary] = await api.crawl_sites(config, ["demo"], embeddings="off")
    assert summary.ok, summary.error
    assert passes.calls == []
    assert coverage(Path(config.state_dir) / "index.db")[0] == 0
    assert events(caplog, "index.embed.done") == []
    for off in (
        make_config(tmp_path, base, embeddings="off"),
        make_config(tmp_path, base, globals={"embeddings": "off"}),
    ):
        [summary] = await api.crawl_sites(off, ["demo"])
        assert summary.ok, summary.error
    assert passes.calls == []
    with pytest.raises(DocScraperError, match="embeddings must be one of auto, off"):
        await api.crawl_sites(config, ["demo"], embeddings="sometimes")


class ExplodingEmbedder(FakeEmbedder):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise RuntimeError("model exploded")


async def test_a_failing_embedding_is_a_warning_and_the_crawl_and_lexical_search_stay_good(
    tmp_path: Path,
    site: tuple[DocSite, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _docs, base = site
    install(monkeypatch, ExplodingEmbedder())
    config = make_config(tmp_path, base)
    [summary] = await api.crawl_sites(config, ["demo"])
    assert summary.ok, summary.error
    [warning] = events(caplog, "index.embed.failed")
    assert warning.levelno == logging.WARNING
    assert "RuntimeError: model exploded" in warning.__dict__["error"]
    answer = api.answer_query(config, "Content of page number 3")
    assert answer.mode == "lexical"
    assert answer.results[0].url.endswith("/docs/p3.html")


async def test_a_model_that_cannot_load_is_a_warning_too(
    tmp_path: Path,
    site: tuple[DocSite, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _docs, base = site

    def missing(model: Any = None, runtime: Any = None) -> Any:
        raise EmbeddingError("no sentence-embedding model found on this machine")

    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: True)
    monkeypatch.setattr(embed, "load_embedder", missing)
    [summary] = await api.crawl_sites(make_config(tmp_path, base), ["demo"])
    assert summary.ok, summary.error
    [warning] = events(caplog, "index.embed.failed")
    assert "no sentence-embedding model found" in warning.__dict__["error"]


async def test_a_stop_during_embedding_keeps_finished_rounds_and_the_next_crawl_continues(
    tmp_path: Path,
    site: tuple[DocSite, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    _docs, base = site
    stop = asyncio.Event()

    class StoppingEmbedder(FakeEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            out = super().embed(texts)
            if len(self.calls) == 3:
                stop.set()  # as the first Ctrl-C does, here from inside the third model call
            return out

    fake = StoppingEmbedder()
    install(monkeypatch, fake)
    monkeypatch.setattr(engine, "EMBED_ROUND", 4)
    monkeypatch.setattr(engine, "EMBED_CHUNK", 2)
    config = make_config(tmp_path, base)
    db = Path(config.state_dir) / "index.db"
    [summary] = await api.crawl_sites(config, ["demo"], stop=stop)
    assert summary.ok, summary.error
    done, total = coverage(db)
    assert fake.calls == [2, 2, 2]
    assert done == 4 < total  # round 1 committed; round 2 stopped after its first chunk
    assert events(caplog, "index.embed.stopped")
    assert events(caplog, "index.embed.done") == []
    assert api.answer_query(config, "Content of page number 2").results  # the index is intact
    [again] = await api.crawl_sites(config, ["demo"], mode="incremental")
    assert again.ok, again.error
    assert coverage(db) == (total, total)
    [record] = events(caplog, "index.embed.done")
    assert record.__dict__["embedded"] + record.__dict__["reused"] >= total - 4
