"""DOM preparation before Markdown conversion, done on the lxml tree.

The converter gets a tree with little left to decide:

1. links and images made absolute (same-page ``#x`` kept as is);
2. code blocks (``<pre>``, Pygments tables, Doxygen fragments) replaced by a
   placeholder paragraph; their text and language are kept aside so no
   converter can touch them;
3. admonitions rewritten to ``<blockquote>`` with a bold kind line;
4. API definitions (Sphinx ``dl.py``...) rewritten to a code-span signature
   paragraph and unwrapped descriptions;
5. heading permalinks removed, and a section marker paragraph inserted before
   every heading and every API definition with an id;
6. ``|`` escaped inside tables, block breaks in cells kept as ``<br>``;
7. plain ``<details>`` turned into a bold summary line and its body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from lxml.cssselect import CSSSelector
from lxml.etree import Element, XPath, tostring

from doc_scraper.convert.census import Census
from doc_scraper.models import SECTION_END, SECTION_MARK, SectionMark

if TYPE_CHECKING:
    from collections.abc import Callable

    from lxml.etree import _Element as HtmlElement

CODE_MARK = "\ue002"
CODE_END = "\ue003"
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")

# Admonition containers (kind read from their classes) and their title elements.
ADMONITIONS: tuple[str, ...] = (
    "div.admonition",
    "details.admonition",
    "div.theme-admonition",
    "div.custom-block",
    "aside.starlight-aside",
    "div.markdown-alert",
    "div.admonitionblock",
    "div.callout",
    "div.alert",
    "div.hint",
    "div.warning",
    "div.note",
    "div.notice",
    "div.fern-callout",
    "blockquote.callout",
    "div[data-callout]",
    "div.rm-Callout",
    "div.topic",
)
ADMONITION_TITLES: tuple[str, ...] = (
    "p.admonition-title",
    "p.custom-block-title",
    "p.starlight-aside__title",
    "p.markdown-alert-title",
    "div.title",
    "summary",
    "td.icon",
    "h4.alert-heading",
    "div[class*='admonitionHeading']",
    "p.callout-title",
    "div.callout-title",
    "p.topic-title",
)
ADMONITION_KINDS: tuple[str, ...] = (
    "note",
    "tip",
    "hint",
    "important",
    "warning",
    "caution",
    "danger",
    "error",
    "attention",
    "info",
    "success",
    "seealso",
    "todo",
    "example",
    "abstract",
    "question",
    "failure",
    "bug",
    "secondary",
    "details",
    "topic",
)
_KIND_WORDS = frozenset(ADMONITION_KINDS) - {"details"}
ADMONITION_LABELS: dict[str, str] = {"seealso": "See also", "secondary": "Note", "todo": "Todo"}

# Headings that start an API definition (besides Sphinx dl > dt[id]).
DEFINITION_HEADINGS: tuple[str, ...] = (
    "h3.code-header",
    "h4.code-header",
    "section.detail > h3",
    "section.detail > h4",
    "h3.tsd-anchor-link",
    "h2.memtitle",
)
SPHINX_DOMAINS: frozenset[str] = frozenset(
    {"py", "c", "cpp", "js", "rst", "std", "http", "mat", "rb", "php", "go", "ts"}
)
# Class conventions carrying a code block's language, most specific first.
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight|brush|sourceCode|hljs-lang)[-:]([\w+#.-]+)$")
_LANG_ALIASES: dict[str, str] = {
    "python3": "python",
    "py": "python",
    "py3": "python",
    "default": "python",
    "ipython3": "python",
    "ipython": "python",
    "none": "text",
    "plaintext": "text",
    "plain": "text",
    "txt": "text",
    "nohighlight": "text",
    "shell": "sh",
    "shell-session": "console",
    "sh-session": "console",
    "js": "javascript",
    "ts": "typescript",
    "c++": "cpp",
    "yml": "yaml",
    "rs": "rust",
    "doscon": "doscon",
    "pycon3": "pycon",
    "text-only": "text",
}
# Bare class names that are a language (a set: order does not matter).
_BARE_LANGS = frozenset(
    {
        *("rust", "python", "javascript", "typescript", "bash", "sh", "shell", "json", "yaml", "toml"),
        *("c", "cpp", "java", "go", "ruby", "html", "xml", "css", "sql", "console", "diff", "text", "ini"),
    }
)
# Every tag a preparation step visits (see ``prepare``).
_CENSUS_TAGS = ("a", "img", "pre", "div", "aside", "details", "blockquote", *HEADINGS, "dt", "dl", "table")
_PERMALINK_TEXTS = frozenset({"", "¶", "#", "§", "🔗", "\u200b", "link", "permalink"})
_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


@lru_cache(maxsize=256)
def _css(selector: str) -> Any:
    return CSSSelector(selector, translator="html")


@dataclass(slots=True)
class CodeBlock:
    language: str
    text: str


@dataclass(slots=True)
class Prepared:
    """What preparation set aside: code blocks, section marks, headings, images, first h1."""

    codes: list[CodeBlock] = field(default_factory=list)
    marks: list[SectionMark] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    images: list[str] = field(default_factory=list)
    h1: str = ""


def text_of(el: HtmlElement) -> str:
    """Visible text, whitespace collapsed."""
    return " ".join(raw_text(el).split())


def raw_text(el: HtmlElement) -> str:
    """All text under ``el`` as it is (serialised in C: much faster than itertext)."""
    text: str = tostring(el, method="text", encoding="unicode", with_tail=False)
    return text


def _classes(el: HtmlElement) -> list[str]:
    classes: list[str] = (el.get("class") or "").split()
    return classes


def _replace(old: HtmlElement, new: HtmlElement) -> None:
    """Put ``new`` where ``old`` is, keeping old's tail."""
    new.tail = old.tail
    parent = old.getparent()
    if parent is not None:
        parent.replace(old, new)


