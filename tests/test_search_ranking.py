from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

import pytest

from doc_scraper.index.reader import IndexReader
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import PageRecord, Section

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

SITE = "py"
NOW = "2026-01-01T00:00:00Z"

PAGES: dict[str, tuple[str, list[Section]]] = {
    "http://d/asyncio-task.html": (
        "Coroutines and Tasks",
        [
            Section(
                "coroutines-and-tasks",
                ("Coroutines and Tasks",),
                1,
                "# Coroutines and Tasks\n\nThis section outlines high-level asyncio APIs.",
            ),
            Section(
                "task-groups",
                ("Coroutines and Tasks", "Task Groups"),
                2,
                "## Task Groups\n\nTask groups combine a task creation API with a way to wait for all tasks.",
            ),
            Section(
                "asyncio.TaskGroup",
                ("Coroutines and Tasks", "Task Groups", "asyncio.TaskGroup"),
                3,
                "*class* asyncio.TaskGroup\n\nAn asynchronous context manager holding a group of tasks.",
            ),
            Section(
                "running-tasks-concurrently",
                ("Coroutines and Tasks", "Running Tasks Concurrently"),
                2,
                "## Running Tasks Concurrently\n\nRun awaitable objects concurrently with asyncio.gather().",
            ),
        ],
    ),
    "http://d/changelog.html": (
        "Changelog",
        [
            Section(
                "id1",
                ("Changelog", "Library"),
                2,
                "## Library\n\n* Fix asyncio.TaskGroup cancellation. asyncio TaskGroup propagates errors.\n"
                "* asyncio TaskGroup: another fix for the TaskGroup context manager.\n",
            ),
        ],
    ),
    "http://d/cmdline.html": (
        "Command line and environment",
        [
            Section(
                "envvar-PYTHONDONTWRITEBYTECODE",
                ("Command line and environment", "PYTHONDONTWRITEBYTECODE"),
                3,
                "PYTHONDONTWRITEBYTECODE\n\nIf this is set, Python won't try to write .pyc files.",
            ),
            Section(
                "envvar-PYTHONPATH",
                ("Command line and environment", "PYTHONPATH"),
                3,
                "PYTHONPATH\n\nAugment the default search path for module files.",
            ),
        ],
    ),
    "http://d/os.html": (
        "os — Miscellaneous operating system interfaces",
        [
            Section(
                "os.replace",
                ("os", "os.replace"),
                3,
                "os.replace(src, dst)\n\nRename the file or directory src to dst, atomically replacing dst."
                " See [`os.rename()`](os.html#os.rename).",
            ),
            Section(
                "os.rename",
                ("os", "os.rename"),
                3,
                "os.rename(src, dst)\n\nRename the file or directory src to dst. See also os.replace().",
            ),
        ],
    ),
}


async def _write_all(writer: IndexWriter, pages: dict[str, tuple[str, list[Section]]]) -> None:
    crawl = await writer.begin_crawl(SITE, "full", NOW, fresh=True)
    for url, (title, sections) in pages.items():
        content = "\n\n".join(s.text for s in sections)
        record = PageRecord(url=url, title=title, content=content, content_hash=url, crawled_at=NOW, depth=1)
        await writer.upsert_page(crawl, SITE, record, sections)
    await writer.finish_crawl(crawl, NOW, {"pages": len(pages)}, commit=True, retention=5)


@pytest.fixture
async def reader(tmp_path: Path) -> AsyncIterator[IndexReader]:
    writer = IndexWriter.open(tmp_path / "index.db")
    await _write_all(writer, PAGES)
    await writer.close()
    opened = IndexReader.open(tmp_path / "index.db")
    yield opened
    opened.close()


def test_an_identifier_query_finds_its_definition_first(reader: IndexReader) -> None:
    results = reader.search("asyncio.TaskGroup")
    assert (results[0].url, results[0].anchor) == ("http://d/asyncio-task.html", "asyncio.TaskGroup")
    assert results[0].heading_path == ("Coroutines and Tasks", "Task Groups", "asyncio.TaskGroup")
    env = reader.search("PYTHONDONTWRITEBYTECODE")
    assert env[0].anchor == "envvar-PYTHONDONTWRITEBYTECODE"
    assert reader.search("os.replace")[0].anchor == "os.replace"


