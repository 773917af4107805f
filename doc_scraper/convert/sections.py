"""Split converted Markdown into searchable sections.

Two entry points:

- ``split_sections`` takes the converter's Markdown, in which a marker line
  (``SECTION_MARK + index + SECTION_END``) stands before every heading and API
  definition, plus the ``SectionMark`` list those indexes refer to. It returns
  the Markdown with the markers removed and the sections.
- ``split_markdown`` does the same for plain Markdown without marks: it finds
  ATX headings (ignoring ``#`` inside code fences) and derives GitHub-style
  anchors.

Both are total: any input yields a result, nothing raises. Sizes are bounded:
a heading-only section under ``TINY_SECTION_CHARS`` that introduces a deeper
section is folded into it, and a section over ``MAX_SECTION_CHARS`` is split
at paragraph boundaries outside code fences (the parts share anchor and
heading path).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from doc_scraper.models import SECTION_END, SECTION_MARK, Section, SectionMark

if TYPE_CHECKING:
    from collections.abc import Sequence

TINY_SECTION_CHARS = 200
MAX_SECTION_CHARS = 6000

_MARKER_RE = re.compile(re.escape(SECTION_MARK) + r"(\d{1,9})" + re.escape(SECTION_END))
_STRAY_RE = re.compile("[" + re.escape(SECTION_MARK + SECTION_END) + "]")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_ATX_ONLY_HASHES = re.compile(r"^#+$")
_MD_LINK_RE = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MD_HEADING_LINE = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


@dataclass(slots=True)
class _Raw:
    """A section while it is being built."""

    anchor: str
    heading_path: tuple[str, ...]
    level: int
    lines: list[str]


# -------------------------------------------------------------- public API


def split_sections(
    marked_markdown: str, marks: Sequence[SectionMark], page_title: str
) -> tuple[str, tuple[Section, ...]]:
    """Remove marker lines from ``marked_markdown`` and cut it into sections.

    ``marks[i]`` describes the section whose marker carries index ``i``; a
    marker with an unknown index is removed and starts no section.
    """
    try:
        return _split_marked(marked_markdown, list(marks), page_title)
    except Exception:  # never raise: a page without sections beats a failed page
        clean = _STRAY_RE.sub("", _MARKER_RE.sub("", marked_markdown or ""))
        text = clean.strip("\n")
        top = (Section(anchor="", heading_path=_top_path(page_title), level=0, text=text),) if text else ()
        return clean, top


def split_markdown(markdown: str, page_title: str) -> tuple[Section, ...]:
    """Cut plain Markdown at its ATX headings; anchors are de-duplicated GitHub slugs."""
    try:
        lines = (markdown or "").split("\n")
        marks: list[SectionMark] = []
        seen: dict[str, int] = {}
        out: list[str] = []
        fence: tuple[str, int] | None = None
        for line in lines:
            fence, in_code = _fence_step(fence, line)
            if not in_code:
                heading = _atx_heading(line)
                if heading is not None:
                    level, title = heading
                    anchor = _dedup(github_slug(title) or "section", seen)
                    out.append(SECTION_MARK + str(len(marks)) + SECTION_END)
                    marks.append(SectionMark(anchor=anchor, kind="heading", level=level, title=title))
            out.append(line)
        _, sections = _split_marked("\n".join(out), marks, page_title)
        return sections
    except Exception:
        text = (markdown or "").strip("\n")
        return (Section(anchor="", heading_path=_top_path(page_title), level=0, text=text),) if text else ()


def github_slug(text: str) -> str:
    """GitHub's heading anchor: lower-case, keep letters, digits, ``_`` and ``-``, spaces to ``-``."""
    text = _inline_text(text or "").strip().lower()
    out: list[str] = []
    for ch in text:
        if ch == " ":
            out.append("-")
        elif ch in "-_" or ch.isalnum() or unicodedata.category(ch).startswith("M"):
            out.append(ch)  # combining marks (category M) stay with their letter
    return "".join(out)


# -------------------------------------------------------------- splitting


