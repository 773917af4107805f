from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doc_scraper.index.query import (
    identifier_keys,
    is_identifier,
    parse_query,
    section_identifiers,
    split_identifier,
)
from doc_scraper.index.reader import IndexReader
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import PageRecord, Section

if TYPE_CHECKING:
    from collections.abc import Iterator


def test_plain_words_are_ored_without_stopwords() -> None:
    parsed = parse_query("how do I run several coroutines at the same time")
    assert not parsed.advanced
    assert parsed.terms == ("run", "several", "coroutines", "time")
    assert parsed.match == '"run" OR "several" OR "coroutines" OR "time"'


def test_a_stopword_naming_a_language_construct_is_kept() -> None:
    assert parse_query("how the with statement works").terms == ("with", "statement", "works")
    assert parse_query("lambdas in a for loop").terms == ("lambdas", "for", "loop")
    assert parse_query("what is it for").terms == ("what", "is", "it", "for")  # only stopwords: all kept


def test_fts5_syntax_passes_through() -> None:
    for query in ('"event loop" asyncio', "asyncio OR trio", "corout*", "NEAR(task group, 3)", "a NOT b"):
        parsed = parse_query(query)
        assert parsed.advanced
        assert parsed.match == query


def test_punctuation_in_plain_queries_is_quoted_away() -> None:
    parsed = parse_query("TypeError: unhashable type: 'list' (dict) -x")
    assert not parsed.advanced
    assert parsed.match == '"typeerror" OR "unhashable" OR "type" OR "list" OR "dict" OR "x"'
    assert parsed.identifiers == ("typeerror",)


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("asyncio.TaskGroup", True),
        ("PYTHONDONTWRITEBYTECODE", True),
        ("maxRetries", True),
        ("__init__", True),
        ("os.path.join", True),
        ("TaskGroup", True),
        ("Python", False),
        ("run", False),
        ("API", False),
    ],
)
def test_identifiers_are_recognised(token: str, expected: bool) -> None:
    assert is_identifier(token) is expected


def test_identifier_keys_cover_dotted_suffixes() -> None:
    assert identifier_keys("os.path.join") == ["os.path.join", "path.join", "join"]
    assert split_identifier("PyArg_ParseTuple") == ["Py", "Arg", "Parse", "Tuple"]


def test_section_identifiers_rank_the_defined_name_above_mentions() -> None:
    keys, words = section_identifiers("envvar-PYTHONPATH", "PYTHONPATH", "See also `sys.path` and maxDepth.")
    assert keys["pythonpath"] == 2
    assert keys["sys.path"] == 1
    assert keys["maxdepth"] == 1
    assert "max Depth" in words


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from([*"ab cN\"()*-:^.,'_+{}", " NEAR", " OR ", "AND", "NOT ", "é", "日本", "\x00"]),
        max_size=20,
    ).map("".join)
)
def test_parsing_never_raises(query: str) -> None:
    parsed = parse_query(query)
    assert all(t == t.lower() for t in parsed.terms)
    if not parsed.advanced:
        assert parsed.match == parsed.fallback


@pytest.fixture(scope="module")
def small_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexReader]:
    db = tmp_path_factory.mktemp("idx") / "index.db"

    async def build() -> None:
        writer = IndexWriter.open(db)
        crawl = await writer.begin_crawl("s", "full", "2026-01-01T00:00:00Z", fresh=True)
        text = "# Tasks\n\nRun tasks with asyncio.gather() or a NEAR neighbour; costs 5* more (really)."
        record = PageRecord(
            url="http://x/tasks",
            title="Tasks",
            content=text,
            content_hash="h",
            crawled_at="2026-01-01T00:00:00Z",
            depth=0,
        )
        await writer.upsert_page(crawl, "s", record, [Section("tasks", ("Tasks",), 1, text)])
        await writer.finish_crawl(crawl, "2026-01-01T00:00:01Z", {}, commit=True, retention=5)
        await writer.close()

    asyncio.run(build())
    reader = IndexReader.open(db)
    yield reader
    reader.close()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.sampled_from([*"ab\"()*-:^.,'_+{}", " tasks", "NEAR", " OR ", " AND ", "NOT", " run", "é"]),
        max_size=20,
    ).map("".join)
)
def test_searching_any_text_never_raises(small_index: IndexReader, query: str) -> None:
    for result in small_index.search(query):
        assert result.url == "http://x/tasks"


def test_broken_fts5_syntax_falls_back_to_the_words(small_index: IndexReader) -> None:
    assert [r.anchor for r in small_index.search('"run tasks')] == ["tasks"]
    assert [r.anchor for r in small_index.search("tasks AND (")] == ["tasks"]
    assert small_index.search("the of and") == []
    assert small_index.search("") == []
