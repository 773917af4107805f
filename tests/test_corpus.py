from __future__ import annotations

import asyncio
import functools
import hashlib
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doc_scraper.config.schema import Config, SiteConfig
from doc_scraper.corpus import Corpus, CorpusError, parse_since, slice_utf8
from doc_scraper.errors import SearchError
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import PageRecord, Section

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

BASE = "http://docs.test"
CRAWL1_END = "2026-01-01T10:00:00.000Z"
CRAWL2_END = "2026-01-02T10:00:00.000Z"
BETWEEN = "2026-01-01T12:00:00Z"

# Long enough to need paging, with characters of 2, 3 and 4 UTF-8 bytes.
LONG_PAGE = "# Reference\n\n" + "".join(
    f"Paragraph {i}: naïve café, 日本語のテキスト, emoji 🎉 and plain words.\n\n" for i in range(120)
)


def _config(tmp_path: Path) -> Config:
    sites = {
        "docs": SiteConfig(key="docs", start_urls=(f"{BASE}/",), allowed_domain="docs.test"),
        "other": SiteConfig(key="other", start_urls=("http://other.test/",), allowed_domain="other.test"),
    }
    return Config(
        sites=sites,
        state_dir=str(tmp_path / "state"),
        output_base_dir=str(tmp_path / "out"),
        path=str(tmp_path / "config.yaml"),
    )


def _record(path: str, title: str, content: str, depth: int = 1, crawled_at: str = CRAWL1_END) -> PageRecord:
    return PageRecord(
        url=f"{BASE}/{path}",
        title=title,
        content=content,
        content_hash=hashlib.sha256(content.encode()).hexdigest(),
        crawled_at=crawled_at,
        depth=depth,
        headings=(title,),
        path=path.replace(".html", ".md"),
    )


def _sections(record: PageRecord, anchor: str) -> list[Section]:
    return [Section(anchor=anchor, heading_path=(record.title,), level=1, text=record.content)]


FIRST = [
    (
        "index.html",
        "Welcome",
        "# Welcome\n\nMinidoc is a tiny library for retrying flaky calls.",
        0,
        "welcome",
    ),
    (
        "retries.html",
        "Retries",
        "# Retries\n\nUse exponential backoff with jitter between attempts.",
        1,
        "retries",
    ),
    ("faq.html", "FAQ", "# FAQ\n\nFrequently asked questions about timeouts.", 1, "faq"),
    ("reference.html", "Reference", LONG_PAGE, 1, "reference"),
]
SECOND = [
    FIRST[0],
    (
        "retries.html",
        "Retries",
        "# Retries\n\nUse exponential backoff with full jitter; cap it at 30 s.",
        1,
        "retries",
    ),
    FIRST[3],
    ("migration.html", "Migration", "# Migration\n\nMoving from version 1 to version 2.", 1, "migration"),
]


async def build_index(state_dir: Path, *, second: bool = True) -> None:
    """Two completed crawls of site "docs": FAQ removed, Retries changed, Migration added."""
    writer = IndexWriter.open(state_dir / "index.db")
    try:
        runs = [("2026-01-01T09:00:00.000Z", CRAWL1_END, FIRST)]
        if second:
            runs.append(("2026-01-02T09:00:00.000Z", CRAWL2_END, SECOND))
        for started, ended, pages in runs:
            crawl_id = await writer.begin_crawl("docs", "full", started, fresh=True)
            for path, title, content, depth, anchor in pages:
                record = _record(path, title, content, depth, ended)
                await writer.upsert_page(crawl_id, "docs", record, _sections(record, anchor))
            await writer.finish_crawl(crawl_id, ended, {"added": len(pages)}, commit=True, retention=10)
    finally:
        await writer.close()


@functools.cache
def _template(second: bool) -> Path:
    folder = Path(tempfile.mkdtemp(prefix="doc-scraper-index-"))
    asyncio.run(build_index(folder, second=second))
    return folder / "index.db"


def copy_index(state_dir: Path, *, second: bool = True) -> None:
    """Put a copy of the two-crawl index (built once per test run) into ``state_dir``."""
    state_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_template(second), state_dir / "index.db")


