"""Real builds of Docusaurus, VitePress, Starlight and rustdoc pages (tests/fixtures/*-real).

Each folder holds one page built here from a small source (see its SOURCE.md), the Markdown we
expect beside it, and these tests: the framework is detected, every code block of the source is
kept verbatim under its language fence, tables and admonitions survive, and no chrome leaks.

Three defects these pages found in DOM preparation (Expressive Code line divs, rustdoc where
clauses, rustdoc impl headings inside <details>) are fixed in convert/dom.py and kept fixed here.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import lxml.html
import pytest

from doc_scraper.cli import main
from doc_scraper.models import ExtractOptions, ParsedPage
from doc_scraper.worker import parse_page

if TYPE_CHECKING:
    from _pytest.mark.structures import ParameterSet

FIXTURES = Path(__file__).parent / "fixtures"
FENCE = re.compile(r"^```(\w*)\n(.*?)\n```$", re.S | re.M)
LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")

# The code blocks of the one Markdown source built with Docusaurus, VitePress and Starlight.
SITE_CODE = [
    ("bash", "python -m pip install frob\nfrob --version"),
    (
        "python",
        'import frob\n\ngadget = frob.Gadget("left", level=3)  # the highlighted line\n'
        "frob.run(gadget, dry_run=True)",
    ),
    ("toml", '[gadget]\nname = "left"\nlevel = 3'),  # with line numbers where the generator has them
]
SITE_TABLE = (
    "| Option | Default | Meaning |\n"
    "| --- | --- | --- |\n"
    "| `level` | `1` | How hard to frobnicate, from 1 to 100 |\n"
    "| `name` | none | Display name, see [Getting started]("
)
SITE_HEADINGS = (
    "Configuring gadgets",
    "Install",
    "Configuration file",
    "Options",
    "Settings file",
    "Running it",
)
# Chrome of every built page: skip links, page TOC, pagination, edit links, copy buttons.
COMMON_CHROME = ["On this page", "Skip to", "Previous", "Next", "Copy"]


@dataclass(frozen=True)
class RealPage:
    rel: str  # fixture path under tests/fixtures
    url: str  # where the page would be served
    framework: str
    code: list[tuple[str, str]]  # (language, text) of every code block of the source
    admonitions: list[str]  # blockquote openings the admonitions must become
    chrome: list[str]  # strings of the page's chrome that must not reach the Markdown
    table: str | None = None

    @property
    def expected(self) -> Path:
        return FIXTURES / self.rel.replace(".html", ".md")


DOCUSAURUS = RealPage(
    "docusaurus-real/configuration.html",
    "https://frob.example.org/docs/configuration",
    "docusaurus",
    SITE_CODE,
    [
        "> **Warning**\n>\n> Existing gadgets are overwritten.",
        "> **Note**\n>\n> Levels above 100 are capped.",
    ],
    [
        *COMMON_CHROME,
        "Edit this page",
        "Direct link to",
        "Built with Docusaurus",
        "\nDocs\n",
        "\u200b",
        "Copyright",
    ],
    SITE_TABLE,
)
VITEPRESS = RealPage(
    "vitepress-real/configuration.html",
    "https://frob.example.org/guide/configuration.html",
    "vitepress",
    SITE_CODE,
    # VitePress writes the default titles in capitals in the HTML; the kind (class) is kept.
    ["> **WARNING**\n>\n> Existing gadgets are overwritten.", "> **TIP**\n>\n> Levels above 100 are capped."],
    [
        *COMMON_CHROME,
        "\u200b",
        "Copyright",
        "Edit this page",
        "Main Navigation",
        "Sidebar Navigation",
        "Appearance",
        "Return to top",
        "Pager",
        "Released under",
        "\nbash\n",  # the language label over a code block (span.lang)
        "\npython\n",
    ],
    SITE_TABLE,
)
STARLIGHT = RealPage(
    "starlight-real/configuration.html",
    "https://frob.example.org/guides/configuration/",
    "starlight",
    SITE_CODE,
    [
        "> **Caution**\n>\n> Existing gadgets are overwritten.",
        "> **Note**\n>\n> Levels above 100 are capped.",
    ],
    [
        *COMMON_CHROME,
        "Edit page",
        "Section titled",
        "Terminal window",
        "Select theme",
        "Overview",
        "Search",
        "Cancel",
        "GitHub",
        "Guides",
    ],
    SITE_TABLE,
)
RUSTDOC_CHROME = [
    "Skip to main content",
    "Copy item path",
    "Source",
    "§",
    "Expand description",
    "0.1.0",
]
RUSTDOC_FN = RealPage(
    "rustdoc-real/fn.frobnicate.html",
    "https://docs.example.org/frob/fn.frobnicate.html",
    "rustdoc",
    [
        ("rust", "pub fn frobnicate(gadget: &mut Gadget, factor: u32) -> u32"),
        (
            "rust",
            'use frob::{frobnicate, gadget::Gadget};\n\nlet mut g = Gadget::new("left", 3);\n'
            "let level = frobnicate(&mut g, 4);\nassert_eq!(level, 12);",
        ),
        # The "# use ..." line of the doc comment is hidden by rustdoc, so it is not on the page.
        ("rust", 'let mut g = Gadget::new("x", 1);\nfrobnicate(&mut g, 0);'),
    ],
    [],
    [*RUSTDOC_CHROME, "In crate frob", "Sections", "ⓘ", "This example panics"],
    "| factor | result for level 3 |\n| --- | --- |\n| 1 | 3 |\n| 4 | 12 |",
)
RUSTDOC_FN_WHERE = RealPage(
    "rustdoc-real/fn.frobnicate_all.html",
    "https://docs.example.org/frob/fn.frobnicate_all.html",
    "rustdoc",
    [
        # rustdoc shows the where clause (a <div class="where"> inside the <pre>) on its own line.
        (
            "rust",
            "pub fn frobnicate_all<'a, I>(gadgets: I, factor: u32) -> u32\n"
            "where\n    I: IntoIterator<Item = &'a mut Gadget>,",
        ),
        (
            "rust",
            'use frob::{frobnicate_all, gadget::Gadget};\n\nlet mut gadgets = vec![Gadget::new("a", 1), '
            'Gadget::new("b", 2)];\nassert_eq!(frobnicate_all(gadgets.iter_mut(), 10), 20);',
        ),
    ],
    [],
    [c for c in RUSTDOC_CHROME if c != "§"],  # no section headings on this page
)
RUSTDOC_STRUCT = RealPage(
    "rustdoc-real/struct.Gadget.html",
    "https://docs.example.org/frob/gadget/struct.Gadget.html",
    "rustdoc",
    [
        ("rust", "pub struct Gadget {\n    pub name: String,\n    /* private fields */\n}"),
        (
            "rust",
            'use frob::gadget::Gadget;\n\nlet g = Gadget::new("right", 7);\n'
            'println!("{} is at level {}", g.name, g.level());',
        ),
    ],
    ["> **Warning**\n>\n> Levels above MAX_LEVEL are silently capped."],
    [*RUSTDOC_CHROME, "In frob::", "Methods"],
)


def _param(page: RealPage) -> ParameterSet:
    return pytest.param(page, id=page.rel)


ALL = [DOCUSAURUS, VITEPRESS, STARLIGHT, RUSTDOC_FN, RUSTDOC_FN_WHERE, RUSTDOC_STRUCT]


def _parse(page: RealPage) -> ParsedPage:
    return parse_page((FIXTURES / page.rel).read_bytes(), page.url, ExtractOptions())


@pytest.mark.parametrize(
    "page",
    [
        _param(DOCUSAURUS),
        _param(VITEPRESS),
        _param(STARLIGHT),
        _param(RUSTDOC_FN),
        _param(RUSTDOC_FN_WHERE),
        _param(RUSTDOC_STRUCT),
    ],
)
def test_real_build_converts_to_the_expected_markdown(page: RealPage) -> None:
    parsed = _parse(page)
    if os.environ.get("UPDATE_FIXTURES"):  # then review the diff
        page.expected.write_text(parsed.markdown, encoding="utf-8")
    assert parsed.markdown == page.expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", [_param(p) for p in ALL])
def test_real_build_is_detected_as_its_framework_with_high_confidence(page: RealPage) -> None:
    detection = _parse(page).detection
    assert detection.framework == page.framework
    assert detection.confidence == "high"


@pytest.mark.parametrize(
    "page",
    [
        _param(DOCUSAURUS),
        _param(VITEPRESS),
        _param(STARLIGHT),
        _param(RUSTDOC_FN),
        _param(RUSTDOC_FN_WHERE),
        _param(RUSTDOC_STRUCT),
    ],
)
def test_every_code_block_of_the_source_is_fenced_verbatim_with_its_language(page: RealPage) -> None:
    fences = FENCE.findall(_parse(page).markdown)
    assert fences == page.code


@pytest.mark.parametrize("page", [_param(p) for p in ALL])
def test_every_pre_of_the_page_becomes_one_fence_with_a_language(page: RealPage) -> None:
    tree = lxml.html.fromstring((FIXTURES / page.rel).read_bytes())
    fences = FENCE.findall(_parse(page).markdown)
    assert len(fences) == len(tree.xpath("//pre")) == len(page.code)
    assert all(lang for lang, _ in fences)


@pytest.mark.parametrize("page", [_param(p) for p in ALL])
def test_tables_and_admonitions_of_a_real_build_are_kept(page: RealPage) -> None:
    markdown = _parse(page).markdown
    if page.table:
        assert page.table in markdown
    for admonition in page.admonitions:
        assert admonition in markdown


@pytest.mark.parametrize("page", [_param(p) for p in ALL])
def test_no_chrome_of_a_real_build_reaches_the_markdown(page: RealPage) -> None:
    markdown = _parse(page).markdown
    # Guard the guard: every chrome string is really on the page (else this test proves nothing).
    tree = lxml.html.fromstring((FIXTURES / page.rel).read_bytes())
    on_page = " ".join(tree.body.itertext()) + " ".join(tree.xpath("//@title | //@aria-label"))
    for junk in page.chrome:
        assert junk.strip() in on_page, junk
        assert junk not in markdown, junk


@pytest.mark.parametrize("page", [_param(DOCUSAURUS), _param(VITEPRESS), _param(STARLIGHT)])
def test_site_builds_keep_every_heading_and_the_relative_link(page: RealPage) -> None:
    parsed = _parse(page)
    assert parsed.headings == SITE_HEADINGS
    assert parsed.title == "Configuring gadgets"
    assert parsed.markdown.startswith("# Configuring gadgets\n")
    assert parsed.markdown.count("[Getting started](") == 2
    assert any("getting-started" in link for link in parsed.links)


@pytest.mark.parametrize("page", [_param(p) for p in ALL])
def test_extract_cli_json_reports_the_framework_of_a_real_build(
    page: RealPage, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["extract", "--json", "--url", page.url, str(FIXTURES / page.rel)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["framework"] == page.framework
    assert data["needs_javascript"] is False


def test_rustdoc_pages_keep_api_sections() -> None:
    struct = _parse(RUSTDOC_STRUCT)
    assert struct.title == "Struct Gadget"
    assert "`name: String`" in struct.markdown
    plain = LINK.sub(r"\1", struct.markdown)  # signatures are bold lines or headings with links
    assert "pub fn new(name: &str, level: u32) -> Self" in plain
    assert "fn frob_many(&mut self, times: u32) -> u32" in plain
    function = _parse(RUSTDOC_FN)
    assert list(function.headings) == ["Function frobnicate", "Examples", "Panics"]


def test_rustdoc_where_clauses_stay_separated_from_the_impl_head() -> None:
    markdown = _parse(RUSTDOC_STRUCT).markdown
    assert "Twhere" not in markdown
    assert markdown.count(" for T where ") == 8  # one per blanket impl with a where clause


def test_rustdoc_impl_blocks_are_headings_whether_documented_or_not() -> None:
    headings = _parse(RUSTDOC_STRUCT).headings
    assert "impl Eq for Gadget" in headings  # a bare impl
    assert "impl Clone for Gadget" in headings  # an impl with methods, inside <details>


def test_the_line_number_gutter_of_a_vitepress_code_block_is_dropped() -> None:
    tree = lxml.html.fromstring((FIXTURES / VITEPRESS.rel).read_bytes())
    assert [e.text_content() for e in tree.xpath("//span[@class='line-number']")] == ["1", "2", "3"]
    markdown = _parse(VITEPRESS).markdown
    assert not re.search(r"^\s*\d+\s*$", markdown, re.M)
