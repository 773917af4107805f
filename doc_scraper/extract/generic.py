"""The content region of a page no framework profile claims: chrome pruning + text-density scoring.

Chosen over readability-lxml and trafilatura by ``benchmarks/eval_generic.py`` (word F1, code
recall and speed on pages of many generators and hand-made layouts; see the README there).

Stages, in one bottom-up pass over the tree plus a few cheap walks:

1. chrome that says what it is goes: scripts, forms and buttons; ``nav``/``aside``/``footer``/
   ``header`` and ARIA navigation roles, and elements whose class or id names navigation
   (``sidebar``, ``breadcrumbs``, ``toc``...), when link-heavy or nearly empty; elements named as
   widgets (``cookie``, ``newsletter``, ``comments``, ``related``, ``share``...) or hidden, and
   short blocks that ask for cookie consent, whatever their text;
2. every block (``p``, ``li``, ``pre``, headings...) is scored from its text: non-link text
   counts for it, link text against it; a link-heavy block or a short fragment (a date, "Reply")
   counts against; headings add a bonus (the page's ``h1`` most); items of a styled teaser list
   (three or more siblings of one tag and class, each a short blurb with a link) count against.
   An element's score is the sum over its subtree, and the highest-scoring element is the
   content root: it takes in content and stops where the chrome around costs more than it brings;
3. inside the root: sections under a widget heading ("12 Comments", "Related articles") are
   dropped, then leading and trailing children with a negative score, and link lists that are an
   in-page table of contents or sit at the root's edges (breadcrumbs, pagers, tag lists).

The root is a node of ``doc`` (no copy), so code blocks, tables and headings reach the cleanup
and converter as they were. The page is mutated (chrome removed): call this after links and
metadata are read, as ``select_region`` does.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import lxml.etree

from doc_scraper.convert.dom import drop_tree

if TYPE_CHECKING:
    from lxml.etree import _Element as HtmlElement

logger = logging.getLogger(__name__)

# Elements whose text is never content.
_NEVER = frozenset(
    (
        "script",
        "style",
        "noscript",
        "template",
        "form",
        "button",
        "select",
        "input",
        "textarea",
        "svg",
        "iframe",
        "object",
        "embed",
        "canvas",
        "dialog",
    )
)
# Chrome by tag or ARIA role: removed when link-heavy or nearly empty (an <aside> may be a note);
# a footer (<footer>, role=contentinfo, class or id "footer") goes whatever its text.
_CHROME_TAGS = frozenset(("nav", "aside", "header", "menu"))
_CHROME_ROLES = frozenset(
    (
        "navigation",
        "banner",
        "complementary",
        "search",
        "menu",
        "menubar",
        "toolbar",
        "dialog",
        "alertdialog",
    )
)
# Class/id words of widgets that are boilerplate whatever their text.
_JUNK_NAME = re.compile(
    r"(?:^|[\s_-])(?:cookies?|consent|gdpr|cc-window|newsletter|subscribe|signup|comments?|"
    r"disqus|discussion|responses|related(?:-posts)?|share|sharing|social|advert(?:isement)?|ads?|"
    r"ad-slot|sponsors?|promo|feedback|helpful|rating|announcement|banner-top|notice-bar|"
    r"skip-link|visually-hidden|sr-only|screen-reader-text|hidden|popup|modal|"
    r"see-also-box|more-reading|edit-link|page-actions|gh-edit|edit-this-page|catlinks|siteSub|"
    r"printfooter|jump-to-nav|mw-jump|footer|site-footer|page-footer)(?:$|[\s_-])",
    re.IGNORECASE,
)
# Class/id words of navigation: removed when link-heavy or nearly empty.
_NAV_NAME = re.compile(
    r"(?:^|[\s_-])(?:nav|navbar|navigation|menu|sidebar|sidenav|side-nav|drawer|toc|"
    r"on-this-page|page-outline|right-rail|breadcrumbs?|crumbs|path-bar|pager|pagination|"
    r"prev-next|page-nav|header|masthead|topbar|toolbar|tags|taglist|widget-area|"
    r"leftnav|left-col|docs-menu|footer-col|bottom|site-header-menu|hdr-links|nav-panel)(?:$|[\s_-])",
    re.IGNORECASE,
)
_WIDGET_HEADING = re.compile(
    r"^(?:(?:\d+|no)\s+(?:comments?|responses?|replies|thoughts)(?: on\b.*)?|comments? \(\d+\)|"
    r"leave a (?:reply|comment)|join the discussion|add a comment|"
    r"related (?:posts|articles|content|reading|stories)|you (?:may|might) also like|more (?:posts|articles)|"
    r"share (?:this|on)\b.*|subscribe\b.*|stay up to date|newsletter|"
    r"was this (?:page|article) helpful\??)\s*:?$",
    re.IGNORECASE,
)
_COOKIE = re.compile(r"cookie", re.IGNORECASE)
_CONSENT = re.compile(
    r"accept|consent|agree|privacy|settings|preferences|einverstanden|datenschutz|akzept|zustimm|"
    r"accepter|consentement|aceptar|privacidad",
    re.IGNORECASE,
)
# Legal small print of a site footer (a short block starting with or holding these is chrome).
_LEGAL = re.compile(
    r"©|&copy;|\(c\) \d{4}|copyright \d{4}|all rights reserved|impressum|imprint\b", re.IGNORECASE
)
_LEGAL_HINTS = ("©", "opyright", "OPYRIGHT", "eserved", "ESERVED", "mpr", "MPR", "(c)", "(C)", "&copy;")
_NON_WORD = re.compile(r"[^\w]+")
_BLOCKS = frozenset(
    (
        "p",
        "div",
        "pre",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "table",
        "thead",
        "tbody",
        "tfoot",
        "tr",
        "td",
        "th",
        "blockquote",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "nav",
        "aside",
        "figure",
        "figcaption",
        "details",
        "summary",
        "body",
        "address",
        "center",
        "caption",
        "fieldset",
        "hr",
        "br",
    )
)
_HEADINGS = frozenset(("h1", "h2", "h3", "h4", "h5", "h6"))
_TEASER_TAGS = frozenset(("li", "div", "article", "section", "a", "span"))  # not API <dl> entries
# Elements that are a part of a text, never the container of one.
_LEAVES = _HEADINGS | frozenset(
    (
        "p",
        "pre",
        "code",
        "table",
        "thead",
        "tbody",
        "tr",
        "ul",
        "ol",
        "dl",
        "li",
        "dt",
        "dd",
        "blockquote",
        "span",
        "a",
        "em",
        "strong",
        "b",
        "i",
        "img",
        "figure",
        "figcaption",
        "summary",
    )
)
_CELLS = frozenset(("td", "th", "li", "dt", "dd", "caption", "figcaption", "summary"))
# Structure flags of a subtree.
_PRE, _TABLE, _HEADING, _H1, _MEDIA = 1, 2, 4, 8, 16
_BLOCKY = _PRE | _TABLE | _HEADING
_FLAG = {"pre": _PRE, "table": _TABLE, "img": _MEDIA, "dl": _MEDIA, "h1": _HEADING | _H1}
_FLAG.update(dict.fromkeys(("h2", "h3", "h4", "h5", "h6"), _HEADING))

SHORT_BLOCK = 25  # non-link characters under which a plain block counts as a fragment
LINK_HEAVY = 0.5  # link text / text above which a block is navigation
NAV_LINK_SHARE = 0.3  # a named nav/aside element goes when its link share is above this
H1_BONUS = 80  # score of a title heading beyond its text: the content holds the page's h1
HEADING_BONUS = 15
TEASER_TEXT = 300  # characters above which a repeated styled item is not a teaser
TEASER_LINK = 4  # a teaser's link is a title (not a "¶" permalink): this many characters at least...
TEASER_LINK_SHARE = 0.05  # ...and this share of its text
COOKIE_TEXT = 800  # a block with less text that talks of cookies and consent is a banner
LEGAL_TEXT = 400  # a block with less text holding a copyright or imprint line is a footer
LIST_LINK_SHARE = 0.6  # inside the root, a link list has more link text than this...
LIST_PLAIN_TEXT = 40  # ...and less plain text than this
EDGE_SHARE = 0.1  # a link list with less of the root's text than this before or after it is at an edge
CODE_ONLY = 0.2  # a root with less prose than this share of its text is a code block's wrapper
LISTING_LINK_SHARE = 0.5  # a root with more link text than this is a listing page: links kept
MIN_ROOT_SHARE = 0.15  # a root scoring under this share of the page's positive score: give up (None)


@dataclass(slots=True)
class _Tree:
    """Per-element facts of one page after stage 1 and 2, by position in document order."""

    nodes: list[HtmlElement]
    index: dict[HtmlElement, int]
    score: list[float]  # subtree score
    text: list[int]  # subtree text characters (whitespace at the ends of strings left out)
    prose: list[int]  # of which outside <pre>
    link_text: list[int]  # of which inside <a href>
    links: list[int]  # number of <a href> in the subtree
    flags: list[int]  # _PRE | _TABLE | ... present in the subtree
    size: list[int]  # elements in the subtree, itself included
    dead: list[bool]  # chrome (stage 1), its subtree left out of the scores
    positive: float  # the sum of the page's positive block scores

    def at(self, el: HtmlElement) -> int:
        return self.index.get(el, -1)


def _names(el: HtmlElement) -> str:
    """Class and id; not the id of a section that starts with a heading (that id is the title's slug)."""
    cls: str | None = el.get("class")
    ident: str | None = el.get("id")
    if ident:
        first = next(iter(el), None)
        if first is not None and first.tag in _HEADINGS and _slug(first) == ident.lower():
            ident = None
    if cls and ident:
        return cls + " " + ident
    return cls or ident or ""


def _slug(el: HtmlElement) -> str:
    text: str = "".join(el.itertext())
    return _NON_WORD.sub("-", text.lower()).strip("-")


def _is_cookie_banner(el: HtmlElement) -> bool:
    parts: list[str] = []
    size = 0
    for t in el.itertext():
        size += len(t)
        if size > COOKIE_TEXT:
            return False
        parts.append(t)
    text = " ".join(parts)
    return _COOKIE.search(text) is not None and _CONSENT.search(text) is not None


def _may_be_legal(text: str) -> bool:
    """Cheap test before the _LEGAL regex (plain substring tests are several times faster)."""
    return any(hint in text for hint in _LEGAL_HINTS)


def _remove_outermost(doomed: list[HtmlElement]) -> int:
    """Remove the listed elements that are not inside another listed one."""
    marked = set(doomed)
    gone = 0
    for el in doomed:
        if any(anc in marked for anc in el.iterancestors()):
            continue
        drop_tree(el)
        gone += 1
    return gone


def _teaser_items(nodes: list[HtmlElement]) -> set[HtmlElement]:
    """Candidate items of a styled teaser list: 3+ siblings sharing tag and class (checked later)."""
    found: set[HtmlElement] = set()
    for el in nodes:
        if len(el) < 3:
            continue
        groups: dict[tuple[str, str], list[HtmlElement]] = {}
        for child in el:
            cls = child.get("class")
            if cls and child.tag in _TEASER_TAGS:
                groups.setdefault((child.tag, cls), []).append(child)
        for items in groups.values():
            if len(items) >= 3:
                found.update(items)
    return found


@lru_cache(maxsize=4096)
def _name_kind(names: str) -> tuple[bool, bool]:
    """(widget, navigation) for a class + id string (pages repeat their class names: cached)."""
    return _JUNK_NAME.search(names) is not None, _NAV_NAME.search(names) is not None


def _chrome_verdict(el: HtmlElement, tag: str, text: int, link_text: int, flags: int, page_text: int) -> bool:
    """Stage 1 for one element whose subtree is known: is it chrome?"""
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return True
    role = (el.get("role") or "").lower()
    names = _names(el)
    junk = tag == "footer" or role == "contentinfo" or (bool(names) and _name_kind(names)[0])
    navish = tag in _CHROME_TAGS or role in _CHROME_ROLES or (bool(names) and _name_kind(names)[1])
    if not junk and not navish:
        named_block = bool(names) and tag in ("div", "section", "aside")
        return named_block and text < COOKIE_TEXT and _is_cookie_banner(el)
    if text > 0.5 * page_text and text > 500:
        return False  # named like chrome but holding most of the page: a wrapper
    if junk:
        return True
    share = link_text / text if text else 0.0
    if tag == "header" and flags & _H1 and share < LINK_HEAVY:
        return False  # an article header with its title
    return share > NAV_LINK_SHARE or text < SHORT_BLOCK


def analyse(body: HtmlElement) -> tuple[_Tree, list[HtmlElement]]:
    """Stages 1 and 2 in one bottom-up pass: subtree facts and scores, and the chrome to remove."""
    # A code block is one unit: its highlighter spans are neither visited nor judged.
    nodes: list[HtmlElement] = body.xpath("descendant-or-self::*[not(ancestor::pre)]")
    index = {el: i for i, el in enumerate(nodes)}
    n = len(nodes)
    in_code: set[HtmlElement] = set()
    for code in body.iter("code"):
        in_code.update(code.iterdescendants())
    parent = [-1] * n
    own = [0] * n  # text directly in the element, its children's tails included
    legal = [False] * n  # the element's own text has a copyright line (folded into its block)
    for i, el in enumerate(nodes):
        if i:
            p = el.getparent()
            parent[i] = index.get(p, -1) if p is not None else -1
        tag = el.tag
        if tag == "pre":
            own[i] = len("".join(el.itertext()).strip())
        else:
            t = el.text
            if t and tag not in _NEVER:
                own[i] += len(t.strip())
                if len(t) < LEGAL_TEXT and _may_be_legal(t) and _LEGAL.search(t):
                    legal[i] = True
        if el.tail and parent[i] >= 0:
            own[parent[i]] += len(el.tail.strip())
    for node in body.iter(lxml.etree.Comment, lxml.etree.ProcessingInstruction):
        if node.tail and node.tail.strip():  # text after a comment belongs to its parent
            j = index.get(node.getparent(), -1)
            if j >= 0:
                own[j] += len(node.tail.strip())
    page = sum(own)  # the page's text
    text = own[:]
    prose = own[:]
    inline_text = own  # a block's text, inline descendants folded in
    inline_links = [0] * n
    link_text = [0] * n
    links = [0] * n
    flags = [0] * n
    score = [0.0] * n
    size = [1] * n
    dead = [False] * n
    teasers = _teaser_items(nodes)
    doomed: list[HtmlElement] = []
    positive = 0.0
    for i in range(n - 1, -1, -1):
        el = nodes[i]
        tag = el.tag
        p = parent[i]
        if tag in _NEVER:
            if p >= 0:
                doomed.append(el)
                dead[i] = True
                size[p] += size[i]
            continue
        flags[i] |= _FLAG.get(tag, 0)
        if tag == "a" and el.get("href") is not None:
            inline_links[i] = inline_text[i]
            link_text[i] = text[i]
            links[i] += 1
        if p >= 0 and el not in in_code and _chrome_verdict(el, tag, text[i], link_text[i], flags[i], page):
            doomed.append(el)
            dead[i] = True
            size[p] += size[i]
            continue
        if tag in _BLOCKS or p < 0:
            block = inline_text[i]
            if block:
                in_links = inline_links[i]
                if tag == "pre":
                    contrib = float(block - 2 * in_links)
                elif tag in _HEADINGS:
                    contrib = float(block - 2 * in_links)
                    if block > in_links:
                        contrib += H1_BONUS if tag == "h1" else HEADING_BONUS
                elif in_links > LINK_HEAVY * block or (legal[i] and block < LEGAL_TEXT):
                    contrib = -float(block)
                elif block - in_links < SHORT_BLOCK and tag not in _CELLS:
                    contrib = -0.5 * block
                else:
                    contrib = float(block - 2 * in_links)
                score[i] += contrib
                if contrib > 0:
                    positive += contrib
        elif p >= 0:
            inline_text[p] += inline_text[i]
            inline_links[p] += inline_links[i]
            legal[p] = legal[p] or legal[i]
        if (
            el in teasers
            and text[i] <= TEASER_TEXT
            and link_text[i] >= max(TEASER_LINK, TEASER_LINK_SHARE * text[i])
            and not flags[i] & _BLOCKY
        ):
            score[i] = -float(text[i])
        if p >= 0:
            score[p] += score[i]
            text[p] += text[i]
            prose[p] += prose[i] if tag != "pre" else 0
            link_text[p] += link_text[i]
            links[p] += links[i]
            flags[p] |= flags[i]
            size[p] += size[i]
    tree = _Tree(nodes, index, score, text, prose, link_text, links, flags, size, dead, positive)
    return tree, doomed


def best_root(tree: _Tree) -> int:
    """Position of the highest subtree score (the innermost one on a tie)."""
    score, dead, size = tree.score, tree.dead, tree.size
    best = 0
    i, n = 0, len(score)
    while i < n:
        if dead[i]:
            i += size[i]  # skip the chrome's whole subtree
            continue
        if score[i] >= score[best]:
            best = i  # on a tie the descendant: its wrapper adds nothing
        i += 1
    return best


def trim_edges(root: HtmlElement, tree: _Tree) -> int:
    """Drop leading and trailing children of the root that cost more than they bring."""
    children = [c for c in root if isinstance(c.tag, str)]
    doomed: list[HtmlElement] = []
    for seq in (children, children[::-1]):
        for child in seq:
            i = tree.at(child)
            if i < 0:
                continue  # removed in stage 1
            value = tree.score[i]
            if child.tag == "p" and tree.link_text[i] == 0 and tree.text[i] > 0:
                break  # a paragraph of plain prose is content however short ("See the FAQ.")
            if value < 0 and not tree.flags[i] & _BLOCKY:
                doomed.append(child)
            elif value != 0 or tree.flags[i]:
                break
    return _remove_outermost(list(dict.fromkeys(doomed)))


def drop_widget_sections(root: HtmlElement) -> int:
    """Sections under a widget heading ("12 Comments", "Related articles", "Leave a reply")."""
    doomed: list[HtmlElement] = []
    for h in root.iter(*_HEADINGS, "p", "strong", "b"):
        label = " ".join("".join(h.itertext()).split())
        if len(label) > 40 or not _WIDGET_HEADING.match(label):
            continue
        parent = h.getparent()
        if parent is None:
            continue
        first = next((c for c in parent if isinstance(c.tag, str)), None)
        if parent is not root and first is h:
            doomed.append(parent)
            continue
        if h.tag not in _HEADINGS:
            continue
        doomed.append(h)
        level = int(h.tag[1])
        for sib in h.itersiblings():
            if isinstance(sib.tag, str) and sib.tag in _HEADINGS and int(sib.tag[1]) <= level:
                break
            doomed.append(sib)
    return _remove_outermost(doomed)


def prune_link_lists(root: HtmlElement, tree: _Tree) -> int:
    """Link lists in the root: an in-page table of contents anywhere, other link lists at its edges."""
    start: dict[HtmlElement, int] = {}
    pos = 0
    for el in root.iter():
        start[el] = pos
        if el.text:
            pos += len(el.text.strip())
        if el.tail and el is not root:
            pos += len(el.tail.strip())
    total_text = pos
    if not total_text:
        return 0
    edge = EDGE_SHARE * total_text
    doomed = []
    for el in root.iter("div", "ul", "ol", "p", "section", "span", "table", "dl"):
        i = tree.at(el)
        if el is root or i < 0 or tree.links[i] < 2 or not tree.text[i]:
            continue
        if tree.flags[i] and el.tag not in ("ul", "ol"):
            continue
        text, in_links = tree.text[i], tree.link_text[i]
        if in_links <= LIST_LINK_SHARE * text or text - in_links >= LIST_PLAIN_TEXT:
            continue
        before = start.get(el, 0)
        after = total_text - before - text
        if (
            before < edge
            or after < edge
            or all((a.get("href") or "").startswith("#") for a in el.iter("a") if a.get("href") is not None)
        ):
            doomed.append(el)
    return _remove_outermost(doomed)


def generic_region(doc: HtmlElement) -> HtmlElement | None:
    """The main-content element of a page of no known framework (a node of ``doc``), or None."""
    body = doc.find("body") if doc.tag != "body" else doc
    if body is None:
        body = doc
    # 1-2. facts and scores of every subtree; chrome that names itself
    tree, chrome = analyse(body)
    best = best_root(tree)
    root, value = tree.nodes[best], tree.score[best]
    _remove_outermost(chrome)
    if value <= 0 or value < MIN_ROOT_SHARE * tree.positive:
        logger.debug("extract.generic_none", extra={"score": value, "positive": tree.positive})
        return None
    # A lone block (one code block, one heading) is never the whole content: take its container,
    # and the container of a code block's wrappers (a text holds prose around its code).
    while root is not body and (
        root.tag in _LEAVES or tree.prose[tree.at(root)] < CODE_ONLY * tree.text[tree.at(root)]
    ):
        parent = root.getparent()
        if parent is None:
            break
        root = parent
    # 3. the root's edges and the widgets and link lists inside it; on a listing page (an index,
    # a link directory) the links are the content and stay
    drop_widget_sections(root)
    i = tree.at(root)
    if tree.link_text[i] <= LISTING_LINK_SHARE * tree.text[i]:
        trim_edges(root, tree)
        prune_link_lists(root, tree)
    return root
