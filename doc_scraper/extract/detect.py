"""Which docs framework built a page: generator meta, DOM signatures and asset paths.

Every profile of ``profiles.PROFILES`` is scored on the page (never cached per
host, so a landing page and a docs page of one site may differ):

* an asset veto present -> 0;
* a specific generator token +4, a generic one (hugo, astro...) +1;
* any DOM selector matching +2; any asset substring +1.

A profile needs 2 points; the best score wins, list order breaks ties.
Client-rendered shells (``profiles.SHELLS``) are checked first.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from lxml.cssselect import CSSSelector

from doc_scraper.extract.profiles import PROFILES, SHELLS, SPA_MOUNTS, Profile
from doc_scraper.models import Detection

if TYPE_CHECKING:
    from lxml.etree import _Element as HtmlElement

_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)
SHELL_TEXT_THRESHOLD = 200
SHELL_SCRIPT_TEXT = 40  # body text under which a scripted page without mount point is a shell

# Page index: every word of every start tag, lower-cased. A selector can only match when all the
# class names, ids, tag and attribute names it requires are among them, which rules out most of the
# hundreds of signature and chrome selectors without touching the tree.
_START_TAG = re.compile(rb"<[a-zA-Z][^>]*")
_TOKEN_SPLIT = bytes.maketrans(b"\"'<>=/\n\t\r\f", b" " * 10)
_ASSET = re.compile(rb"""<(?:script|link)\b[^>]*?\s(?:src|href)\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)
_SEL_ATTR = re.compile(r"""\[\s*([\w-]+)\s*(?:([~|^$*]?=)\s*(?:"([^"]*)"|'([^']*)'|([^\]\s]+)))?\s*\]""")
_SEL_IDENT = re.compile(r"[.#]([\w-]+)")
_SEL_TAG = re.compile(r"(?:^|[\s>+~])([a-zA-Z][\w-]*)")


@lru_cache(maxsize=512)
def css(selector: str) -> Any:
    """A compiled CSS selector (HTML rules), cached per process."""
    return CSSSelector(selector, translator="html")


@lru_cache(maxsize=1024)
def requirements(selector: str) -> tuple[frozenset[bytes], ...] | None:
    """Per comma alternative, the start-tag words it needs; None if unknown (always evaluate)."""
    alternatives: list[frozenset[bytes]] = []
    for alt in selector.split(","):
        alt = alt.strip()
        if not alt or ":" in _SEL_ATTR.sub("", alt):
            return None  # pseudo-classes: no cheap test
        words: set[bytes] = set()
        for name, op, v1, v2, v3 in _SEL_ATTR.findall(alt):
            words.add(name.lower().encode())
            value = v1 or v2 or v3
            if op in ("=", "~=") and value:
                words.update(value.lower().encode().translate(_TOKEN_SPLIT).split())
        rest = _SEL_ATTR.sub(" ", alt)
        words.update(m.lower().encode() for m in _SEL_IDENT.findall(rest))
        words.update(m.lower().encode() for m in _SEL_TAG.findall(_SEL_IDENT.sub(" ", rest)))
        words.discard(b"*")
        alternatives.append(frozenset(words))
    return tuple(alternatives)


# "div.body": the commonest signature and content selectors. Walking the tag's elements in Python
# is cheaper than cssselect's XPath over every node of the page, with the same result.
# (A class starting with a digit or "--" is no CSS identifier: left to cssselect, which refuses it.)
_TAG_CLASSES = re.compile(r"([a-zA-Z][\w-]*)((?:\.-?[^\W\d][\w-]*)+)")
_XML_SPACE = str.maketrans("\t\n\r", "   ")  # what XPath's normalize-space() splits on, besides " "


@lru_cache(maxsize=1024)
def _tag_and_classes(selector: str) -> tuple[str, frozenset[str]] | None:
    """("div", {"body"}) for "div.body"; None for any other shape of selector."""
    m = _TAG_CLASSES.fullmatch(selector.strip())
    if m is None:
        return None
    return m.group(1).lower(), frozenset(m.group(2)[1:].split("."))


def _select_by_class(root: HtmlElement, tag: str, classes: frozenset[str]) -> list[HtmlElement]:
    """What ``css("tag.a.b")(root)`` returns: ``root`` and its descendants, document order."""
    return [
        el
        for el in root.iter(tag)
        if classes.issubset((el.get("class") or "").translate(_XML_SPACE).split(" "))
    ]


class PageIndex:
    """Cheap facts about the raw page: start-tag words and asset URLs."""

    __slots__ = ("_memo", "asset_blob", "assets", "raw", "words")

    def __init__(self, raw: bytes) -> None:
        self.raw = raw
        self._memo: dict[tuple[int, str], list[HtmlElement]] = {}
        # Few distinct start tags: dedupe before splitting. Joined by ">" (a separator for the
        # words), they also hold every <script src>/<link href>, with no match running from one
        # tag into the next: a third of the page for the asset search. Sorted: a stable order.
        joined = b">".join(set(_START_TAG.findall(raw)))
        self.words = frozenset(joined.lower().translate(_TOKEN_SPLIT).split())
        self.assets = sorted({m.decode("latin-1") for m in _ASSET.findall(joined)})
        self.asset_blob = "\n".join(self.assets)

    def may_match(self, selector: str) -> bool:
        """False only when ``selector`` certainly matches nothing on this page."""
        reqs = requirements(selector)
        if reqs is None:
            return True
        return any(req <= self.words for req in reqs)

    def select(self, root: HtmlElement, selector: str) -> list[HtmlElement]:
        """Elements under ``root`` matching ``selector`` (the index is consulted first)."""
        if not self.may_match(selector):
            return []
        key = (id(root), selector)
        found = self._memo.get(key)
        if found is None:
            simple = _tag_and_classes(selector)
            found = css(selector)(root) if simple is None else _select_by_class(root, *simple)
            if root.getparent() is None:  # the document: same answer until the region is cleaned
                self._memo[key] = found
        return found

    def matches(self, root: HtmlElement, selector: str) -> bool:
        return bool(self.select(root, selector))


