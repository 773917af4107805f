"""Outgoing links, canonical URL, base URL and robots meta of a parsed page."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin, urlsplit

from doc_scraper.errors import ExtractError
from doc_scraper.extract.detect import css

if TYPE_CHECKING:
    from lxml.etree import _Element as HtmlElement

_SCHEMES = ("http", "https")


def base_url(doc: HtmlElement, url: str) -> str:
    """The URL relative links resolve against: <base href> if present, else the page URL."""
    head = doc.find("head")
    for base in (head if head is not None else doc).iter("base"):
        href = (base.get("href") or "").strip()
        if href:
            return str(urljoin(url, href))
        break
    return url


_UNSAFE = frozenset(" \t\n\r\\%")


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 5.2.4 on an absolute path."""
    if "/." not in path:
        return path
    segments = path.split("/")
    out: list[str] = []
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        if seg == ".":
            if i == last:
                out.append("")
            continue
        if seg == "..":
            if len(out) > 1:
                out.pop()
            if i == last:
                out.append("")
            continue
        out.append(seg)
    joined = "/".join(out)
    return joined if joined.startswith("/") else "/" + joined


class Resolver:
    """Resolves hrefs against one base URL, faster than ``urljoin`` for the common shapes."""

    __slots__ = ("_cache", "_links", "base", "dir", "origin", "path", "query", "scheme")

    def __init__(self, base: str) -> None:
        parts = urlsplit(base)
        self.base = base
        self.scheme = parts.scheme.lower()
        self.origin = f"{self.scheme}://{parts.netloc}"
        self.path = parts.path or "/"
        self.query = parts.query
        self.dir = self.path[: self.path.rfind("/") + 1]
        self._cache: dict[str, str] = {}
        self._links: dict[str, str | None] = {}

    def absolute(self, href: str) -> str:
        """``href`` made absolute, fragment kept; other schemes (mailto:) returned as they are."""
        cached = self._cache.get(href)
        if cached is None:
            stripped = href.strip()
            if stripped and stripped[0] not in "#?" and self.scheme in _SCHEMES:
                # Pages of one folder share most hrefs (navigation): remember joins across pages.
                cached = _join_shared(self.origin, self.dir, self.scheme, stripped)
            else:
                cached = self._join(stripped)
            self._cache[href] = cached
        return cached

    def _join(self, href: str) -> str:
        return _join(self.base, self.scheme, self.origin, self.path, self.query, self.dir, href)

    def link(self, href: str) -> str | None:
        """Absolute http(s) URL without fragment, or None for other schemes and junk."""
        if href in self._links:
            return self._links[href]
        result = self._links[href] = self._link(href)
        return result

    def _link(self, href: str) -> str | None:
        absolute = self.absolute(href)
        if not absolute.startswith(("http://", "https://")):
            return None
        hash_at = absolute.find("#")
        if hash_at >= 0:
            absolute = absolute[:hash_at]
        host = absolute[absolute.find("://") + 3 :]
        if not host or host[0] in "/?#":
            return None
        return absolute


@lru_cache(maxsize=32768)
def _join_shared(origin: str, folder: str, scheme: str, href: str) -> str:
    """Join a non-empty href that is not fragment- or query-only (these need the page itself)."""
    return _join(origin + folder, scheme, origin, folder, "", folder, href)


def _slow(base: str, href: str) -> str:
    try:
        return str(urljoin(base, href))
    except ValueError:
        return href


def _join(base: str, scheme: str, origin: str, path: str, query: str, folder: str, href: str) -> str:
    """RFC 3986 reference resolution for the common shapes; urljoin for the rest."""
    if not href:
        return str(urldefrag(base).url)
    if scheme not in _SCHEMES or not _UNSAFE.isdisjoint(href):
        return _slow(base, href)
    colon = href.find(":")
    if colon > 0:
        stop = min((p for p in (href.find("/"), href.find("?"), href.find("#")) if p >= 0), default=len(href))
        if colon < stop:
            other = href[:colon].lower()
            if other in _SCHEMES and href[colon + 1 : colon + 3] == "//":
                return other + href[colon:]
            if other in _SCHEMES:
                return _slow(base, href)
            return href
    if href.startswith("//"):
        return f"{scheme}:{href}"
    rest, hash_, fragment = href.partition("#")
    ref_path, qmark, ref_query = rest.partition("?")
    if ref_path.startswith("/"):
        full = ref_path
    elif not ref_path:
        full = path
        if not qmark and query:
            qmark, ref_query = "?", query
    else:
        full = folder + ref_path
    url = origin + _remove_dot_segments(full)
    if qmark:
        url += "?" + ref_query
    if hash_:
        url += "#" + fragment
    return url


def resolve_href(base: str, href: str) -> str | None:
    """Absolute http(s) URL without fragment, or None for other schemes and junk."""
    return Resolver(base).link(href)


def extract_links(
    doc: HtmlElement,
    resolver: Resolver,
    selectors: tuple[str, ...] = (),
    respect_nofollow: bool = False,
    rewrite: bool = False,
) -> tuple[str, ...]:
    """Every a[href] inside ``selectors`` (whole body when empty), absolute, de-duplicated in order.

    With ``rewrite``, each href is also replaced by its absolute form (fragment kept, ``#x`` left
    alone), so the converter need not resolve them again.
    """
    if selectors:
        roots: list[HtmlElement] = []
        for sel in selectors:
            try:
                roots.extend(css(sel)(doc))
            except Exception as exc:  # cssselect's SelectorError family
                raise ExtractError(
                    resolver.base, f"link_selectors entry {sel!r} is not valid CSS ({exc}); fix the selector"
                ) from exc
    else:
        body = doc.find("body")
        roots = [body if body is not None else doc]
    seen: dict[str, None] = {}
    for root in roots:
        for a in root.iter("a"):
            href = a.get("href")
            if href is None:
                continue
            if rewrite and href[:1] != "#":
                a.set("href", resolver.absolute(href))
            if respect_nofollow and "nofollow" in (a.get("rel") or "").lower().split():
                continue
            target = resolver.link(href)
            if target is not None and target not in seen:
                seen[target] = None
    refresh = refresh_target(doc, resolver)
    if refresh is not None and refresh not in seen:
        seen[refresh] = None
    return tuple(seen)


def refresh_target(doc: HtmlElement, resolver: Resolver) -> str | None:
    """Where a <meta http-equiv=refresh> sends the reader (redirect stubs), absolute."""
    head = doc.find("head")
    for meta in (head if head is not None else doc).iter("meta"):
        if (meta.get("http-equiv") or "").lower() == "refresh":
            _, sep, rest = (meta.get("content") or "").partition(";")
            rest = rest.strip()
            if sep and rest.lower().startswith("url"):
                target = rest[3:].lstrip(" =").strip("'\" ")
                return resolver.link(target) if target else None
    return None


def canonical_url(doc: HtmlElement, resolver: Resolver) -> str | None:
    """The <link rel=canonical> target, absolute."""
    head = doc.find("head")
    for link in (head if head is not None else doc).iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split():
            href = link.get("href")
            if href:
                return resolver.link(href)
    return None


def is_noindex(doc: HtmlElement) -> bool:
    """True when a robots meta tag says noindex (or none)."""
    head = doc.find("head")
    for meta in (head if head is not None else doc).iter("meta"):
        if (meta.get("name") or "").lower() in ("robots", "googlebot"):
            content = (meta.get("content") or "").lower().replace(" ", "")
            values = set(content.split(","))
            if "noindex" in values or "none" in values:
                return True
    return False