@pytest.fixture
def corpus_index(tmp_path: Path) -> None:
    copy_index(tmp_path / "state")


@pytest.fixture
async def corpus(tmp_path: Path, corpus_index: None) -> AsyncIterator[Corpus]:
    config = _config(tmp_path)
    corpus = Corpus.from_config(config)
    yield corpus
    await corpus.close()


# -- pure helpers --------------------------------------------------------------------------------


@given(st.text(max_size=300), st.integers(min_value=1, max_value=40))
def test_paging_by_bytes_reassembles_the_text_and_never_splits_a_character(text: str, max_bytes: int) -> None:
    pieces, offset = [], 0
    total = len(text.encode())
    while True:
        piece, start, end, size = slice_utf8(text, offset, max_bytes)
        assert size == total
        assert start == offset
        assert len(piece.encode()) == end - start
        assert end - start <= max(max_bytes, 4)  # a character wider than the budget comes whole
        pieces.append(piece)
        if end >= total:
            break
        assert end > start
        offset = end
    assert "".join(pieces) == text


def test_an_offset_inside_a_character_moves_to_the_next_character() -> None:
    piece, start, _, _ = slice_utf8("é日x", 1, 10)
    assert (piece, start) == ("日x", 2)


def test_a_cut_page_prefers_to_end_at_a_line_break() -> None:
    text = "first line\nsecond line that is long\n"
    piece, _, end, _ = slice_utf8(text, 0, 20)
    assert piece == "first line\n"
    assert end == 11


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01T12:00:00Z", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ("2026-01-01T13:00:00+01:00", datetime(2026, 1, 1, 12, tzinfo=UTC)),
        ("2026-01-01", datetime(2026, 1, 1, tzinfo=UTC)),
        ("2026-01-01T12:00:00.123456789Z"[:-4] + "Z", datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC)),
    ],
)
def test_since_accepts_rfc3339_and_dates(text: str, expected: datetime) -> None:
    assert parse_since(text) == expected


def test_since_rejects_garbage_with_an_example() -> None:
    with pytest.raises(CorpusError, match="2026-01-31T12:00:00Z"):
        parse_since("last tuesday")


# -- against a real index ------------------------------------------------------------------------


async def test_list_sites_reports_page_counts_and_last_crawl(corpus: Corpus) -> None:
    sites = {s["key"]: s for s in await corpus.list_sites()}
    assert sites["docs"]["pages"] == 4
    assert sites["docs"]["last_crawled"] == CRAWL2_END
    assert sites["other"]["pages"] == 0
    assert "last_crawled" not in sites["other"]


async def test_list_pages_is_sorted_and_paged(corpus: Corpus) -> None:
    first = await corpus.list_pages("docs", max_results=3)
    assert [p["url"] for p in first["pages"]] == [
        f"{BASE}/index.html",
        f"{BASE}/migration.html",
        f"{BASE}/reference.html",
    ]
    assert first["total"] == 4
    assert first["next_offset"] == 3
    rest = await corpus.list_pages("docs", max_results=3, offset=first["next_offset"])
    assert [p["url"] for p in rest["pages"]] == [f"{BASE}/retries.html"]
    assert "next_offset" not in rest
    past = await corpus.list_pages("docs", offset=50)
    assert past["returned"] == 0
    assert "past the last page" in past["message"]


async def test_read_page_pages_through_long_content_on_character_boundaries(corpus: Corpus) -> None:
    pieces, offset = [], 0
    while True:
        page = await corpus.read_page("docs", f"{BASE}/reference.html", max_bytes=1000, offset=offset)
        assert page["content_length"] <= 1000
        assert page["source"] == "stored_crawl"
        pieces.append(page["content"])
        if not page["truncated"]:
            assert "next_offset" not in page
            break
        offset = page["next_offset"]
    assert "".join(pieces) == LONG_PAGE
    assert page["total_length"] == len(LONG_PAGE.encode())


