"""Opt-in image download helpers: domain filters and collision-free local names."""

from __future__ import annotations

import hashlib
import mimetypes
import posixpath
import re
from urllib.parse import unquote, urlsplit

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif", ".bmp", ".ico", ".tif", ".tiff"}


def _host_matches(host: str, pattern: str) -> bool:
    pattern = pattern.lower().strip()
    if pattern.startswith("*."):
        apex = pattern[2:]
        return host == apex or host.endswith("." + apex)
    return host == pattern


def image_allowed(url: str, allowed: tuple[str, ...], disallowed: tuple[str, ...]) -> bool:
    """Domain filters: ``example.com`` exactly, ``*.example.com`` for it and its subdomains."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return False
    host = (parts.hostname or "").lower()
    if any(_host_matches(host, p) for p in disallowed):
        return False
    return not allowed or any(_host_matches(host, p) for p in allowed)


def image_filename(url: str, content_type: str = "") -> str:
    """``<name>_<8 hex of sha256(url)><ext>``: stable per URL, safe on every file system."""
    path = unquote(urlsplit(url).path)
    stem, ext = posixpath.splitext(posixpath.basename(path))
    ext = ext.lower()
    if ext not in _IMAGE_EXTS:
        guessed = mimetypes.guess_extension(content_type.split(";")[0].strip()) if content_type else None
        ext = guessed if guessed in _IMAGE_EXTS else ".img"
    stem = _UNSAFE.sub("_", stem).strip("._")[:60] or "image"
    return f"{stem}_{hashlib.sha256(url.encode()).hexdigest()[:8]}{ext}"