def unwrap(el: HtmlElement) -> None:
    """Replace an element by its children and text (lxml.html's drop_tag)."""
    parent = el.getparent()
    if parent is None:
        return
    previous = el.getprevious()
    if el.text:
        if previous is None:
            parent.text = (parent.text or "") + el.text
        else:
            previous.tail = (previous.tail or "") + el.text
    if el.tail:
        if len(el):
            last = el[-1]
            last.tail = (last.tail or "") + el.tail
        elif previous is None:
            parent.text = (parent.text or "") + el.tail
        else:
            previous.tail = (previous.tail or "") + el.tail
    index = parent.index(el)
    parent[index : index + 1] = el[:]


def drop_tree(el: HtmlElement) -> None:
    """Remove an element, keeping its tail text (lxml.html's drop_tree)."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        previous = el.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + el.tail
        else:
            previous.tail = (previous.tail or "") + el.tail
    parent.remove(el)


def _para(text: str) -> HtmlElement:
    p: HtmlElement = Element("p")
    p.text = text
    return p


# 1. links and images ---------------------------------------------------------------------------


_UNSAFE_SCHEMES = ("javascript", "vbscript", "data")


def _unsafe_href(href: str) -> bool:
    """True for script and data URLs (never followed or shown as links).

    Most hrefs are relative (no ``:``) or already absolute http(s): both are answered without
    ``urlsplit``, which cost more than the rest of this step.
    """
    href = href.strip()
    if ":" not in href or href.startswith(("http://", "https://")):
        return False
    try:
        return urlsplit(href).scheme.lower() in _UNSAFE_SCHEMES
    except ValueError:  # e.g. an unbalanced "[" in the host: not a script URL either
        return False


def absolutize(
    region: HtmlElement,
    resolve: Callable[[str], str],
    hrefs_absolute: bool = False,
    elements: list[HtmlElement] | None = None,
) -> list[str]:
    """Make every href/src absolute (``#x`` stays); return the image URLs in order.

    ``elements``: the region's links and images, if the caller has them (see ``convert.census``).
    """
    images: list[str] = []
    for el in list(region.iter("a", "img")) if elements is None else elements:
        if el.tag == "a":
            _absolutize_link(el, resolve, hrefs_absolute)
        else:
            _absolutize_image(el, resolve, images)
    return images


def _absolutize_link(a: HtmlElement, resolve: Callable[[str], str], hrefs_absolute: bool) -> None:
    href = a.get("href")
    if href is None:
        return
    if _unsafe_href(href):
        del a.attrib["href"]  # keep only the text
        return
    if hrefs_absolute:
        return
    href = href.strip()
    if href and not href.startswith("#"):
        a.set("href", resolve(href))


def _absolutize_image(img: HtmlElement, resolve: Callable[[str], str], images: list[str]) -> None:
    src = (img.get("src") or "").strip()
    lazy = (img.get("data-src") or "").strip()
    if (not src or src.startswith("data:")) and lazy and not lazy.startswith("data:"):
        src = lazy
    if not src or src.startswith("data:"):
        alt = img.get("alt")
        if alt:
            _replace(img, _span(alt))
        else:
            drop_tree(img)
        return
    absolute = resolve(src)
    img.set("src", absolute)
    if absolute not in images:
        images.append(absolute)


def _span(text: str) -> HtmlElement:
    s: HtmlElement = Element("span")
    s.text = text
    return s


# 2. code blocks ----------------------------------------------------------------------------------


def _lang_from(el: HtmlElement) -> str | None:
    for attr in ("data-lang", "data-language"):
        value = el.get(attr)
        if value:
            return str(value).strip().lower()
    for cls in _classes(el):
        m = _LANG_CLASS.match(cls)
        if m:
            return m.group(1).lower()
    return None


def code_language(pre: HtmlElement) -> str:
    """The language of a code block from its own, its <code>'s and its ancestors' markup."""
    candidates = [pre]
    code = pre.find("code")
    if code is not None:
        candidates.insert(0, code)
    parent = pre.getparent()
    depth = 0
    while parent is not None and depth < 4:
        candidates.append(parent)
        parent = parent.getparent()
        depth += 1
    lang = None
    for el in candidates:
        lang = _lang_from(el)
        if lang:
            break
    if not lang:
        for el in candidates[:2]:
            for cls in _classes(el):
                if cls.lower() in _BARE_LANGS:
                    lang = cls.lower()
                    break
            if lang:
                break
    if not lang:
        return "text"
    lang = lang.strip("{}").split(",")[0]
    return _LANG_ALIASES.get(lang, lang)


def _code_text(pre: HtmlElement) -> str:
    # One walk for <br> and line <div>s: a code block has hundreds of token spans to pass over.
    for el in list(pre.iter("br", "div")):
        classes = _classes(el) if el.tag == "div" else ()
        if "where" in classes:  # rustdoc: a where clause is a block, on a line of its own
            el.text = "\n" + (el.text or "")
        if "ec-line" in classes and raw_text(el) == "\n":
            for part in el.iter():  # Expressive Code (Starlight): an empty line holds a lone newline
                part.text = None
        if el.tag == "br" or (
            ("line" in classes or "ec-line" in classes) and not (el.tail or "").startswith("\n")
        ):
            el.tail = "\n" + (el.tail or "")
    text = raw_text(pre)
    text = text.replace("\r\n", "\n").replace("\xa0", " ")
    while text.startswith("\n"):
        text = text[1:]
    return text.rstrip("\n").rstrip() if not text.rstrip("\n").endswith(" ") else text.rstrip("\n")


_GUTTER_PRE = frozenset({"src-line-numbers", "line-numbers-rows", "linenos", "lineno", "line-numbers"})
_GUTTER_HINTS = ("span.linenos", "span.lineno", "span.line-number", "div.line-numbers", "td.linenos")
# Line-number gutters inside a code block, found in C rather than by walking every token span.
_GUTTER_XPATH = XPath(
    ".//*[contains(@class,'lineno') or contains(@class,'line-number') or contains(@class,'linenos')]"
)


def extract_code(
    region: HtmlElement,
    prepared: Prepared,
    may_match: Callable[[str], bool] | None = None,
    census: Census | None = None,
) -> None:
    """Replace code blocks with placeholders, keeping text and language aside."""

    def possible(selector: str) -> bool:
        return may_match is None or may_match(selector)

    # Pygments "table" line numbers: keep only the code cell (moves a <pre>: walk afresh below).
    pygments_tables = possible("table.highlighttable")
    for table in list(region.iter("table")) if pygments_tables else ():
        if "highlighttable" in _classes(table):
            code_pre = table.find(".//td[@class='code']//pre")
            if code_pre is None:
                code_pre = table.xpath(".//td[contains(@class,'code')]//pre")
                code_pre = code_pre[0] if code_pre else None
            if code_pre is not None:
                wrapper = table.getparent()
                _replace(table, code_pre)
                del wrapper
    # Doxygen fragments are <div class="fragment"><div class="line">... (new <pre>s: walk afresh).
    fragments = possible("div.fragment")
    for div in list(region.iter("div")) if fragments else ():
        if "fragment" in _classes(div) and div.find("pre") is None:
            div.tag = "pre"
    gutters = any(possible(s) for s in _GUTTER_HINTS)
    if census is None or pygments_tables or fragments:
        pres = list(region.iter("pre"))
    else:  # only links and images changed since the census (void elements: no <pre> inside)
        pres = census.of(("pre",), attached_only=False)
    for pre in pres:
        parent = pre.getparent()
        if parent is None or _inside(pre, "pre"):
            continue
        if _GUTTER_PRE.intersection(_classes(pre)):
            drop_tree(pre)  # rustdoc/Prism line-number column beside the code
            continue
        if gutters:
            for junk in _GUTTER_XPATH(pre):
                drop_tree(junk)
        index = len(prepared.codes)
        prepared.codes.append(CodeBlock(code_language(pre), _code_text(pre)))
        _replace(pre, _para(f"{CODE_MARK}{index}{CODE_END}"))


def _inside(el: HtmlElement, tag: str) -> bool:
    parent = el.getparent()
    while parent is not None:
        if parent.tag == tag:
            return True
        parent = parent.getparent()
    return False


# 3. admonitions ----------------------------------------------------------------------------------


def _admonition_kind(el: HtmlElement) -> str:
    for cls in _classes(el):
        low = cls.lower()
        for kind in ADMONITION_KINDS:
            if low == kind or low.endswith(("-" + kind, "--" + kind, "_" + kind)):
                return kind
    callout = el.get("data-callout")
    return callout.lower() if callout else "note"


def _select(root: HtmlElement, selector: str, may_match: Callable[[str], bool] | None) -> list[HtmlElement]:
    if may_match is not None and not may_match(selector):
        return []
    found: list[HtmlElement] = _css(selector)(root)
    return found


# ADMONITIONS as tag -> classes; each div/aside/details/blockquote is checked against it.


@lru_cache(maxsize=1)
def _admonition_table() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for sel in ADMONITIONS:
        tag, _, cls = sel.partition(".")
        if cls:
            table.setdefault(tag, set()).add(cls)
    return {tag: frozenset(classes) for tag, classes in table.items()}


def _is_admonition(el: HtmlElement) -> bool:
    if el.get("data-callout") is not None:
        return True
    classes = _classes(el)
    if el.tag == "details" and not _KIND_WORDS.isdisjoint(classes):
        return True  # pymdownx.details: <details class="tip"><summary>Title</summary>
    allowed = _admonition_table().get(el.tag)
    return allowed is not None and not allowed.isdisjoint(classes)


def rewrite_admonitions(
    region: HtmlElement, may_match: Callable[[str], bool] | None = None, census: Census | None = None
) -> None:
    """Admonitions become blockquotes opening with a bold kind or title line."""
    tags = ("div", "aside", "details", "blockquote")
    for box in list(region.iter(*tags)) if census is None else census.of(tags):
        if box is region or not _is_admonition(box):
            continue
        kind = _admonition_kind(box)
        layout_table = "admonitionblock" in _classes(box)
        title = ""
        for tsel in ADMONITION_TITLES:
            found = _select(box, tsel, may_match)  # the page index rules out most of them
            if found:
                t = found[0]
                title = text_of(t)
                if not title:
                    icon = t.find(".//*[@title]")
                    title = icon.get("title") if icon is not None else ""
                drop_tree(t)
                break
        if not title:
            title = ADMONITION_LABELS.get(kind, kind.capitalize())
        elif title.islower():
            title = title.capitalize()
        box.tag = "blockquote"
        box.attrib.clear()
        head = Element("p")
        strong = Element("strong")
        strong.text = title
        head.append(strong)
        box.insert(0, head)
        head.tail, box.text = box.text, None
        if layout_table:  # Antora wraps the body in a one-row layout table
            for tag in ("table", "tbody", "tr", "td"):
                for cell in list(box.iter(tag)):
                    if cell.getparent() is not None and cell.get("class") in (None, "content"):
                        unwrap(cell)


# 4-5. definitions, headings and section marks ----------------------------------------------------


def _slug(text: str) -> str:
    slug = _SLUG_DROP.sub("", text.lower()).strip().replace(" ", "-")
    return slug or "section"


def _unique(anchor: str, used: set[str]) -> str:
    if anchor not in used:
        used.add(anchor)
        return anchor
    n = 1
    while f"{anchor}-{n}" in used:
        n += 1
    anchor = f"{anchor}-{n}"
    used.add(anchor)
    return anchor


def _heading_anchor(h: HtmlElement) -> str:
    if h.get("id"):
        return str(h.get("id"))
    parent = h.getparent()
    if parent is not None and parent.get("id") and parent.tag in ("section", "div", "article", "header"):
        prev = h.getprevious()
        while prev is not None and prev.tag not in HEADINGS:
            prev = prev.getprevious()
        if prev is None:
            return str(parent.get("id"))
    for inner in h.iter("a", "span"):
        if inner.get("id"):
            return str(inner.get("id"))
        if inner.tag == "a" and inner.get("name"):
            return str(inner.get("name"))
    prev = h.getprevious()
    if prev is not None and prev.tag in ("a", "span") and prev.get("id") and not text_of(prev):
        return str(prev.get("id"))
    return ""


def strip_permalinks(h: HtmlElement) -> None:
    """Remove permalink anchors in a heading; unwrap self-links that wrap its text."""
    for a in list(h.iter("a")):
        href = (a.get("href") or "").strip()
        text = text_of(a)
        if href.startswith("#") or not href:
            if text.lower() in _PERMALINK_TEXTS or a.get("aria-hidden") == "true":
                drop_tree(a)
            else:
                unwrap(a)


def _is_api_dl(dl: HtmlElement) -> bool:
    return any(c in SPHINX_DOMAINS for c in _classes(dl))


def _definition_title(dt: HtmlElement, dl: HtmlElement, dt_text: str) -> str:
    """The name an API term is known by (``dt_text``: the term's whole text, the fallback)."""
    prename = name = ""
    for el in dt.iter("span", "code", "strong", "b"):
        cls = el.get("class")
        if not cls:
            continue
        if not prename and ("sig-prename" in cls or "descclassname" in cls):
            prename = text_of(el)
        elif not name and ("sig-name" in cls or "descname" in cls):
            name = text_of(el)
            break
    title = prename + name
    anchor = dt.get("id") or ""
    if "py" in _classes(dl) and anchor and title and anchor.endswith(title.split(".")[-1]):
        return anchor
    return title or dt_text


def _is_plain_block_context(el: HtmlElement, region: HtmlElement) -> bool:
    """True when no list, table or quote sits between ``el`` and the region (markers stay unindented)."""
    parent = el.getparent()
    while parent is not None and parent is not region:
        if parent.tag in ("li", "td", "th", "blockquote", "table", "details", "summary", "p"):
            return False
        parent = parent.getparent()
    return True


@dataclass(slots=True)
class _ApiList:
    """Facts about one API description list, shared by all its terms (dl has about twenty)."""

    nesting: int  # API lists among the dl and its ancestors
    plain: bool  # no list, table or quote between the dl and the region


def mark_sections(
    region: HtmlElement,
    prepared: Prepared,
    may_match: Callable[[str], bool] | None = None,
    census: Census | None = None,
) -> None:
    """Insert section markers before headings and API definitions; rewrite definition lists."""
    used: set[str] = set()
    heading_level = 0
    definition_heads = set()
    for sel in DEFINITION_HEADINGS:
        definition_heads.update(_select(region, sel, may_match))
    api_lists: dict[HtmlElement, _ApiList | None] = {}  # every dl met, in document order
    tags = (*HEADINGS, "dt", "dl")
    for el in list(region.iter(*tags)) if census is None else census.of(tags):
        if el.tag == "dl":
            api_lists[el] = _api_list(el, region, api_lists) if _is_api_dl(el) else None
            continue
        if el.tag == "dt":
            dl = el.getparent()
            facts = api_lists.get(dl) if dl is not None else None
            if facts is None or dl is None:
                continue
            _mark_definition(el, dl, facts, heading_level, prepared, used)
            continue
        own_anchor = _heading_anchor(el)  # before permalinks go: an <a id> inside may be the anchor
        strip_permalinks(el)
        text = text_of(el)
        if not text:
            continue
        level = int(el.tag[1])
        is_def = el in definition_heads
        if not is_def:
            heading_level = level
        prepared.headings.append(text)
        if level == 1 and not prepared.h1:
            prepared.h1 = text
        if not _is_plain_block_context(el, region):
            continue
        anchor = own_anchor or _slug(text)
        if is_def:
            mark = SectionMark(_unique(anchor, used), "definition", min(6, heading_level + 1), text)
        else:
            mark = SectionMark(_unique(anchor, used), "heading", level, text)
        _insert_mark(el, prepared, mark)
    # API description lists: the dd content flows as ordinary blocks (after the walk: the terms
    # above needed their dl's classes).
    for dl, facts in api_lists.items():
        if facts is not None:
            for dd in dl:
                if dd.tag == "dd":
                    dd.tag = "div"
                    dd.attrib.clear()
            dl.tag = "div"
            dl.attrib.clear()


def _api_list(dl: HtmlElement, region: HtmlElement, known: dict[HtmlElement, _ApiList | None]) -> _ApiList:
    """Nesting and context of an API dl; its ancestors come first in the walk, so they are known."""
    nesting = 1
    for anc in dl.iterancestors("dl"):
        outer = known[anc] if anc in known else (_api_list(anc, region, known) if _is_api_dl(anc) else None)
        if outer is not None:
            nesting += outer.nesting
            break
    return _ApiList(nesting, _is_plain_block_context(dl, region))


def _mark_definition(
    dt: HtmlElement, dl: HtmlElement, facts: _ApiList, heading_level: int, prepared: Prepared, used: set[str]
) -> None:
    """An API term becomes a code-span signature paragraph with a section marker before it."""
    for link in list(dt.iter("a")):
        if (link.get("href") or "").startswith("#") and text_of(link).lower() in _PERMALINK_TEXTS:
            drop_tree(link)
    text = text_of(dt)
    title = _definition_title(dt, dl, text)
    signature = text.replace("¶", "").strip()
    anchor = dt.get("id") or ""
    p = Element("p")
    code = Element("code")
    code.text = signature
    p.append(code)
    _replace(dt, p)
    if anchor and facts.plain:
        level = min(6, max(heading_level, 0) + facts.nesting)
        _insert_mark(p, prepared, SectionMark(_unique(anchor, used), "definition", max(level, 1), title))


def _insert_mark(el: HtmlElement, prepared: Prepared, mark: SectionMark) -> None:
    index = len(prepared.marks)
    prepared.marks.append(mark)
    marker = _para(f"{SECTION_MARK}{index}{SECTION_END}")
    el.addprevious(marker)


# 6. tables ---------------------------------------------------------------------------------------


_CELL_BLOCKS = ("p", "li", "div", "dt", "dd", "blockquote")


def _is_leaf_block(el: HtmlElement) -> bool:
    """No block element inside (iter() yields the element itself first)."""
    return next(islice(el.iter(*_CELL_BLOCKS), 1, 2), None) is None


def prepare_tables(region: HtmlElement, census: Census | None = None) -> None:
    """Escape ``|`` in table text; keep block breaks inside cells as ``<br>`` (GFM rows are one line)."""
    for table in region.iter("table") if census is None else census.of(("table",)):
        # Most tables hold no "|": one C-level text dump says so without visiting every node.
        for node in table.iter() if "|" in raw_text(table) else ():
            if node.text and "|" in node.text:
                node.text = node.text.replace("|", "\\|")
            if node is not table and node.tail and "|" in node.tail:
                node.tail = node.tail.replace("|", "\\|")
        for cell in table.iter("td", "th"):
            # innermost blocks only: <li><p>x</p></li> is one line, not two
            blocks = [
                b
                for b in cell.iter(*_CELL_BLOCKS)
                if b is not cell
                and _is_leaf_block(b)
                and (raw_text(b).strip() or b.find(".//img") is not None)
            ]
            for block in blocks[1:]:
                marker = "<br>"
                previous = block.getprevious()
                if previous is not None:
                    previous.tail = (previous.tail or "") + marker
                else:
                    parent = block.getparent()
                    parent.text = (parent.text or "") + marker


def separate_where_clauses(region: HtmlElement, census: Census | None = None) -> None:
    """rustdoc: a ``div.where`` outside code is a block in the browser; keep a space before it.

    Without it a heading or summary reads "impl<T> Any for Twhere T: ...". Inside <pre> the
    code walk puts the clause on its own line instead.
    """
    for div in list(region.iter("div")) if census is None else census.of(("div",)):
        if "where" in _classes(div) and not _inside(div, "pre"):
            div.text = " " + (div.text or "")


def rewrite_details(region: HtmlElement, census: Census | None = None) -> None:
    """A plain <details>: its summary becomes a bold line (kept as is if it holds a heading)."""
    for details in list(region.iter("details")) if census is None else census.of(("details",)):
        summary = details.find("summary")
        if summary is not None and next(summary.iter(*HEADINGS), None) is not None:
            unwrap(summary)  # rustdoc impl blocks: <summary><section><h3 class=code-header>
        elif summary is not None:
            strong = Element("strong")
            strong.text = text_of(summary)
            p = Element("p")
            p.append(strong)
            _replace(summary, p)
        details.tag = "div"


def prepare(
    region: HtmlElement,
    resolve: Callable[[str], str],
    may_match: Callable[[str], bool] | None = None,
    hrefs_absolute: bool = False,
) -> Prepared:
    """Run every preparation step on ``region`` (mutated) and return what was set aside.

    ``hrefs_absolute``: the caller already made every a[href] absolute (only images are left).
    """
    prepared = Prepared()
    census = Census(region, _CENSUS_TAGS)  # one walk for all the steps below
    links_and_images = census.of(("a", "img"), attached_only=False)  # nothing has changed yet
    prepared.images = absolutize(region, resolve, hrefs_absolute, links_and_images)
    extract_code(region, prepared, may_match, census)
    rewrite_admonitions(region, may_match, census)
    separate_where_clauses(region, census)
    rewrite_details(region, census)
    mark_sections(region, prepared, may_match, census)
    prepare_tables(region, census)
    return prepared