def _split_marked(marked: str, marks: list[SectionMark], page_title: str) -> tuple[str, tuple[Section, ...]]:
    # 1. Walk the lines: drop markers, open a section at each valid one. Only the few lines holding
    # a marker character need a look; the runs of lines between them are copied in one go.
    lines = (marked or "").split("\n")
    has_h1 = any(m.level <= 1 for m in marks)
    root = () if has_h1 or not page_title.strip() else (page_title.strip(),)
    walk = _MarkerWalk(marks, root, _Raw("", _top_path(page_title), 0, []))
    start = 0
    for index in _marker_lines(marked or ""):
        walk.plain(lines[start:index])
        walk.marked(lines[index])
        start = index + 1
    walk.plain(lines[start:])
    clean, raws = walk.clean, walk.raws

    # 2. Fold heading-only stubs into the deeper section that follows them.
    folded = _fold_tiny(raws)

    # 3. Bound sizes and number them.
    sections: list[Section] = []
    for raw in folded:
        text = "\n".join(raw.lines).strip("\n")
        if not text.strip():
            continue
        for part in _split_large(text):
            sections.append(
                Section(
                    anchor=raw.anchor,
                    heading_path=raw.heading_path,
                    level=raw.level,
                    text=part,
                    seq=len(sections),
                )
            )
    return "\n".join(clean), tuple(sections)


def _marker_lines(text: str) -> list[int]:
    """Indexes of the lines that hold a marker character, ascending, each once (str.find: fast)."""
    positions: list[int] = []
    for char in (SECTION_MARK, SECTION_END):
        pos = text.find(char)
        while pos >= 0:
            positions.append(pos)
            pos = text.find(char, pos + 1)
    positions.sort()
    found: list[int] = []
    line = 0
    last = 0
    for pos in positions:
        line += text.count("\n", last, pos)
        last = pos
        if not found or found[-1] != line:
            found.append(line)
    return found


class _MarkerWalk:
    """State of the line walk in ``_split_marked``: the clean lines and the sections so far."""

    __slots__ = ("clean", "drop_next_blank", "marks", "raws", "root", "stack")

    def __init__(self, marks: list[SectionMark], root: tuple[str, ...], top: _Raw) -> None:
        self.marks = marks
        self.root = root
        self.clean: list[str] = []
        self.raws: list[_Raw] = [top]
        self.stack: list[tuple[int, str]] = []
        self.drop_next_blank = False

    def plain(self, lines: list[str]) -> None:
        """Lines without marker characters: kept as they are."""
        if not lines:
            return
        if self.drop_next_blank:
            self.drop_next_blank = False
            if not lines[0].strip():
                lines = lines[1:]
        self.clean.extend(lines)
        self.raws[-1].lines.extend(lines)

    def marked(self, line: str) -> None:
        """A line with a marker (or a stray marker character): may open a section."""
        self.drop_next_blank = False  # the line after a marker line is this one, and it is not blank
        found = _MARKER_RE.findall(line)
        rest = _STRAY_RE.sub("", _MARKER_RE.sub("", line))
        for idx_text in found[:1]:
            idx = int(idx_text)
            if 0 <= idx < len(self.marks):
                self._open(self.marks[idx])
        if found and not rest.strip():
            # A marker on its own line: remove it without leaving a double blank line.
            if not self.clean or not self.clean[-1].strip():
                self.drop_next_blank = True
            return
        self.clean.append(rest)
        self.raws[-1].lines.append(rest)

    def _open(self, mark: SectionMark) -> None:
        level = max(1, min(int(mark.level), 9))
        stack = self.stack
        while stack and stack[-1][0] >= level:
            stack.pop()
        title = " ".join(_STRAY_RE.sub("", mark.title or "").split())
        parents = (*self.root, *(t for _, t in stack))
        path = (*parents, title) if title else parents
        stack.append((level, title))
        self.raws.append(_Raw(_STRAY_RE.sub("", mark.anchor or ""), path, level, []))


def _fold_tiny(raws: list[_Raw]) -> list[_Raw]:
    out: list[_Raw] = []
    carry: list[str] = []
    for i, raw in enumerate(raws):
        lines = carry + raw.lines if carry else raw.lines
        carry = []
        nxt = raws[i + 1] if i + 1 < len(raws) else None
        text = "\n".join(lines).strip()
        if (
            (raw.anchor or raw.level > 0)
            and nxt is not None
            and nxt.level > raw.level
            and len(text) < TINY_SECTION_CHARS
            and not _has_body(lines)
        ):
            carry = lines
            continue
        out.append(_Raw(raw.anchor, raw.heading_path, raw.level, lines))
    return out


