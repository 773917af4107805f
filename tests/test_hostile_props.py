"""Property tests over hostile input: URLs, output paths, search queries, frontmatter, conversion.

Example counts come from ``HOSTILE_EXAMPLES`` (default 120, so the suite stays fast);
``benchmarks/fuzz.py`` runs the same properties with 10,000 examples each.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
import posixpath
import tempfile
from functools import cache
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doc_scraper.config.schema import Config, SiteConfig
from doc_scraper.errors import ExtractError
from doc_scraper.frontier.scope import Scope
from doc_scraper.index.query import parse_query
from doc_scraper.index.reader import IndexReader
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import ExtractOptions, PageRecord, ParsedPage, Section
from doc_scraper.urls import normalize_url, try_normalize_url, url_to_relpath
from doc_scraper.worker import parse_page
from doc_scraper.write.files import parse_frontmatter, render_page

EXAMPLES = int(os.environ.get("HOSTILE_EXAMPLES", "120"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 500,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FIXTURES = Path(__file__).parent / "fixtures"
OPTIONS = ExtractOptions(content_selector="auto")

# -- strategies -------------------------------------------------------------------------------

_SEG_CHARS = st.sampled_from(
    [
        *"aZ09-_.~",
        "%",
        "%2e",
        "%2F",
        "%41",
        "%e9",
        "é",
        "日",
        " ",
        "..",
        ".",
        "\\",
        "?",
        "#",
        ";",
        "=",
        "&",
        "+",
        "@",
        ":",
        "%00",
        "%zz",
        "A",
        "/",
        "//",
    ]
)
segment = st.lists(_SEG_CHARS, max_size=6).map("".join)
hosts = st.sampled_from(
    [
        "docs.example.com",
        "DOCS.Example.COM",
        "docs.example.com.",
        "xn--bcher-kva.example",
        "bücher.example",
        "127.0.0.1",
        "[::1]",
        "[2001:DB8::1]",
        "a.b.c.d.e",
    ]
)
ports = st.sampled_from(["", ":80", ":443", ":8080", ":0", ":65535"])
queries = st.sampled_from(["", "?", "?a=1", "?page=2&sid=x", "?b=2&a=1&page=1", "?page=%20x", "?=&&="])
urls = st.builds(
    lambda scheme, host, port, segs, slash, query, frag: (
        f"{scheme}://{host}{port}/{'/'.join(segs)}{'/' if slash else ''}{query}{frag}"
    ),
    st.sampled_from(["http", "https", "HTTP", "HtTpS"]),
    hosts,
    ports,
    st.lists(segment, max_size=8),
    st.booleans(),
    queries,
    st.sampled_from(["", "#x", "#"]),
)
any_url = st.one_of(
    urls, st.text(max_size=80).map(lambda t: "https://docs.example.com/" + t), st.text(max_size=40)
)

SCOPE = Scope.from_site(
    SiteConfig(
        key="s",
        start_urls=("https://docs.example.com/",),
        allowed_domain="docs.example.com",
        allowed_path_prefix="/docs",
        disallowed_path_patterns=(r"/private/",),
    ),
    Config(sites={}, max_url_length=300, max_path_depth=6, max_segment_repeats=2),
)


# -- URLs -------------------------------------------------------------------------------------


@FUZZ
@given(any_url, st.sampled_from([(), ("page",), ("page", "a")]))
def test_url_normalisation_is_idempotent_and_scope_stable(url: str, keep: tuple[str, ...]) -> None:
    once = try_normalize_url(url, keep)
    if once is None:
        return
    twice = normalize_url(once, keep)
    assert twice == once
    assert SCOPE.check_target(twice) == SCOPE.check_target(once)
    assert SCOPE.relpath(twice) == SCOPE.relpath(once)


# Page names the mapper keeps apart by contract (no sanitised characters, no a.htm/a.html pairs).
_name = st.text(alphabet="abcXYZ019-_é日", min_size=1, max_size=12).filter(lambda s: s.lower() != "index")
page_paths = st.lists(st.tuples(st.lists(_name, min_size=1, max_size=5), st.booleans()), max_size=30)


@FUZZ
@given(page_paths)
def test_path_mapping_is_injective_within_a_site_and_stays_inside_it(
    pages: list[tuple[list[str], bool]],
) -> None:
    seen: dict[str, str] = {}
    for segs, as_file in pages:
        url = normalize_url("https://d.test/docs/" + "/".join(segs) + (".html" if as_file else "/"))
        rel = url_to_relpath(url, "d.test", "/docs")
        assert rel is not None
        norm = posixpath.normpath(rel)
        assert norm == rel and not norm.startswith(("/", "..")), rel
        # A directory page (/a/) and a file page (/a.html) are different pages.
        previous = seen.setdefault(rel, url)
        assert previous == url, (previous, url, rel)


# -- search -----------------------------------------------------------------------------------


@cache
def _index() -> IndexReader:
    db = Path(tempfile.mkdtemp(prefix="hostile-idx-")) / "index.db"

    async def build() -> None:
        writer = IndexWriter.open(db)
        crawl = await writer.begin_crawl("s", "full", "2026-01-01T00:00:00Z", fresh=True)
        text = '# asyncio.gather\n\nRun tasks with asyncio.gather() NEAR a "quoted" thing; costs 5* more.'
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
    return IndexReader.open(db)


fts_text = st.one_of(
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=60),
    st.lists(
        st.sampled_from(
            [
                '"',
                "(",
                ")",
                "*",
                "^",
                ":",
                "-",
                "+",
                "NEAR",
                "NEAR/",
                "OR",
                "AND",
                "NOT",
                "{",
                "}",
                "tasks",
                "asyncio.gather",
                "\x00",
                "'",
                "\\",
                " ",
                "col:",
                "%",
            ]
        ),
        max_size=25,
    ).map(" ".join),
)


@FUZZ
@given(fts_text)
def test_fts_query_building_and_search_never_raise(query: str) -> None:
    parsed = parse_query(query)
    assert isinstance(parsed.match, str)
    for result in _index().search(query):
        assert result.url == "http://x/tasks"


def test_search_with_a_lone_surrogate_does_not_raise() -> None:
    # The surrogate is replaced; what is left ("NEAR") is an ordinary word of the fixture page.
    results = _index().search('" NEAR \ud800')
    assert all("NEAR" in r.snippet for r in results)


# -- frontmatter --------------------------------------------------------------------------------


@FUZZ
@given(st.text(), st.text(max_size=200))
def test_frontmatter_round_trips_any_title_and_url(title: str, url: str) -> None:
    record = PageRecord(url=url, title=title, content="", content_hash="h", crawled_at="t", depth=3)
    fields, body = parse_frontmatter(render_page(record, "# Body\n---\nnot frontmatter\n"))
    assert fields["title"] == title
    assert fields["url"] == url
    assert body.startswith("# Body\n---\nnot frontmatter")


# -- HTML -> Markdown ---------------------------------------------------------------------------

code_text = (
    st.lists(
        st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ue000\ue001\ue002\ue003")
        | st.sampled_from(["\n", "\t", "    ", "```", "~~~", "<", ">", "&", "*", "_", "`", "|", "\\", "#"]),
        min_size=1,
        max_size=60,
    )
    .map("".join)
    .map(lambda s: "\n".join(line.rstrip() for line in s.split("\n")).strip("\n"))
    .filter(lambda s: s.strip() != "")
)


@FUZZ
@given(st.lists(code_text, min_size=1, max_size=4), st.sampled_from(["python", "", "rust"]))
def test_markdown_conversion_preserves_every_code_blocks_text(codes: list[str], lang: str) -> None:
    blocks = "".join(
        f"<p>Step {i} explains the next example in enough words.</p>"
        f'<pre><code class="language-{lang}">{html.escape(code)}</code></pre>'
        for i, code in enumerate(codes)
    )
    page = f"<html><head><title>Code</title></head><body><main><h1>Code</h1>{blocks}</main></body></html>"
    parsed = parse_page(page.encode(), "https://d.test/docs/code.html", OPTIONS, "utf-8")
    for code in codes:
        # No-break spaces in code become plain spaces (copy-paste safe): the one change allowed.
        assert code.replace("\xa0", " ") in parsed.markdown, (code, parsed.markdown)


def _corpus() -> list[bytes]:
    """The fixture pages, plus up to 300 pages under ``HOSTILE_CORPUS`` (benchmarks/fuzz.py sets it)."""
    pages = sorted(FIXTURES.rglob("*.html"))
    extra = os.environ.get("HOSTILE_CORPUS")
    if extra:
        found = sorted(Path(extra).rglob("*.html"))
        pages += found[:: max(1, len(found) // 300)][:300]
    return [p.read_bytes() for p in pages]


CORPUS = _corpus()


@st.composite
def mutated_pages(draw: st.DrawFn) -> bytes:
    page = bytearray(draw(st.sampled_from(CORPUS)))
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["cut", "delete", "insert", "flip", "dup"]))
        i = draw(st.integers(0, max(0, len(page) - 1)))
        if kind == "cut":
            del page[i:]
        elif kind == "delete":
            del page[i : i + draw(st.integers(1, 4000))]
        elif kind == "insert":
            page[i:i] = draw(
                st.sampled_from(
                    [
                        b"<",
                        b">",
                        b"</div>",
                        b"<pre>",
                        b"<table><tr><td>",
                        b"\x00",
                        b"\xff\xfe",
                        b"<!--",
                        b"<![CDATA[",
                        b"<title>",
                        b"&#0;",
                        b"&#x110000;",
                        b"<svg>",
                        b"<math>",
                        b"<h1>",
                        b"\xe2\x80",
                        b"<a href='javascript:x'>",
                        "\ue000".encode(),
                        "\ue001".encode(),
                        b"<code>",
                        b"<script>",
                    ]
                )
            )
        elif kind == "flip" and page:
            page[i] = draw(st.integers(0, 255))
        elif kind == "dup":
            j = draw(st.integers(i, min(len(page), i + 5000)))
            page[j:j] = page[i:j]
    return bytes(page)


def _parse_or_refuse(body: bytes, charset: str | None) -> None:
    try:
        parsed = parse_page(body, "https://d.test/docs/page.html", OPTIONS, charset)
    except ExtractError:
        return
    assert isinstance(parsed, ParsedPage)
    assert "\ue000" not in parsed.markdown and "\ue001" not in parsed.markdown


@FUZZ
@given(mutated_pages(), st.sampled_from([None, "utf-8", "latin-1", "shift_jis", "utf-16", "bogus"]))
def test_parse_page_never_crashes_on_mutated_corpus_pages(body: bytes, charset: str | None) -> None:
    _parse_or_refuse(body, charset)


@FUZZ
@given(
    st.binary(max_size=3000)
    | st.text(max_size=2000).map(lambda t: ("<html><body>" + t).encode("utf-8", "replace"))
)
def test_parse_page_never_crashes_on_random_bytes(body: bytes) -> None:
    _parse_or_refuse(body, None)


def test_a_truncated_head_is_refused_not_a_crash() -> None:
    with contextlib.suppress(ExtractError):
        parse_page(b'<!DOCTYPE html>\n<html lang="en">\n<head', "https://d.test/docs/p.html", OPTIONS, None)
