"""parse_page: bytes of one HTML page -> ParsedPage. The process-pool entry point.

Stages: (1) decode; (2) parse with lxml; (3) links, canonical, robots meta from
the whole page; (4) detect the framework and pick the content region (or report
a JavaScript shell); (5) clean and convert the region to Markdown with section
markers; (6) split sections (markers removed); (7) title and hash.

Pure and stateless apart from per-process caches of compiled selectors, so it
runs in a ``ProcessPoolExecutor``; nothing lxml leaves this module.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import re

import lxml.etree

from doc_scraper.convert.markdown import DEFAULT_CONVERTER, convert_region
from doc_scraper.errors import ExtractError
from doc_scraper.extract.decode import decode_html
from doc_scraper.extract.detect import PageIndex
from doc_scraper.extract.links import Resolver, base_url, canonical_url, extract_links, is_noindex
from doc_scraper.extract.region import clean_region, select_region
from doc_scraper.models import SECTION_END, SECTION_MARK, ExtractOptions, ParsedPage, Section, SectionMark

logger = logging.getLogger(__name__)

# Site suffixes of <title>: "Page — Python 3.11 documentation", "Page | Docusaurus", "Page - MkDocs".
_TITLE_SEPARATORS = (" — ", " | ", " - ", " – ", " · ", " :: ", " » ")
_LINK_TARGETS = re.compile(r"\]\([^)\s]*")  # a Markdown link target, up to its end
_MARKER_LINE = re.compile("^" + SECTION_MARK + r"\d+" + SECTION_END + r"[ \t]*\n?", re.MULTILINE)
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
# C0 controls lxml refuses in attribute and text values, and the private-use characters this
# package uses as markers (sections, code placeholders): never taken from a page.
_BAD_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ue000-\ue003]")
_CONTROL_BYTES = bytes(range(0x09)) + b"\x0b\x0c" + bytes(range(0x0E, 0x20))


def strip_site_suffix(title: str) -> str:
    """Drop the last " — Site name" part of a <title>."""
    title = " ".join(title.split())
    cut = -1
    for sep in _TITLE_SEPARATORS:
        pos = title.rfind(sep)
        if pos > cut:
            cut = pos
    if cut > 0:
        return title[:cut].strip()
    return title


def _page_title(doc: lxml.etree._Element) -> str:
    head = doc.find("head")
    for t in (head if head is not None else doc).iter("title"):
        return " ".join("".join(t.itertext()).split())
    return ""


def _split(marked: str, marks: list[SectionMark], title: str) -> tuple[str, tuple[Section, ...]]:
    try:
        from doc_scraper.convert.sections import split_sections
    except ImportError:  # the sections module is optional while it is being written
        return _MARKER_LINE.sub("", marked), ()
    return split_sections(marked, marks, title)


_PARSER = lxml.etree.HTMLParser(remove_comments=True, remove_pis=True, huge_tree=True)


def _parse(text: str, url: str) -> lxml.etree._Element:
    """The document root; plain lxml elements (no lxml.html class lookup: much faster)."""
    text = _XML_DECL.sub("", text, count=1)
    if not text or text.isspace():  # not text.strip(): no copy of the page
        raise ExtractError(url, "not HTML (empty document)")
    try:
        doc = lxml.etree.fromstring(text, _PARSER)
    except (lxml.etree.ParserError, lxml.etree.XMLSyntaxError, ValueError) as exc:
        raise ExtractError(url, f"cannot parse HTML ({exc})") from exc
    if doc is None:
        raise ExtractError(url, "not HTML (no elements)")
    return doc


def _may_hold_bad_chars(body: bytes, encoding: str) -> bool:
    """Cheap byte-level test for _BAD_CHARS (a regex over the text would cost more than parsing)."""
    if not _ascii_compatible(encoding):
        return True
    return len(body.translate(None, _CONTROL_BYTES)) != len(body) or b"\xee\x80" in body


def _ascii_compatible(encoding: str) -> bool:
    return not encoding.startswith(("utf-16", "utf-32", "utf_16", "utf_32"))


def parse_page(
    body: bytes,
    url: str,
    options: ExtractOptions,
    charset: str | None = None,
    converter: str = DEFAULT_CONVERTER,
) -> ParsedPage:
    """Parse one HTML page into Markdown, links and metadata (see module docstring).

    The cyclic garbage collector is paused while the page is processed (and restored after):
    the thousands of short-lived lxml proxies form no cycles, and the collections they trigger
    cost about a third of the CPU time.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _parse_page(body, url, options, charset, converter)
    finally:
        if paused:
            gc.enable()


def _parse_page(
    body: bytes, url: str, options: ExtractOptions, charset: str | None, converter: str
) -> ParsedPage:
    # 1-2. decode and parse
    html, encoding = decode_html(body, url, charset)
    if _may_hold_bad_chars(body, encoding):
        html = _BAD_CHARS.sub("", html)
    doc = _parse(html, url)
    index = PageIndex(body if _ascii_compatible(encoding) else html.encode("utf-8", "replace"))
    # 3. page-level facts, before the region is mutated
    resolver = Resolver(base_url(doc, url))
    # Without link_selectors every a[href] of the body is visited: make it absolute on the way.
    rewrite = not options.link_selectors
    links = extract_links(doc, resolver, options.link_selectors, options.respect_nofollow, rewrite)
    canonical = canonical_url(doc, resolver)
    noindex = is_noindex(doc)
    page_title = _page_title(doc)
    # 4. region
    region, detection, profile = select_region(doc, index, options.content_selector, url)
    if region is None:
        logger.debug("page.needs_javascript", extra={"url": url, "framework": detection.framework})
        title = strip_site_suffix(page_title) or "Untitled"
        return ParsedPage(
            url=url,
            title=title,
            markdown="",
            content_hash=hashlib.sha256(b"").hexdigest(),
            links=links,
            canonical=canonical,
            detection=detection,
            needs_javascript=True,
            noindex=noindex,
        )
    # 5. clean + convert
    clean_region(region, profile, index)
    converted = convert_region(region, resolver.absolute, index.may_match, converter, hrefs_absolute=rewrite)
    title = converted.h1 or strip_site_suffix(page_title) or "Untitled"
    # 6. sections; markers never survive this step
    markdown, sections = _split(converted.markdown, list(converted.marks), title)
    if SECTION_MARK in markdown:
        markdown = _MARKER_LINE.sub("", markdown).replace(SECTION_MARK, "").replace(SECTION_END, "")
    # 7. result
    return ParsedPage(
        url=url,
        title=title,
        markdown=markdown,
        content_hash=hashlib.sha256(markdown.encode("utf-8")).hexdigest(),
        text_hash=hashlib.sha256(_LINK_TARGETS.sub("]()", markdown).encode("utf-8")).hexdigest(),
        headings=converted.headings,
        links=links,
        canonical=canonical,
        images=converted.images,
        sections=sections,
        detection=detection,
        needs_javascript=False,
        text_length=len(markdown),
        noindex=noindex,
    )
