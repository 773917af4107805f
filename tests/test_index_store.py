from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import apsw
import pytest

from doc_scraper.errors import SearchError, StateError
from doc_scraper.index import db
from doc_scraper.index.db import SCHEMA_VERSION, open_connection, schema_version
from doc_scraper.index.reader import IndexReader
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import PageRecord, Section

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

SITE = "docs"
T0 = "2026-01-01T00:00:00Z"


def page(url: str, body: str, *, title: str = "Page", crawled_at: str = T0) -> PageRecord:
    return PageRecord(
        url=url,
        title=title,
        content=f"# {title}\n\n{body}",
        content_hash=f"h-{body}",
        crawled_at=crawled_at,
        depth=1,
        headings=(title,),
        path="p.md",
    )


def sections(title: str, body: str, anchor: str = "top") -> list[Section]:
    return [Section(anchor=anchor, heading_path=(title,), level=1, text=f"# {title}\n\n{body}")]


@pytest.fixture
async def writer(tmp_path: Path) -> AsyncIterator[IndexWriter]:
    w = IndexWriter.open(tmp_path / "state" / "index.db")
    yield w
    await w.close()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "index.db"


async def full_crawl(w: IndexWriter, pages: dict[str, str], *, ended: str = T0, retention: int = 10) -> int:
    crawl = await w.begin_crawl(SITE, "full", ended, fresh=True)
    for url, body in pages.items():
        await w.upsert_page(crawl, SITE, page(url, body), sections("Page", body))
    await w.finish_crawl(
        crawl, ended, {"pages": len(pages), "added": len(pages)}, commit=True, retention=retention
    )
    return crawl


# ------------------------------------------------------------------ migrations


def test_a_fresh_file_is_migrated_to_the_current_version(db_path: Path) -> None:
    conn = open_connection(db_path)
    assert schema_version(conn) == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    conn.close()


def test_reopening_keeps_data_and_does_not_migrate_twice(db_path: Path) -> None:
    conn = open_connection(db_path)
    conn.execute("INSERT INTO sites (site_key) VALUES ('kept')")
    conn.close()
    conn = open_connection(db_path)
    assert conn.execute("SELECT site_key FROM sites").fetchall() == [("kept",)]
    assert conn.execute("SELECT count(*) FROM schema_version").fetchone() == (SCHEMA_VERSION,)
    conn.close()


def test_a_file_from_a_newer_version_is_refused_with_a_clear_error(db_path: Path) -> None:
    conn = open_connection(db_path)
    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION + 5,))
    conn.close()
    with pytest.raises(StateError, match="newer than this doc-scraper"):
        open_connection(db_path)
    with pytest.raises(StateError, match="newer"):
        IndexReader.open(db_path)


async def test_a_writer_on_a_newer_file_fails_its_calls_with_the_state_error(db_path: Path) -> None:
    conn = open_connection(db_path)
    conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION + 1,))
    conn.close()
    writer = IndexWriter.open(db_path)  # safe on the event loop: the thread opens the file
    with pytest.raises(StateError, match="newer"):
        await writer.begin_crawl(SITE, "full", T0, fresh=True)
    await writer.close()


def test_a_reader_without_an_index_says_to_crawl_first(db_path: Path) -> None:
    with pytest.raises(StateError, match="crawl"):
        IndexReader.open(db_path)


