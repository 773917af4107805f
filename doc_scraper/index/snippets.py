"""Snippets: the best short window of a section, matches marked ``[like this]``.

Built in Python rather than with FTS5's ``snippet()``: the index holds the
Markdown (link targets are useful evidence for ranking), while a snippet
should read as text. The window is chosen on the plain text with the same
tokenizer as the index, so stemmed matches (``running`` for ``run``) count.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, cast

import apsw

from doc_scraper.index.db import FTS_TOKENIZE

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

WINDOW_TOKENS = 24
MAX_SNIPPET_CHARS = 320

_IMAGE_RE = re.compile(r"!\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_LINK_RE = re.compile(r"\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_REF_DEF_RE = re.compile(r"^ {0,3}\[[^\]]+\]:\s+\S+.*$", re.M)
_TAG_RE = re.compile(r"</?[A-Za-z][^>\n]*>")
_STRONG_RE = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
# The star first, then a look back at the character before it: the same matches as a leading
# (?<![\w*]), but the regex engine can jump from star to star instead of trying every position.
_EM_RE = re.compile(r"\*(?<![\w*]\*)(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+", re.M)
_QUOTE_RE = re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M)
_FENCE_RE = re.compile(r"^ {0,3}(?:```|~~~)[^\n]*$", re.M)
_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>|])")


def plain_text(markdown: str) -> str:
    """Markdown to readable text: links and images to their text, markup characters dropped."""
    # Each pattern needs a literal the cheap ``in`` test finds; most sections lack most of them.
    text = markdown
    if "![" in text:
        text = _IMAGE_RE.sub(r"\1", text)
    if "](" in text:
        text = _LINK_RE.sub(r"\1", text)
    if "]:" in text:
        text = _REF_DEF_RE.sub("", text)
    if "```" in text or "~~~" in text:
        text = _FENCE_RE.sub("", text)
    if "#" in text:
        text = _HEADING_RE.sub("", text)
    if ">" in text:
        text = _QUOTE_RE.sub("", text)
    if ">" in text:
        text = _TAG_RE.sub("", text)
    if "**" in text:
        text = _STRONG_RE.sub(r"\1", text)
    if "*" in text:
        text = _EM_RE.sub(r"\1", text)
    if "\\" in text:
        text = _ESCAPE_RE.sub(r"\1", text)
    return " ".join(text.replace("`", "").split())


def tokenizer(conn: apsw.Connection) -> Callable[..., list[tuple[int, int, str]]]:
    """The index's own tokenizer (stemming included), callable from Python."""
    name, *args = FTS_TOKENIZE.split()
    return cast("Callable[..., list[tuple[int, int, str]]]", conn.fts5_tokenizer(name, args))


def query_stems(tok: Callable[..., list[tuple[int, int, str]]], words: Iterable[str]) -> set[str]:
    stems: set[str] = set()
    for word in words:
        for token in tok(word.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None):
            stems.add(token[2])
    return stems


def make_snippet(tok: Callable[..., list[tuple[int, int, str]]], markdown: str, stems: set[str]) -> str:
    """The window of ``WINDOW_TOKENS`` tokens holding the most distinct query stems, matches in brackets."""
    text = plain_text(markdown)
    data = text.encode("utf-8")
    tokens = tok(data, apsw.FTS5_TOKENIZE_DOCUMENT, None)
    if not tokens:
        return _cut(text)
    hits = [token[2] in stems for token in tokens]
    start = _best_window(tokens, hits)
    end = min(len(tokens), start + WINDOW_TOKENS)
    if start > 0 and end - start < WINDOW_TOKENS:
        start = max(0, end - WINDOW_TOKENS)
    first_byte = tokens[start][0] if start > 0 else 0
    while first_byte > 0 and not data[first_byte - 1 : first_byte].isspace():
        first_byte -= 1  # start at a word boundary, not inside "don't"
    last_byte = tokens[end - 1][1] if end < len(tokens) else len(data)
    pieces: list[str] = []
    cursor = first_byte
    for (begin, finish, *_), hit in zip(tokens[start:end], hits[start:end], strict=False):
        if not hit:
            continue
        pieces.append(data[cursor:begin].decode("utf-8", "replace"))
        pieces.append("[" + data[begin:finish].decode("utf-8", "replace") + "]")
        cursor = finish
    pieces.append(data[cursor:last_byte].decode("utf-8", "replace"))
    body = " ".join("".join(pieces).split())
    prefix = "..." if first_byte > 0 else ""
    suffix = "..." if last_byte < len(data) else ""
    return prefix + _cut(body) + suffix


def _best_window(tokens: list[tuple[int, int, str]], hits: list[bool]) -> int:
    """Start index of the window with the most distinct matched stems (then most matches).

    Windows start at a match; one pass slides the window's end over the later
    matches, counting the stems inside, instead of recounting every window.
    """
    positions = [i for i, hit in enumerate(hits) if hit]
    if not positions:
        return 0
    best_start, best_key = 0, (-1, -1)
    inside: dict[str, int] = {}  # stem -> matches in the window
    end = 0  # positions[end] is the first match past the window
    for first, start in enumerate(positions):
        while end < len(positions) and positions[end] < start + WINDOW_TOKENS:
            stem = tokens[positions[end]][2]
            inside[stem] = inside.get(stem, 0) + 1
            end += 1
        key = (len(inside), end - first)
        if key > best_key:
            best_start, best_key = start, key
        stem = tokens[start][2]
        if inside[stem] == 1:
            del inside[stem]
        else:
            inside[stem] -= 1
    # Start a few tokens before the first match, for context.
    return max(0, best_start - 4)


def _cut(text: str) -> str:
    if len(text) <= MAX_SNIPPET_CHARS:
        return text
    cut = text[:MAX_SNIPPET_CHARS].rsplit(" ", 1)[0]
    if cut.count("[") > cut.count("]"):
        cut += "]"
    return cut