def test_results_are_one_section_per_page_unless_asked(reader: IndexReader) -> None:
    default = reader.search("tasks")
    assert len({r.url for r in default}) == len(default)
    every = reader.search("tasks", one_per_page=False)
    assert len(every) > len(default)
    assert sum(r.url == "http://d/asyncio-task.html" for r in every) >= 3


def test_plain_questions_match_any_term_and_rank_by_coverage(reader: IndexReader) -> None:
    results = reader.search("how do I run several tasks concurrently and wait")
    assert results[0].anchor == "running-tasks-concurrently"


async def test_release_notes_rank_below_a_reference_page_with_the_same_text(tmp_path: Path) -> None:
    text = "## Frobnication\n\nThe frobnicate helper frobnicates widgets in place."
    pages = {
        "http://d/whatsnew/3.12.html": ("Docs", [Section("frob", ("Docs", "Frobnication"), 2, text)]),
        "http://d/library/widgets.html": ("Docs", [Section("frob", ("Docs", "Frobnication"), 2, text)]),
    }
    writer = IndexWriter.open(tmp_path / "index.db")
    await _write_all(writer, pages)
    await writer.close()
    reader = IndexReader.open(tmp_path / "index.db")
    assert [r.url for r in reader.search("frobnicate helper")] == [
        "http://d/library/widgets.html",
        "http://d/whatsnew/3.12.html",
    ]
    reader.close()


def test_snippets_mark_matches_in_brackets(reader: IndexReader) -> None:
    result = reader.search("atomically replacing")[0]
    assert result.anchor == "os.replace"
    assert "[atomically]" in result.snippet
    assert "[replacing]" in result.snippet
    assert "os.html#os.rename" not in result.snippet  # link targets never reach a snippet
    assert "os.rename()" in result.snippet


def test_limit_and_site_filter_apply(reader: IndexReader) -> None:
    assert len(reader.search("the file or directory src", limit=1)) == 1
    assert reader.search("rename", site_key="other") == []
    assert reader.search("rename", site_key=SITE)[0].url == "http://d/os.html"
    assert all(r.crawled_at == NOW for r in reader.search("rename"))


async def test_searching_while_the_writer_thread_writes_sees_whole_pages(tmp_path: Path) -> None:
    writer = IndexWriter.open(tmp_path / "index.db")
    await _write_all(writer, PAGES)
    reader = IndexReader.open(tmp_path / "index.db")
    stop = threading.Event()
    seen_counts: list[int] = []
    errors: list[BaseException] = []

    def search_loop() -> None:
        try:
            while not stop.is_set():
                hits = reader.search("os.replace")
                assert hits[0].anchor == "os.replace"
                # Each new page is written with its two sections in one transaction: never half of one.
                extra = reader.search("zebrafish", one_per_page=False)
                assert len(extra) % 2 == 0
                seen_counts.append(len(extra))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=search_loop)
    thread.start()
    try:
        crawl = await writer.begin_crawl(SITE, "incremental", NOW, fresh=False)
        for i in range(30):
            url = f"http://d/extra{i}.html"
            sections = [
                Section(f"a{i}", ("Extra",), 1, f"# Extra\n\nzebrafish number {i}"),
                Section(f"b{i}", ("Extra", "More"), 2, f"## More\n\nzebrafish again {i}"),
            ]
            record = PageRecord(
                url=url, title="Extra", content="x", content_hash=str(i), crawled_at=NOW, depth=1
            )
            await writer.upsert_page(crawl, SITE, record, sections)
            await asyncio.sleep(0)
        await writer.finish_crawl(crawl, NOW, {}, commit=True, retention=5)
    finally:
        stop.set()
        await asyncio.to_thread(thread.join)
        await writer.close()
    assert not errors, errors
    assert seen_counts
    assert len(reader.search("zebrafish", one_per_page=False, limit=100)) == 60
    reader.close()