def visible_text_length(el: HtmlElement, stop: int | None = None) -> int:
    """Characters of visible text under ``el`` (script/style ignored, whitespace collapsed)."""
    total = 0
    for node in el.iter():
        tag = node.tag
        if not isinstance(tag, str) or tag in ("script", "style", "noscript", "template"):
            pass
        elif node.text:
            total += len("".join(node.text.translate(_ZERO_WIDTH).split()))
        if node is not el and node.tail:
            total += len("".join(node.tail.translate(_ZERO_WIDTH).split()))
        if stop is not None and total >= stop:
            return total
    return total


def generators(doc: HtmlElement) -> list[str]:
    """Lower-cased <meta name=generator> values."""
    head = doc.find("head")
    return [
        (meta.get("content") or "").lower()
        for meta in (head if head is not None else doc).iter("meta")
        if (meta.get("name") or "").lower() == "generator"
    ]


def _has_asset(index: PageIndex, subs: tuple[str, ...]) -> bool:
    blob = index.asset_blob
    return any(s in blob for s in subs)


@lru_cache(maxsize=128)
def _selector_requirements(
    selectors: tuple[str, ...],
) -> tuple[tuple[str, tuple[frozenset[bytes], ...] | None], ...]:
    return tuple((sel, requirements(sel)) for sel in selectors)


def _dom_requirements(profile: Profile) -> tuple[tuple[str, tuple[frozenset[bytes], ...] | None], ...]:
    # Keyed by the selector tuple, not the profile: hashing a whole Profile on every page cost more.
    return _selector_requirements(profile.dom)


def _score(profile: Profile, doc: HtmlElement, index: PageIndex, gens: list[str]) -> tuple[int, str]:
    """Points for one profile, and the strongest signal that gave them."""
    if profile.veto and _has_asset(index, profile.veto):
        return 0, "none"
    score = 0
    source = "none"
    if gens and any(tok in g for tok in profile.generator for g in gens):
        score += 4
        source = "generator"
    if gens and any(tok in g for tok in profile.generic for g in gens):
        score += 1
        source = "generator" if source == "none" else source
    words = index.words
    if any(
        (reqs is None or any(req <= words for req in reqs)) and index.matches(doc, sel)
        for sel, reqs in _dom_requirements(profile)
    ):
        score += 2
        source = "dom" if source == "none" else source
    if profile.assets and _has_asset(index, profile.assets):
        score += 1
        source = "asset" if source == "none" else source
    return score, source


def detect_shell(doc: HtmlElement, index: PageIndex) -> str | None:
    """The id of a known client-rendered shell, or None."""
    for shell in SHELLS:
        dom_hit = any(index.matches(doc, sel) for sel in shell.dom)
        asset_hit = _has_asset(index, shell.assets) or any(s.encode() in index.raw for s in shell.inline)
        if shell.needs_both:
            if dom_hit and asset_hit:
                return shell.id
            continue
        if dom_hit or asset_hit:
            return shell.id
        for sel in shell.empty:
            found = index.select(doc, sel)
            if found and all(visible_text_length(el, 1) == 0 for el in found):
                return shell.id
    return None


def is_empty_spa(doc: HtmlElement, index: PageIndex) -> bool:
    """A near-empty body driven by scripts (or a known mount point): needs JavaScript."""
    body = doc.find("body")
    if body is None:
        return False
    if visible_text_length(body, SHELL_TEXT_THRESHOLD) >= SHELL_TEXT_THRESHOLD:
        return False
    if any(index.matches(doc, sel) for sel in SPA_MOUNTS):
        return True
    noscript = " ".join(" ".join(n.itertext()) for n in body.iter("noscript")).lower()
    if "javascript" in noscript:
        return True
    # Scripts and (nearly) nothing else: a short static page with an analytics tag is not a shell.
    return visible_text_length(body, SHELL_SCRIPT_TEXT) < SHELL_SCRIPT_TEXT and bool(
        doc.xpath("//script[@src] | //body//script")
    )


def detect(doc: HtmlElement, index: PageIndex) -> tuple[Detection, Profile | None]:
    """Score every profile; return the detection and the winning profile (None if none)."""
    gens = generators(doc)
    generator = gens[0] if gens else ""
    shell = detect_shell(doc, index)
    if shell:
        return Detection(framework=shell, confidence="js-rendered", source="shell", generator=generator), None
    best: Profile | None = None
    best_score = 0
    best_source = "none"
    for profile in PROFILES:
        score, source = _score(profile, doc, index, gens)
        if score > best_score:
            best, best_score, best_source = profile, score, source
    if best is None or best_score < 2:
        if is_empty_spa(doc, index):
            return Detection(
                framework="js-shell", confidence="js-rendered", source="shell", generator=generator
            ), None
        return Detection(generator=generator), None
    specific = (
        best_score >= 4
        and best_source == "generator"
        and any(tok in g for tok in best.generator for g in gens)
    )
    confidence = "high" if specific or best_score >= 6 else "medium"
    return Detection(framework=best.id, confidence=confidence, source=best_source, generator=generator), best
