"""parse_page, the process-pool entry point: real fixture pages and the ParsedPage contract."""

from __future__ import annotations

import hashlib
import os
import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import lxml.html
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.models import SECTION_END, SECTION_MARK, ExtractOptions, ParsedPage
from doc_scraper.worker import parse_page, strip_site_suffix

FIXTURES = Path(__file__).parent / "fixtures"
# (fixture, URL it was served at, framework, chrome strings that must not leak)
REAL_PAGES = [
    (
        "sphinx/bisect.html",
        "http://127.0.0.1:8000/python-3.11/library/bisect.html",
        "sphinx",
        [
            "Previous topic",
            "Next topic",
            "Quick search",
            "This Page",
            "Report a Bug",
            "Show Source",
            "¶",
            "Permalink",
            "Navigation",
            "Copyright",
        ],
    ),
    (
        "docusaurus/npm-whoami.html",
        "http://127.0.0.1:8000/npm-docusaurus/docs/commands/npm-whoami/",
        "docusaurus",
        ["Edit this page", "Previous", "Next", "On this page", "Direct link to", "CLI Commands", "\u200b"],
    ),
    (
        "mkdocs/getting-started.html",
        "http://127.0.0.1:8000/mkdocs/getting-started.html",
        "mkdocs",
        ["Edit on GitHub", "Keyboard Shortcuts", "Documentation built with", "Close", "Navigation"],
    ),
]
# Pages built here from one small source (tests/fixtures/README-extract.md) with each theme.
BUILT_CHROME = [
    "Frobnicator guide",
    "Back to top",
    "Show Source",
    "Made with",
    "Search",
    "Toggle",
    "¶",
    "Permalink",
]
REAL_PAGES += [
    (f"{framework}/config.html", "https://frob.example.org/config.html", detected, BUILT_CHROME)
    for framework, detected in [
        ("sphinx-furo", "sphinx-furo"),
        ("sphinx-rtd", "sphinx-rtd"),
        ("sphinx-pydata", "sphinx-pydata"),
        ("sphinx-book", "sphinx-book"),
        ("sphinx-alabaster", "sphinx"),
        ("mkdocs-material", "mkdocs-material"),
    ]
]
FENCE = re.compile(r"^\s*```(\w*)\n(.*?)\n\s*```$", re.S | re.M)


def _parse(rel: str, url: str) -> ParsedPage:
    return parse_page((FIXTURES / rel).read_bytes(), url, ExtractOptions())


@pytest.mark.parametrize(("rel", "url", "framework", "chrome"), REAL_PAGES)
def test_real_page_converts_to_the_expected_markdown(
    rel: str, url: str, framework: str, chrome: list[str]
) -> None:
    page = _parse(rel, url)
    expected = FIXTURES / rel.replace(".html", ".md")
    if os.environ.get("UPDATE_FIXTURES"):
        expected.write_text(page.markdown, encoding="utf-8")
    assert page.detection.framework == framework
    assert page.markdown == expected.read_text(encoding="utf-8")
    for junk in chrome:
        assert junk not in page.markdown, junk


def test_every_sphinx_theme_gives_the_same_markdown() -> None:
    pages = [
        _parse(rel, url).markdown
        for rel, url, fw, _ in REAL_PAGES
        if fw.startswith("sphinx") and "frob" in url
    ]
    assert len(pages) == 5
    assert all(md == pages[0] for md in pages)
    assert "> **Warning**\n>\n> Existing gadgets are overwritten." in pages[0]
    assert "`frob.run(path, *, level=1)`" in pages[0]


@pytest.mark.parametrize(("rel", "url", "framework", "chrome"), REAL_PAGES)
def test_every_code_block_of_a_real_page_is_fenced_with_a_language(
    rel: str, url: str, framework: str, chrome: list[str]
) -> None:
    tree = lxml.html.fromstring((FIXTURES / rel).read_bytes())
    gutter = "ancestor-or-self::*[contains(@class, 'linenos') or contains(@class, 'linenodiv')]"
    pre_count = len(tree.xpath(f"//pre[not({gutter})]"))
    fences = FENCE.findall(_parse(rel, url).markdown)
    assert len(fences) == pre_count
    assert all(lang for lang, _ in fences)


def test_sphinx_page_sections_use_element_ids_and_api_names() -> None:
    page = _parse(*REAL_PAGES[0][:2])
    anchors = {s.anchor for s in page.sections}
    assert "module-bisect" in anchors or "bisect-array-bisection-algorithm" in anchors
    assert "bisect.bisect_left" in anchors
    assert page.title == "bisect — Array bisection algorithm"
    assert page.headings[0] == page.title
    assert page.canonical == "https://docs.python.org/3/library/bisect.html"
    assert "http://127.0.0.1:8000/python-3.11/library/heapq.html" in page.links


def test_docusaurus_title_comes_from_title_without_site_suffix() -> None:
    page = _parse(*REAL_PAGES[1][:2])
    assert page.title == "npm-whoami"
    assert page.detection.confidence == "high"
    assert page.detection.selector == "article .theme-doc-markdown"


