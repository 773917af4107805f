"""Bytes to text for HTML pages: HTTP charset > BOM > <meta> > UTF-8, never raising on bad bytes."""

from __future__ import annotations

import codecs
import re

from doc_scraper.errors import ExtractError

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),  # before UTF-16 LE: it starts with the same bytes
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Magic numbers of formats a docs crawler meets instead of HTML.
_BINARY_MAGIC: tuple[bytes, ...] = (
    b"%PDF-",
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\xfd7zXZ",
    b"RIFF",
    b"\x00\x00\x01\x00",
    b"wOFF",
    b"wOF2",
    b"\x7fELF",
)
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE)
# WHATWG: these labels mean a superset encoding in browsers.
_ALIASES: dict[str, str] = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "l1": "cp1252",
    "iso_8859-1": "cp1252",
    "x-sjis": "cp932",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "windows-31j": "cp932",
    "gb2312": "gbk",
    "euc-kr": "cp949",
    "utf8": "utf-8",
    "x-user-defined": "cp1252",
    "iso-8859-9": "cp1254",
    "tis-620": "cp874",
}


def _codec(label: str | None) -> str | None:
    """Python codec name for a charset label, or None if unknown."""
    if not label:
        return None
    name = label.strip().strip("\"'").lower()
    name = _ALIASES.get(name, name)
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    # A UTF-16 label on a page without BOM is almost always a lie (WHATWG treats <meta> so).
    return info.name


def sniff_encoding(body: bytes, charset: str | None = None) -> str:
    """The codec to decode ``body`` with: BOM, HTTP charset, <meta>, else UTF-8.

    A byte-order mark wins over the header, as in browsers: servers mislabel
    files far more often than a BOM lies.
    """
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name
    declared = _codec(charset)
    if declared:
        return declared
    match = _META_CHARSET.search(body, 0, 4096)
    if match:
        meta = _codec(match.group(1).decode("ascii", "replace"))
        if meta and not meta.startswith("utf-16") and not meta.startswith("utf-32"):
            return meta
    return "utf-8"


def looks_binary(body: bytes, encoding: str) -> bool:
    """True for bodies that are clearly not text (magic numbers, NUL bytes)."""
    head = body[:1024]
    if head.startswith(_BINARY_MAGIC):
        return True
    if encoding.startswith(("utf-16", "utf-32")):
        return False
    return b"\x00" in head


def decode_html(body: bytes, url: str, charset: str | None = None) -> tuple[str, str]:
    """Decode an HTML body to (text, codec name); raise ExtractError for binary bodies."""
    encoding = sniff_encoding(body, charset)
    if looks_binary(body, encoding):
        raise ExtractError(url, "not HTML (binary content); check the URL or exclude it from the crawl")
    start = 0
    for bom, name in _BOMS:
        if body.startswith(bom) and codecs.lookup(name).name == codecs.lookup(encoding).name:
            start = len(bom)
            break
    text = body[start:].decode(encoding, errors="replace")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    return text, encoding