async def test_read_page_tolerates_a_trailing_slash_and_names_the_fix_for_a_wrong_url(corpus: Corpus) -> None:
    page = await corpus.read_page("docs", f"{BASE}/")
    assert page["title"] == "Welcome"
    assert page["url"] == f"{BASE}/index.html"
    with pytest.raises(CorpusError, match="list_pages"):
        await corpus.read_page("docs", f"{BASE}/nope.html")
    with pytest.raises(CorpusError, match="past the end"):
        await corpus.read_page("docs", f"{BASE}/index.html", offset=10_000)


async def test_search_finds_the_section_with_url_anchor_and_snippet(corpus: Corpus) -> None:
    found = await corpus.search("backoff jitter", limit=5)
    top = found["results"][0]
    assert top["url"] == f"{BASE}/retries.html"
    assert top["anchor"] == "retries"
    assert top["rank"] == 1
    assert "[" in top["snippet"]
    assert top["heading_path"] == ["Retries"]
    only_other = await corpus.search("backoff", site_key="docs")
    assert only_other["site_key"] == "docs"
    assert only_other["count"] >= 1


async def test_search_refuses_queries_without_terms_and_unknown_sites(corpus: Corpus) -> None:
    with pytest.raises(SearchError):
        await corpus.search("   ")
    with pytest.raises(SearchError, match="no searchable terms"):
        await corpus.search("?? !!")
    with pytest.raises(CorpusError, match="configured sites: docs, other"):
        await corpus.search("backoff", site_key="nope")


async def test_freshness_reports_the_latest_crawl_and_its_age(corpus: Corpus) -> None:
    fresh = await corpus.freshness("docs")
    assert fresh["last_crawl_ended_at"] == CRAWL2_END
    assert fresh["last_crawl_status"] == "completed"
    assert fresh["indexed_pages"] == 4
    assert fresh["last_crawl_total_pages"] == 4
    assert fresh["age_seconds"] > 0
    never = await corpus.freshness("other")
    assert "last_crawl_id" not in never
    assert never["indexed_pages"] == 0


async def test_diff_lists_added_changed_and_removed_pages_since_a_time(corpus: Corpus) -> None:
    diff = await corpus.diff("docs", BETWEEN)
    assert [e["url"] for e in diff["added"]] == [f"{BASE}/migration.html"]
    assert diff["added"][0]["title"] == "Migration"
    assert [e["url"] for e in diff["removed"]] == [f"{BASE}/faq.html"]
    changed = diff["changed"][0]
    assert changed["url"] == f"{BASE}/retries.html"
    assert changed["prior_hash"] != changed["content_hash"]
    assert diff["unchanged_count"] == 2
    assert diff["total"] == 3
    assert diff["baseline_crawl"]["crawl_ended_at"] == CRAWL1_END
    assert diff["current_crawl"]["crawl_ended_at"] == CRAWL2_END


async def test_diff_pages_in_kind_then_url_order(corpus: Corpus) -> None:
    first = await corpus.diff("docs", BETWEEN, max_results=2)
    assert (len(first["added"]), len(first["changed"]), len(first["removed"])) == (1, 1, 0)
    assert first["next_offset"] == 2
    rest = await corpus.diff("docs", BETWEEN, max_results=2, offset=2)
    assert [e["url"] for e in rest["removed"]] == [f"{BASE}/faq.html"]
    assert "next_offset" not in rest


async def test_diff_before_any_crawl_explains_how_to_pick_since(corpus: Corpus) -> None:
    diff = await corpus.diff("docs", "2025-06-01T00:00:00Z")
    assert diff["total"] == 0
    assert "since" in diff["note"]


async def test_reads_of_a_site_never_crawled_say_to_call_crawl_site(corpus: Corpus) -> None:
    for call in (
        corpus.list_pages("other"),
        corpus.read_page("other", "http://other.test/"),
        corpus.diff("other", BETWEEN),
    ):
        with pytest.raises(CorpusError, match="call crawl_site"):
            await call


async def test_without_any_index_reads_say_to_crawl_first(tmp_path: Path) -> None:
    corpus = Corpus.from_config(_config(tmp_path))
    with pytest.raises(CorpusError, match="call crawl_site"):
        await corpus.search("backoff")
    with pytest.raises(CorpusError, match="call crawl_site"):
        await corpus.list_pages("docs")
    assert [s["pages"] for s in await corpus.list_sites()] == [0, 0]
    await corpus.close()