def test_parsed_page_is_picklable_and_hash_matches_markdown() -> None:
    page = _parse(*REAL_PAGES[0][:2])
    clone = pickle.loads(pickle.dumps(page))
    assert clone == page
    assert page.content_hash == hashlib.sha256(page.markdown.encode()).hexdigest()
    assert SECTION_MARK not in page.markdown
    assert SECTION_END not in page.markdown
    for section in page.sections:
        assert SECTION_MARK not in section.text


def test_parse_page_runs_in_a_process_pool() -> None:
    body = (FIXTURES / REAL_PAGES[2][0]).read_bytes()
    with ProcessPoolExecutor(max_workers=1) as pool:
        page = pool.submit(parse_page, body, REAL_PAGES[2][1], ExtractOptions()).result(timeout=60)
    assert page.detection.framework == "mkdocs"
    assert page.markdown.startswith("# Getting Started with MkDocs")


def _html(body: str, title: str = "Guide — Example 2.0 documentation") -> bytes:
    return f"<html><head><title>{title}</title></head><body><main>{body}</main></body></html>".encode()


def test_title_prefers_the_first_h1_of_the_content() -> None:
    page = parse_page(
        _html("<h2>Not me</h2><h1>Real <code>title</code></h1>"), "https://x.org/", ExtractOptions("main")
    )
    assert page.title == "Real title"


def test_title_falls_back_to_title_tag_then_untitled() -> None:
    assert parse_page(_html("<p>x</p>"), "https://x.org/", ExtractOptions("main")).title == "Guide"
    assert (
        parse_page(_html("<p>x</p>", title=""), "https://x.org/", ExtractOptions("main")).title == "Untitled"
    )


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (
            "os — Miscellaneous operating system interfaces — Python 3.11.2 documentation",
            "os — Miscellaneous operating system interfaces",
        ),
        ("Installation | Docusaurus", "Installation"),
        ("Getting Started - MkDocs", "Getting Started"),
        ("NoSuffix", "NoSuffix"),
    ],
)
def test_site_suffix_is_stripped_from_titles(raw: str, clean: str) -> None:
    assert strip_site_suffix(raw) == clean


def test_headings_sections_and_slugs_for_pages_without_ids() -> None:
    body = "<h1>Intro</h1><p>a</p><h2>Set up</h2><p>b</p><h2>Set up</h2><p>c</p><h3 id='own'>Own</h3><p>d</p>"
    page = parse_page(_html(body), "https://x.org/", ExtractOptions("main"))
    assert page.headings == ("Intro", "Set up", "Set up", "Own")
    anchors = [s.anchor for s in page.sections]
    assert "set-up" in anchors
    assert "set-up-1" in anchors
    assert "own" in anchors


def test_explicit_selector_matching_nothing_is_an_extract_error() -> None:
    from doc_scraper.errors import ExtractError

    with pytest.raises(ExtractError, match="content_selector"):
        parse_page(_html("<p>x</p>"), "https://x.org/", ExtractOptions("div.nope"))


def test_needs_javascript_page_has_empty_markdown_and_its_links() -> None:
    body = (
        b'<html><body><div id="root"></div><a href="/next">n</a><script src="/app.js"></script></body></html>'
    )
    page = parse_page(body, "https://x.org/", ExtractOptions())
    assert page.needs_javascript
    assert page.markdown == ""
    assert page.links == ("https://x.org/next",)


_TAGS = [
    "<p>",
    "</p>",
    "<div class='body'>",
    "</div>",
    "<pre>",
    "</pre>",
    "<h2 id=x>",
    "</h2>",
    "<table>",
    "<td>",
    "<dl class='py'>",
    "<dt id='a.b'>",
    "<dd>",
    "<a href='../x#y'>",
    "</a>",
    "<code>",
    "<li>",
    "<script>",
    "</script>",
    "<br>",
    "&amp;",
    "\ue000",
    "\ue002",
    "|",
    "`",
    "\n",
    "text ",
    "<!-- c -->",
]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(_TAGS), max_size=60), st.binary(max_size=20))
def test_parse_page_never_fails_on_odd_markup(parts: list[str], junk: bytes) -> None:
    from doc_scraper.errors import ExtractError

    body = ("<html><body>" + "".join(parts)).encode() + junk.replace(b"\x00", b"")
    try:
        page = parse_page(body, "https://x.org/a/", ExtractOptions())
    except ExtractError:
        return
    assert SECTION_MARK not in page.markdown
    assert "\ue002" not in page.markdown
    assert page.content_hash == hashlib.sha256(page.markdown.encode()).hexdigest()


def test_a_truncated_head_gives_an_empty_page_not_a_crash() -> None:
    page = parse_page(b'<!DOCTYPE html>\n<html lang="en">\n<head', "https://d.test/p.html", ExtractOptions())
    assert page.markdown == ""
    assert page.detection.framework == "unknown"
