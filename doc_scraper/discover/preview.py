"""Preview what a crawl would write for one fetched page, with numbers to judge the selector.

``preview_page`` runs the crawl's own ``worker.parse_page`` (same detection, region, cleaning
and conversion) and measures the result: Markdown characters, the share of the page's text
that the region keeps, code blocks kept against the ``<pre>`` blocks on the page, headings,
and navigation left inside the cleaned region. Pure and synchronous: call it in a thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import lxml.html

from doc_scraper.errors import DocScraperError
from doc_scraper.extract.decode import decode_html
from doc_scraper.extract.profiles import CHROME, PROFILE_BY_ID
from doc_scraper.models import Detection, ExtractOptions
from doc_scraper.worker import parse_page

PREVIEW_LINES_TEXT = 25
PREVIEW_LINES_JSON = 40
# Navigation left in the content region; docutils renders footnotes as <aside>, which is content.
_NAV_LIKE = (
    "nav, [role='navigation'], [class*='sidebar'], "
    "aside:not([class*='footnote']):not([class*='citation']):not([role='note'])"
)
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_OPEN_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>")
_HEADING = re.compile(r"^#{1,4}\s+\S")


@dataclass(frozen=True, slots=True)
class Preview:
    """The extracted Markdown of the seed page and its quality numbers."""

    url: str = ""
    markdown: str = ""
    chars: int = 0
    page_text_ratio: float = 0.0  # visible text in the region / visible text in <body>
    code_blocks_kept: int = 0  # fenced blocks in the Markdown
    code_blocks_total: int = 0  # <pre> blocks on the whole page
    headings: int = 0  # h1-h4 lines in the Markdown
    nav_leak: int = 0  # navigation-like elements left inside the cleaned region
    title: str = ""
    needs_javascript: bool = False
    detection: Detection = field(default_factory=Detection)
    error: str = ""

    def head(self, lines: int) -> str:
        return "\n".join(self.markdown.splitlines()[:lines])


def preview_page(
    body: bytes, url: str, content_selector: str = "auto", charset: str | None = None
) -> Preview:
    """Extract ``body`` as a crawl would and measure the result; errors land in ``Preview.error``."""
    try:
        page = parse_page(body, url, ExtractOptions(content_selector=content_selector), charset)
    except DocScraperError as exc:
        return Preview(url=url, error=str(exc))
    stats = _region_stats(body, url, page.detection.selector, charset, page.detection.framework)
    markdown = page.markdown
    return Preview(
        url=url,
        markdown=markdown,
        chars=len(markdown),
        page_text_ratio=stats[0],
        code_blocks_kept=count_fenced_blocks(markdown),
        code_blocks_total=stats[1],
        headings=count_headings(markdown),
        nav_leak=stats[2],
        title=page.title,
        needs_javascript=page.needs_javascript,
        detection=page.detection,
    )


def _region_stats(
    body: bytes, url: str, selector: str, charset: str | None, framework: str
) -> tuple[float, int, int]:
    """(text ratio, <pre> on the page, nav-like elements the cleaner leaves in the region).

    ``selector`` is the one the extraction used ("" = readability: no region to measure).
    The cleaner's removals are taken from the profile data (``CHROME`` + the profile's excludes).
    """
    try:
        html, _ = decode_html(body, url, charset)
        doc = lxml.html.document_fromstring(_XML_DECL.sub("", html, count=1))
    except (DocScraperError, ValueError, lxml.etree.LxmlError):
        return 0.0, 0, 0
    total_pre = len(doc.xpath("//pre"))
    body_el = doc.find("body")
    page_text = _text_length(body_el if body_el is not None else doc)
    if not selector:
        return 0.0, total_pre, 0
    try:
        found = _css(selector)(doc)
    except Exception:  # cssselect's own error family: an invalid selector measures nothing
        return 0.0, total_pre, 0
    if not found:
        return 0.0, total_pre, 0
    region = found[0]
    profile = PROFILE_BY_ID.get(framework)
    removed: set[lxml.html.HtmlElement] = set()
    for chrome in CHROME + (profile.exclude if profile else ()):
        removed.update(el for el in _css(chrome)(region) if el is not region)

    def is_removed(el: lxml.html.HtmlElement) -> bool:
        return any(node in removed for node in el.iterancestors()) or el in removed

    leak = sum(1 for el in _css(_NAV_LIKE)(region) if el is not region and not is_removed(el))
    region_text = _text_length(region) - sum(_text_length(el) for el in removed if not _inside(el, removed))
    ratio = round(max(region_text, 0) / page_text, 3) if page_text else 0.0
    return min(ratio, 1.0), total_pre, leak


def _inside(el: lxml.html.HtmlElement, group: set[lxml.html.HtmlElement]) -> bool:
    return any(node in group for node in el.iterancestors())


def _text_length(el: lxml.html.HtmlElement) -> int:
    """Characters of text outside scripts and styles, whitespace runs counted once."""
    parts = []
    for node in el.iter():
        if node.tag in ("script", "style", "noscript", "template") or not isinstance(node.tag, str):
            continue
        if node.text:
            parts.append(node.text)
    parts.extend(node.tail for node in el.iterdescendants() if node.tail)
    return len(" ".join(" ".join(parts).split()))


def _css(selector: str) -> Any:
    from lxml.cssselect import CSSSelector

    return CSSSelector(selector, translator="html")


def count_fenced_blocks(markdown: str) -> int:
    """Number of complete fenced code blocks (``` or ~~~; a closing fence is at least as long)."""
    blocks = 0
    fence = ""
    for line in markdown.splitlines():
        stripped = line.strip()
        if not fence:
            match = _OPEN_FENCE.match(line)
            if match:
                fence = match.group(1)
        elif stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            fence = ""
            blocks += 1
    return blocks


def count_headings(markdown: str) -> int:
    """ATX headings of level 1-4 outside code blocks."""
    count = 0
    in_code = False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if not in_code and _HEADING.match(line):
            count += 1
    return count