def _has_body(lines: list[str]) -> bool:
    """True when the section holds more than its heading line."""
    content = [ln for ln in lines if ln.strip()]
    if not content:
        return False
    if _MD_HEADING_LINE.match(content[0]):
        return len(content) > 1
    return len(content) > 1 or len(content[0].strip()) > TINY_SECTION_CHARS // 2


def _split_large(text: str) -> list[str]:
    if len(text) <= MAX_SECTION_CHARS:
        return [text]
    blocks = _blocks(text)
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for block in blocks:
        if current and size + len(block) + 2 > MAX_SECTION_CHARS:
            parts.append("\n\n".join(current))
            current, size = [], 0
        current.append(block)
        size += len(block) + 2
    if current:
        parts.append("\n\n".join(current))
    return [p for p in parts if p.strip()] or [text]


def _blocks(text: str) -> list[str]:
    """Paragraphs separated by blank lines; a code fence is one unbreakable block.

    A paragraph (not a fence) longer than ``MAX_SECTION_CHARS`` is cut at lines.
    """
    blocks: list[list[str]] = [[]]
    fence: tuple[str, int] | None = None
    for line in text.split("\n"):
        fence, in_code = _fence_step(fence, line)
        if not in_code and fence is None and not line.strip():
            if blocks[-1]:
                blocks.append([])
            continue
        blocks[-1].append(line)
    out: list[str] = []
    for block in blocks:
        if not block:
            continue
        joined = "\n".join(block)
        if len(joined) > MAX_SECTION_CHARS and not _FENCE_RE.match(block[0]):
            out.extend(_cut_lines(block))
        else:
            out.append(joined)
    return out


def _cut_lines(block: list[str]) -> list[str]:
    out: list[str] = []
    current: list[str] = []
    size = 0
    for line in block:
        if current and size + len(line) + 1 > MAX_SECTION_CHARS:
            out.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        out.append("\n".join(current))
    return out


# -------------------------------------------------------------- Markdown bits


def _fence_step(fence: tuple[str, int] | None, line: str) -> tuple[tuple[str, int] | None, bool]:
    """Track code fences: returns the new fence state and whether ``line`` is code (fence lines too)."""
    match = _FENCE_RE.match(line)
    if fence is None:
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            return (match.group(1)[0], len(match.group(1))), True
        return None, False
    if (
        match
        and match.group(1)[0] == fence[0]
        and len(match.group(1)) >= fence[1]
        and not match.group(2).strip()
    ):
        return None, True
    return fence, True


def _atx_heading(line: str) -> tuple[int, str] | None:
    match = _ATX_RE.match(line)
    if not match:
        return None
    title = (match.group(2) or "").strip()
    if _ATX_ONLY_HASHES.match(title):
        title = ""
    return len(match.group(1)), _inline_text(title)


def _inline_text(text: str) -> str:
    """Heading Markdown to plain text: links to their text, code ticks and emphasis marks dropped."""
    text = _MD_LINK_RE.sub(r"\1", text)
    pieces = re.split(r"(`+[^`]*`+)", text)
    out: list[str] = []
    for i, piece in enumerate(pieces):
        if i % 2:  # a code span: keep its text verbatim
            out.append(piece.strip("`"))
            continue
        piece = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", piece)
        piece = re.sub(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", r"\1", piece)
        out.append(piece.replace("`", ""))
    return " ".join("".join(out).split())


def _dedup(slug: str, seen: dict[str, int]) -> str:
    if slug not in seen:
        seen[slug] = 0
        return slug
    while True:
        seen[slug] += 1
        candidate = f"{slug}-{seen[slug]}"
        if candidate not in seen:
            seen[candidate] = 0
            return candidate


def _top_path(page_title: str) -> tuple[str, ...]:
    title = " ".join((page_title or "").split())
    return (title,) if title else ()