def test_a_reader_refuses_an_index_that_was_never_migrated(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    apsw.Connection(str(db_path)).execute("CREATE TABLE unrelated (x)")
    with pytest.raises(StateError, match="older doc-scraper"):
        IndexReader.open(db_path)


async def test_a_query_over_its_time_limit_is_stopped_with_a_search_error(
    writer: IndexWriter, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db, "_PROGRESS_STEPS", 1)  # check the clock at every step: the tiny index is fast
    await full_crawl(writer, {f"http://x/{i}": f"alpha beta gamma {i}" for i in range(20)})
    reader = IndexReader.open(db_path, time_limit_s=0.0)
    with pytest.raises(SearchError, match="longer than"):
        reader.search("alpha beta gamma")
    reader.close()


def test_a_damaged_file_is_reported_as_a_state_error(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StateError, match="index database"):
        open_connection(db_path)


# ------------------------------------------------------------------ generations


async def test_a_reader_sees_the_old_crawl_until_the_new_one_commits(
    writer: IndexWriter, db_path: Path
) -> None:
    await full_crawl(writer, {"http://x/a": "old alpha text"})
    reader = IndexReader.open(db_path)
    crawl = await writer.begin_crawl(SITE, "full", "2026-01-02T00:00:00Z", fresh=True)
    await writer.upsert_page(
        crawl, SITE, page("http://x/b", "new beta text"), sections("Page", "new beta text")
    )
    assert [r.url for r in reader.search("alpha")] == ["http://x/a"]
    assert reader.search("beta") == []
    assert reader.list_pages(SITE)[1] == 1
    await writer.finish_crawl(crawl, "2026-01-02T00:00:01Z", {"pages": 1}, commit=True, retention=10)
    assert reader.search("alpha") == []
    assert [r.url for r in reader.search("beta")] == ["http://x/b"]
    assert [p.url for p in reader.list_pages(SITE)[0]] == ["http://x/b"]
    reader.close()


async def test_an_interrupted_fresh_crawl_keeps_staging_and_resume_continues_it(
    writer: IndexWriter, db_path: Path
) -> None:
    await full_crawl(writer, {"http://x/a": "old alpha"})
    first = await writer.begin_crawl(SITE, "full", "2026-01-02T00:00:00Z", fresh=True)
    await writer.upsert_page(first, SITE, page("http://x/b", "beta"), sections("Page", "beta"))
    await writer.finish_crawl(first, "2026-01-02T00:01:00Z", {}, commit=False, retention=10)
    reader = IndexReader.open(db_path)
    assert reader.search("beta") == []
    latest = reader.latest_crawl(SITE)
    assert latest is not None
    assert latest.status == "interrupted"
    resumed = await writer.begin_crawl(SITE, "resume", "2026-01-02T00:02:00Z", fresh=False)
    await writer.upsert_page(resumed, SITE, page("http://x/c", "gamma"), sections("Page", "gamma"))
    await writer.finish_crawl(resumed, "2026-01-02T00:03:00Z", {}, commit=True, retention=10)
    assert sorted(p.url for p in reader.list_pages(SITE)[0]) == ["http://x/b", "http://x/c"]
    reader.close()


async def test_a_completed_incremental_crawl_supersedes_an_interrupted_staging(
    writer: IndexWriter, db_path: Path
) -> None:
    await full_crawl(writer, {"http://x/a": "alpha"})
    fresh = await writer.begin_crawl(SITE, "full", "2026-01-02T00:00:00Z", fresh=True)
    await writer.upsert_page(fresh, SITE, page("http://x/b", "beta"), sections("Page", "beta"))
    await writer.finish_crawl(fresh, "2026-01-02T00:01:00Z", {}, commit=False, retention=10)
    incremental = await writer.begin_crawl(SITE, "incremental", "2026-01-03T00:00:00Z", fresh=False)
    await writer.touch_page(incremental, SITE, "http://x/a", "2026-01-03T00:00:01Z")
    await writer.finish_crawl(incremental, "2026-01-03T00:01:00Z", {}, commit=True, retention=10)
    resumed = await writer.begin_crawl(SITE, "resume", "2026-01-04T00:00:00Z", fresh=False)
    await writer.finish_crawl(resumed, "2026-01-04T00:01:00Z", {}, commit=True, retention=10)
    reader = IndexReader.open(db_path)
    assert [p.url for p in reader.list_pages(SITE)[0]] == ["http://x/a"]
    assert reader.search("beta") == []
    reader.close()


async def test_incremental_upserts_and_removals_are_visible_page_by_page(
    writer: IndexWriter, db_path: Path
) -> None:
    await full_crawl(writer, {"http://x/a": "alpha", "http://x/b": "beta"})
    reader = IndexReader.open(db_path)
    crawl = await writer.begin_crawl(SITE, "incremental", "2026-01-03T00:00:00Z", fresh=False)
    await writer.upsert_page(crawl, SITE, page("http://x/a", "delta"), sections("Page", "delta"))
    assert [r.url for r in reader.search("delta")] == ["http://x/a"]
    assert reader.search("alpha") == []
    await writer.remove_pages(crawl, SITE, ["http://x/b"])
    assert reader.search("beta") == []
    await writer.finish_crawl(
        crawl, "2026-01-03T00:01:00Z", {"changed": 1, "removed": 1}, commit=True, retention=10
    )
    info = reader.latest_crawl(SITE)
    assert info is not None
    assert (info.status, info.pages, info.changed, info.removed) == ("completed", 1, 1, 1)
    reader.close()


async def test_touch_carries_an_unchanged_page_into_a_fresh_crawl(writer: IndexWriter, db_path: Path) -> None:
    await full_crawl(writer, {"http://x/a": "alpha", "http://x/b": "beta"})
    crawl = await writer.begin_crawl(SITE, "full", "2026-01-04T00:00:00Z", fresh=True)
    await writer.touch_page(crawl, SITE, "http://x/a", "2026-01-04T00:00:05Z")
    await writer.finish_crawl(crawl, "2026-01-04T00:01:00Z", {}, commit=True, retention=10)
    reader = IndexReader.open(db_path)
    stored = reader.get_page(SITE, "http://x/a")
    assert stored is not None
    assert stored.crawled_at == "2026-01-04T00:00:05Z"
    assert [r.url for r in reader.search("alpha")] == ["http://x/a"]
    assert reader.get_page(SITE, "http://x/b") is None
    reader.close()


async def test_get_page_falls_back_to_the_normalised_url(writer: IndexWriter, db_path: Path) -> None:
    await full_crawl(writer, {"http://x/guide/index.html": "alpha", "http://x/api/": "beta"})
    reader = IndexReader.open(db_path)
    assert (found := reader.get_page(SITE, "http://x/guide/")) is not None
    assert found.url == "http://x/guide/index.html"
    assert (found := reader.get_page(SITE, "http://x/api")) is not None
    assert found.url == "http://x/api/"
    assert found.content.startswith("# Page")
    assert reader.get_page(SITE, "http://x/other") is None
    assert reader.get_page("nosuchsite", "http://x/api/") is None
    reader.close()


async def test_list_pages_pages_through_urls_in_order(writer: IndexWriter, db_path: Path) -> None:
    await full_crawl(writer, {f"http://x/{i:02d}": f"body {i}" for i in range(7)})
    reader = IndexReader.open(db_path)
    first, total = reader.list_pages(SITE, offset=0, limit=3)
    second, _ = reader.list_pages(SITE, offset=3, limit=3)
    assert total == 7
    assert [p.url for p in first + second] == [f"http://x/{i:02d}" for i in range(6)]
    assert reader.sites() == [SITE]
    reader.close()


async def test_a_failing_job_does_not_undo_the_others_in_its_batch(
    writer: IndexWriter, db_path: Path
) -> None:
    crawl = await writer.begin_crawl(SITE, "full", T0, fresh=True)
    with pytest.raises(KeyError):
        await writer.upsert_page(crawl + 99, SITE, page("http://x/a", "alpha"), [])
    await writer.upsert_page(crawl, SITE, page("http://x/b", "beta"), [])
    await writer.finish_crawl(crawl, T0, {}, commit=True, retention=10)
    reader = IndexReader.open(db_path)
    assert [r.url for r in reader.search("beta")] == ["http://x/b"]  # a page without sections is one section
    reader.close()


# ------------------------------------------------------------------ history


async def test_history_keeps_only_the_configured_number_of_crawls(writer: IndexWriter, db_path: Path) -> None:
    for day in range(1, 6):
        await full_crawl(
            writer, {"http://x/a": f"text {day}"}, ended=f"2026-01-0{day}T00:00:00Z", retention=3
        )
    reader = IndexReader.open(db_path)
    kept = reader.crawls(SITE)
    assert [c.ended_at for c in kept] == [f"2026-01-0{d}T00:00:00Z" for d in (5, 4, 3)]
    conn = apsw.Connection(str(db_path))
    assert conn.execute("SELECT count(DISTINCT crawl_id) FROM page_history").fetchone() == (3,)
    conn.close()
    reader.close()


async def test_diff_compares_times_as_instants_not_text(writer: IndexWriter, db_path: Path) -> None:
    # Ended 10:00:00.5Z: later than 10:00:00, though as text "10:00:00.5Z" sorts before "10:00:00Z".
    base = await writer.begin_crawl(SITE, "full", "2026-01-01T09:00:00Z", fresh=True)
    for url, body in {"http://x/a": "one", "http://x/b": "two", "http://x/c": "three"}.items():
        await writer.upsert_page(base, SITE, page(url, body), sections("Page", body))
    await writer.finish_crawl(base, "2026-01-01T10:00:00.5Z", {}, commit=True, retention=10)
    later = await writer.begin_crawl(SITE, "incremental", "2026-01-02T09:00:00Z", fresh=False)
    await writer.upsert_page(later, SITE, page("http://x/a", "one changed"), sections("Page", "one changed"))
    await writer.remove_pages(later, SITE, ["http://x/b"])
    await writer.upsert_page(later, SITE, page("http://x/d", "four"), sections("Page", "four"))
    await writer.finish_crawl(later, "2026-01-02T10:00:00Z", {}, commit=True, retention=10)
    reader = IndexReader.open(db_path)
    too_early = reader.diff(SITE, datetime(2026, 1, 1, 10, 0, 0, tzinfo=UTC))
    assert too_early.baseline is None
    assert "no completed crawl" in too_early.note
    result = reader.diff(SITE, datetime(2026, 1, 1, 10, 0, 0, 600000, tzinfo=UTC))
    assert result.baseline is not None
    assert result.baseline.id == base
    assert result.added == ("http://x/d",)
    assert result.removed == ("http://x/b",)
    assert [c.url for c in result.changed] == ["http://x/a"]
    assert result.changed[0].prior_hash == "h-one"
    assert result.unchanged == 1
    same = reader.diff(SITE, datetime(2026, 1, 3, tzinfo=UTC))
    assert "nothing has been crawled since" in same.note
    reader.close()
