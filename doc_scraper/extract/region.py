"""Pick, validate and clean the content region of a page.

Stages: (1) a configured selector, or the detected profile's alternatives left
to right; (2) validation: the region must hold at least ``MIN_REGION_TEXT``
visible characters, else (3) ``generic.generic_region`` picks the main content; (4) chrome (the
profile's excludes and ``profiles.CHROME``) is removed inside the region.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

import lxml.etree
import lxml.html

from doc_scraper.convert.dom import drop_tree
from doc_scraper.errors import ExtractError
from doc_scraper.extract.detect import PageIndex, css, detect, visible_text_length
from doc_scraper.extract.generic import generic_region
from doc_scraper.extract.profiles import CHROME, Profile

if TYPE_CHECKING:
    from lxml.etree import _Element as HtmlElement

    from doc_scraper.models import Detection

logger = logging.getLogger(__name__)

MIN_REGION_TEXT = 200
_MEDIA = ("img", "picture", "video", "audio", "svg", "iframe", "table", "pre")


def _has_content(el: HtmlElement) -> bool:
    """Visible text (zero-width ignored) or any media/table/pre element."""
    if visible_text_length(el, 1) > 0:
        return True
    return any(True for _ in el.iter(*_MEDIA))


def _split(selector: str) -> list[str]:
    return [part.strip() for part in selector.split(",") if part.strip()]


def _first(
    doc: HtmlElement, index: PageIndex | None, alternatives: list[str], min_text: int
) -> tuple[HtmlElement | None, str]:
    """First element of the first alternative that holds enough text (0: any content)."""
    for sel in alternatives:
        try:
            found = index.select(doc, sel) if index is not None else css(sel)(doc)
        except Exception as exc:  # cssselect raises its own SelectorSyntaxError family
            raise ExtractError(
                "", f"content_selector {sel!r} is not valid CSS ({exc}); fix the selector"
            ) from exc
        for el in found[:5]:
            if min_text == 0:
                if _has_content(el):
                    return el, sel
            elif visible_text_length(el, min_text) >= min_text:
                return el, sel
    return None, ""


def readability_region(doc: HtmlElement) -> HtmlElement | None:
    """The article readability finds in the whole page, as a new element (or None)."""
    from readability import Document

    try:
        html = lxml.etree.tostring(doc, encoding="unicode", method="html")
        summary = Document(html).summary(html_partial=True)
    except Exception as exc:  # readability raises bare Exception subclasses on odd pages
        logger.debug("extract.readability_failed", extra={"error": str(exc)})
        return None
    if not summary or not summary.strip():
        return None
    try:
        root: HtmlElement = lxml.html.fragment_fromstring(summary, create_parent="div")
    except (AssertionError, ValueError, lxml.etree.ParserError) as exc:  # e.g. "too many bodies: []"
        logger.debug("extract.readability_unparsable", extra={"error": str(exc)})
        return None
    return root


def select_region(
    doc: HtmlElement, index: PageIndex, content_selector: str, url: str
) -> tuple[HtmlElement | None, Detection, Profile | None]:
    """The content element, the detection, and the profile used (None element: a JS shell)."""
    detection, profile = detect(doc, index)
    if detection.confidence == "js-rendered":
        return None, detection, None
    if content_selector and content_selector.strip().lower() != "auto":
        try:
            el, sel = _first(doc, None, _split(content_selector), 0)
        except ExtractError as exc:
            raise ExtractError(url, str(exc).lstrip(": ")) from exc
        if el is None:
            raise ExtractError(
                url,
                f"content_selector {content_selector!r} matched no element with content; "
                "fix the selector or use content_selector: auto",
            )
        return el, replace(detection, selector=sel), profile
    if profile is not None:
        el, sel = _first(doc, index, list(profile.content), MIN_REGION_TEXT)
        if el is not None:
            return el, replace(detection, selector=sel), profile
        detection = replace(detection, confidence="unvalidated", selector="")
        small, small_sel = _first(doc, index, list(profile.content), 0)
        if small is not None:
            # A short page of a known framework: its own region beats the generic guess.
            return small, replace(detection, selector=small_sel), profile
    body = doc.find("body")
    rd = generic_region(doc)  # measured: benchmarks/eval_generic.py (README, Performance)
    if rd is not None and _has_content(rd):
        return rd, detection, profile
    return body if body is not None else doc, detection, profile


# One compound selector: tag, classes, id and attribute tests, no combinators.
_SIMPLE = re.compile(
    r"^([a-zA-Z][\w-]*)?((?:[.#][\w-]+)*)((?:\[[\w-]+(?:=(?:'[^']*'|\"[^\"]*\"|[\w-]+))?\])*)$"
)
_SIMPLE_ATTR = re.compile(r"\[([\w-]+)(?:=(?:'([^']*)'|\"([^\"]*)\"|([\w-]+)))?\]")


@dataclass(frozen=True, slots=True)
class _Simple:
    tag: str | None
    classes: frozenset[str]
    id: str | None
    attrs: tuple[tuple[str, str | None], ...]

    def matches(self, el: HtmlElement, classes: list[str]) -> bool:
        """True if ``el`` (whose tag the caller checked) has ``classes`` and fits the rest."""
        if self.classes and not self.classes.issubset(classes):
            return False
        if self.id is not None and el.get("id") != self.id:
            return False
        for name, value in self.attrs:
            got = el.get(name)
            if got is None or (value is not None and got != value):
                return False
        return True


@lru_cache(maxsize=512)
def _simple(selector: str) -> _Simple | None:
    m = _SIMPLE.match(selector.strip())
    if not m or not selector.strip():
        return None
    tag, idents, attrs = m.groups()
    classes = frozenset(x[1:] for x in re.findall(r"[.#][\w-]+", idents or "") if x[0] == ".")
    ids = [x[1:] for x in re.findall(r"[.#][\w-]+", idents or "") if x[0] == "#"]
    pairs = tuple(
        (a.group(1), a.group(2) or a.group(3) or a.group(4)) for a in _SIMPLE_ATTR.finditer(attrs or "")
    )
    return _Simple(tag.lower() if tag else None, classes, ids[0] if ids else None, pairs)


# Never content: dropped before any chrome selector is tried.
_NON_CONTENT = frozenset({"script", "style", "noscript", "template", "link", "meta"})


def _walk_chrome(region: HtmlElement, matchers: list[_Simple]) -> tuple[list[HtmlElement], list[HtmlElement]]:
    """One walk under ``region``: the non-content elements, and the elements matching any matcher.

    This loop meets every link and div of the page, so each element is tested only against the
    matchers of its own tag (and tagless ones), its class attribute split once, and skipped at
    once when none of the classes those matchers all require is there.
    """
    by_tag: dict[str | None, list[_Simple]] = {}
    for m in matchers:
        by_tag.setdefault(m.tag, []).append(m)
    everywhere = by_tag.pop(None, [])
    candidates = region.iter() if everywhere else region.iter(*_NON_CONTENT, *by_tag)
    plans: dict[str, _Plan] = {}
    non_content: list[HtmlElement] = []
    found: list[HtmlElement] = []
    for el in candidates:
        tag = el.tag
        if el is region or not isinstance(tag, str):
            continue
        if tag in _NON_CONTENT:
            non_content.append(el)
            continue
        plan = plans.get(tag)
        if plan is None:
            plan = plans[tag] = _Plan.of(by_tag.get(tag, []) + everywhere)
        classes = (el.get("class") or "").split()
        if plan.gate is not None and plan.gate.isdisjoint(classes):
            continue
        for m in plan.tests:
            if m.matches(el, classes):
                found.append(el)
                break
    return non_content, found


@dataclass(frozen=True, slots=True)
class _Plan:
    """The matchers for one tag; ``gate``: classes one of which every match needs (None: no gate)."""

    tests: tuple[_Simple, ...]
    gate: frozenset[str] | None

    @classmethod
    def of(cls, tests: list[_Simple]) -> _Plan:
        if tests and all(m.classes for m in tests):
            return cls(tuple(tests), frozenset().union(*(m.classes for m in tests)))
        return cls(tuple(tests), None)


def clean_region(region: HtmlElement, profile: Profile | None, index: PageIndex) -> None:
    """Remove chrome inside the region: scripts, the profile's excludes, common widgets.

    Non-content elements go first, so that structural selectors (the few that are not a simple
    compound) see the tree without them; simple ones test attributes only, so their matches are
    collected in the same walk.
    """
    simple: list[_Simple] = []
    structural: list[str] = []
    for sel in dict.fromkeys(CHROME + (profile.exclude if profile else ())):
        if not index.may_match(sel):
            continue
        matcher = _simple(sel)
        if matcher is None:
            structural.append(sel)
        else:
            simple.append(matcher)
    non_content, chrome = _walk_chrome(region, simple)
    if region.tag in _NON_CONTENT:
        drop_tree(region)
    for el in non_content:
        drop_tree(el)
    doomed = [el for sel in structural for el in css(sel)(region)]
    doomed.extend(chrome)
    for el in doomed:
        if el is not region:
            drop_tree(el)
