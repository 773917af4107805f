"""HTML region -> GitHub-flavoured Markdown.

``convert_region`` prepares the lxml tree (``convert.dom``), serialises it and
hands it to a converter chosen by measurement (``benchmarks/bench_extract.py``):
markdownify-rs, a Rust port of markdownify, is the default: behind this DOM
preparation its output was byte-identical to markdownify's on all 627 pages of
python-3.11 and npm-docusaurus, about 7x faster end to end; html-to-markdown
scored lower on code blocks and was slower. markdownify is the fallback where
markdownify-rs is not installed. Code blocks never pass through the converter: their placeholders
are replaced by fenced blocks built from the DOM text afterwards.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import lxml.etree

from doc_scraper.convert.dom import CODE_END, CODE_MARK, CodeBlock, prepare

if TYPE_CHECKING:
    from collections.abc import Callable

    from lxml.etree import _Element as HtmlElement

    from doc_scraper.models import SectionMark

logger = logging.getLogger(__name__)

DEFAULT_CONVERTER = "markdownify-rs"
CONVERTERS = ("markdownify-rs", "markdownify", "html-to-markdown")

_OPTIONS: dict[str, Any] = {
    "heading_style": "ATX",
    "bullets": "-",
    "escape_underscores": False,
    "escape_asterisks": False,
    "escape_misc": False,
    "table_infer_header": True,
}
# What may stand before a placeholder that is alone on its line: quote markers, indentation, and a
# list bullet or definition ":" when the code block is the first thing in the item.
_BLOCK_PREFIX = re.compile(r"[ \t>]*(?:(?:[-*+]|\d{1,9}[.)]|:)[ \t]+)?")
_MARKER = re.compile(r"(?:[-*+]|\d{1,9}[.)]|:)(?=[ \t]+$)")
_PLACEHOLDER = re.compile(CODE_MARK + r"(\d+)" + CODE_END)
_BLANK_RUNS = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_WS_ONLY_LINE = re.compile(r"\n[ \t]+(?=\n)")
_BACKTICK_RUN = re.compile(r"`{3,}")


@dataclass(frozen=True, slots=True)
class Converted:
    """Markdown with section markers still in it, and what was learned on the way."""

    markdown: str
    marks: tuple[SectionMark, ...]
    headings: tuple[str, ...]
    images: tuple[str, ...]
    h1: str


@lru_cache(maxsize=4)
def _converter(name: str) -> Callable[[str], str]:
    if name == "markdownify-rs":
        try:
            import markdownify_rs
        except ImportError:  # no wheel for this platform: markdownify gives the same output, slower
            logger.warning("convert.converter_fallback", extra={"wanted": name, "using": "markdownify"})
            return _converter("markdownify")

        def run_rs(html: str) -> str:
            return str(markdownify_rs.markdownify(html, **_OPTIONS))

        return run_rs
    if name == "markdownify":
        import markdownify

        def run_py(html: str) -> str:
            return str(markdownify.markdownify(html, **_OPTIONS))

        return run_py
    if name == "html-to-markdown":
        import html_to_markdown

        options = html_to_markdown.ConversionOptions(
            heading_style="atx",
            bullets="-",
            escape_asterisks=False,
            escape_underscores=False,
            escape_misc=False,
            code_block_style="backticks",
        )

        def run_h2m(html: str) -> str:
            result = html_to_markdown.convert(html, options)
            return str(getattr(result, "content", result))

        return run_h2m
    raise ValueError(f"unknown converter {name!r}; choose one of {', '.join(CONVERTERS)}")


def fence(code: CodeBlock, prefix: str = "") -> str:
    """A fenced block for ``code``, every line after the first prefixed (list indent, quote)."""
    runs = _BACKTICK_RUN.findall(code.text)
    ticks = "`" * max(3, max((len(r) for r in runs), default=0) + 1)
    lines = [f"{ticks}{code.language}", *code.text.split("\n"), ticks]
    bare = prefix.rstrip()
    out = [lines[0]]
    out.extend((prefix + line) if line else bare for line in lines[1:])
    return "\n".join(out)


def splice_code(markdown: str, codes: list[CodeBlock]) -> str:
    """Put fenced code blocks where their placeholders are (inline code where they share a line)."""
    if not codes or CODE_MARK not in markdown:
        return markdown
    out: list[str] = []
    pos = 0
    for m in _PLACEHOLDER.finditer(markdown):
        code = codes[int(m.group(1))]
        line_start = markdown.rfind("\n", 0, m.start()) + 1
        line_end = markdown.find("\n", m.end())
        line_end = len(markdown) if line_end < 0 else line_end
        prefix = markdown[line_start : m.start()]
        alone = _BLOCK_PREFIX.fullmatch(prefix) is not None and not markdown[m.end() : line_end].strip()
        out.append(markdown[pos : m.start()])
        if alone:
            # Continuation lines keep quote markers; a bullet or ":" becomes spaces of its width.
            continuation = _MARKER.sub(lambda b: " " * len(b.group(0)), prefix)
            out.append(fence(code, continuation))
            pos = line_end  # trailing blanks of the placeholder line go
        else:
            text = " ".join(code.text.split())
            ticks = "``" if "`" in text else "`"
            out.append(f"{ticks}{text}{ticks}")
            pos = m.end()
    out.append(markdown[pos:])
    return "".join(out)


def tidy(markdown: str) -> str:
    """Collapse blank-line runs, strip whitespace-only lines and the ends."""
    markdown = _WS_ONLY_LINE.sub("\n", markdown)
    markdown = _BLANK_RUNS.sub("\n\n", markdown)
    return markdown.strip("\n") + "\n" if markdown.strip() else ""


def html_to_markdown(html: str, converter: str = DEFAULT_CONVERTER) -> str:
    """Convert an HTML fragment with the named converter (no preparation)."""
    return _converter(converter)(html)


def convert_region(
    region: HtmlElement,
    resolve: Callable[[str], str],
    may_match: Callable[[str], bool] | None = None,
    converter: str = DEFAULT_CONVERTER,
    hrefs_absolute: bool = False,
) -> Converted:
    """Prepare ``region`` (mutated) and convert it; markers for sections are left in.

    ``resolve`` makes an href absolute (fragment kept); ``may_match`` may rule out
    selectors that cannot match on this page (a speed-up only).
    """
    prepared = prepare(region, resolve, may_match, hrefs_absolute)
    html = lxml.etree.tostring(region, encoding="unicode", method="html", with_tail=False)
    markdown = html_to_markdown(html, converter)
    markdown = splice_code(tidy(markdown), prepared.codes)
    return Converted(
        markdown=markdown,
        marks=tuple(prepared.marks),
        headings=tuple(prepared.headings),
        images=tuple(prepared.images),
        h1=prepared.h1,
    )
