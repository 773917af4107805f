"""Propose a crawl scope for ``add`` from the seed URL and the sitemap's URLs (pure, no I/O).

The prefix is built by walking the seed's directory segments:

* a locale (``en``, ``pt-BR``) or version (``3.11``, ``v2``, ``latest``) segment is always kept,
  so one language and one version are crawled; its siblings fall outside the prefix;
* the first ordinary segment (``/docs/``) is kept when at least ``MIN_CLUSTER`` sitemap pages
  live under it (without a sitemap it is kept as is); the walk stops at the next ordinary one,
  so a seed deep in a section still proposes the whole documentation root.

Locale and version directories found directly under the prefix (a Docusaurus site whose
default language sits at the root and translations under ``/fr/``) become
``disallowed_path_patterns``. ``max_depth`` is the deepest sitemap path under the prefix,
plus one, clamped to [3, 10]; 5 without a sitemap. Every decision adds an evidence line.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from urllib.parse import urlsplit

MIN_CLUSTER = 5
DEPTH_MIN = 3
DEPTH_MAX = 10
DEPTH_WITHOUT_SITEMAP = 5
NOTE_PAGES = 2_000
WARN_PAGES = 10_000
TOP_CLUSTERS = 8

# ISO 639-1 codes of the languages docs are most often translated into
_LOCALE_CODES = "ar bn cs da de el en es fa fi fr he hi hu id it ja ko nb nl no pl pt ro ru sv th tr uk vi zh"
LOCALES = frozenset(_LOCALE_CODES.split(" "))
_LOCALE = re.compile(r"^([a-z]{2})(?:[-_]([a-z]{2}|hans|hant|latn|cyrl))?$", re.IGNORECASE)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*(?:\.x)?$", re.IGNORECASE)
VERSION_WORDS = frozenset({"latest", "stable", "dev", "next", "current", "master", "main"})


def segment_kind(segment: str) -> str:
    """``"locale"``, ``"version"`` or ``"ordinary"`` for one path segment."""
    match = _LOCALE.match(segment)
    if match and match.group(1).lower() in LOCALES:
        return "locale"
    if _VERSION.match(segment) or segment.lower() in VERSION_WORDS:
        return "version"
    return "ordinary"


@dataclass(frozen=True, slots=True)
class ScopeProposal:
    """The proposed ``allowed_path_prefix`` and friends, with the reasons."""

    prefix: str
    disallowed_path_patterns: tuple[str, ...]
    max_depth: int
    sitemap_pages: int  # sitemap URLs on the seed's host
    pages_in_scope: int  # of those, under the prefix and not excluded
    clusters: tuple[tuple[str, int], ...]  # first-level directories under the prefix, by size
    locale: str = ""
    version: str = ""
    evidence: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def same_host(a: str, b: str) -> bool:
    """Hosts equal once lower-cased and without a leading ``www.``."""
    return _bare(a) == _bare(b)


def _bare(host: str) -> str:
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def _dir_segments(path: str) -> list[str]:
    """The directories of a URL path: ``/a/b/c.html`` and ``/a/b/`` both give ``[a, b]``."""
    parts = path.split("/")
    if parts and parts[0] == "":
        parts = parts[1:]
    if parts:
        parts = parts[:-1]  # a file name, or "" after a trailing slash
    return [part for part in parts if part]


def _segments(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def propose_scope(seed_url: str, sitemap_urls: list[str] | None) -> ScopeProposal:
    """Cluster ``sitemap_urls`` around ``seed_url``; ``None`` or ``[]`` means no sitemap was found."""
    seed = urlsplit(seed_url)
    host = seed.hostname or ""
    paths = [
        urlsplit(url).path or "/"
        for url in (sitemap_urls or [])
        if url.startswith(("http://", "https://")) and same_host(urlsplit(url).hostname or "", host)
    ]
    have_sitemap = bool(paths)
    evidence: list[str] = []
    warnings: list[str] = []
    if sitemap_urls and not have_sitemap:
        evidence.append(f"sitemap: {len(sitemap_urls)} URLs, none on {host}; scope from the seed alone")

    # 1. walk the seed's directories
    kept: list[str] = []
    locale = version = ""
    have_ordinary = False
    for segment in _dir_segments(seed.path or "/"):
        kind = segment_kind(segment)
        candidate = "/" + "".join(part + "/" for part in (*kept, segment))
        if kind in ("locale", "version"):
            siblings = _siblings(paths, kept, kind, segment)
            kept.append(segment)
            if kind == "locale" and not locale:
                locale = segment
            if kind == "version" and not version:
                version = segment
            note = f"; other {kind}s in the sitemap stay out: {', '.join(siblings)}" if siblings else ""
            evidence.append(f"allowed_path_prefix keeps {kind} segment {segment!r}{note}")
            continue
        if have_ordinary:
            break
        if have_sitemap:
            under = sum(1 for path in paths if path.startswith(candidate))
            if under < MIN_CLUSTER:
                evidence.append(
                    f"allowed_path_prefix stops before {segment!r}: "
                    f"only {under} sitemap pages under {candidate}"
                )
                break
            evidence.append(f"allowed_path_prefix keeps {segment!r}: {under} sitemap pages under {candidate}")
        else:
            evidence.append(f"allowed_path_prefix keeps {segment!r} (no sitemap to count pages)")
        kept.append(segment)
        have_ordinary = True
    prefix = "/" + "".join(part + "/" for part in kept)

    # 2. locale/version directories right under the prefix that the seed is not in
    under_prefix = [path for path in paths if path.startswith(prefix)]
    seed_rest = _segments((seed.path or "/")[len(prefix) :]) if (seed.path or "/").startswith(prefix) else []
    seed_first = seed_rest[0] if len(seed_rest) > 1 else ""
    first_dirs: Counter[str] = Counter()
    for path in under_prefix:
        rest = _segments(path[len(prefix) :])
        if len(rest) > 1:
            first_dirs[rest[0]] += 1
    fenced = sorted(
        name for name in first_dirs if name != seed_first and segment_kind(name) in ("locale", "version")
    )
    patterns = tuple("^" + re.escape(prefix + name + "/") for name in fenced)
    evidence.extend(
        f"disallowed_path_patterns excludes {prefix}{name}/ ({segment_kind(name)}, "
        f"{first_dirs[name]} sitemap pages)"
        for name in fenced
    )

    # 3. size and depth of what remains
    in_scope = [path for path in under_prefix if not any(re.match(p, path) for p in patterns)]
    if have_sitemap:
        deepest = max((len(_segments(path[len(prefix) :])) for path in in_scope), default=0)
        max_depth = min(max(deepest + 1, DEPTH_MIN), DEPTH_MAX)
        evidence.append(
            f"max_depth {max_depth}: the deepest sitemap page is {deepest} levels under {prefix} "
            f"(+1, kept within {DEPTH_MIN}..{DEPTH_MAX})"
        )
        evidence.append(f"scope: {len(in_scope)} of {len(paths)} sitemap pages on {host} fall under it")
    else:
        max_depth = DEPTH_WITHOUT_SITEMAP
        evidence.append(f"max_depth {max_depth}: default without a sitemap")
    if len(in_scope) >= WARN_PAGES:
        warnings.append(
            f"{len(in_scope)} pages in scope: a long crawl; "
            "consider a narrower allowed_path_prefix or max_pages"
        )
    elif len(in_scope) >= NOTE_PAGES:
        evidence.append(f"note: {len(in_scope)} pages in scope; the first crawl will take a while")

    clusters: Counter[str] = Counter()
    for path in in_scope:
        rest = _segments(path[len(prefix) :])
        clusters[rest[0] + "/" if len(rest) > 1 else "(pages at the top)"] += 1
    top = tuple(clusters.most_common(TOP_CLUSTERS))
    if top:
        evidence.append("largest sections: " + ", ".join(f"{name} {count}" for name, count in top))
    return ScopeProposal(
        prefix=prefix,
        disallowed_path_patterns=patterns,
        max_depth=max_depth,
        sitemap_pages=len(paths),
        pages_in_scope=len(in_scope),
        clusters=top,
        locale=locale,
        version=version,
        evidence=tuple(evidence),
        warnings=tuple(warnings),
    )


def _siblings(paths: list[str], kept: list[str], kind: str, segment: str) -> list[str]:
    """Directories of the same kind next to ``segment`` in the sitemap (other versions, other languages)."""
    base = "/" + "".join(part + "/" for part in kept)
    found: Counter[str] = Counter()
    for path in paths:
        if not path.startswith(base):
            continue
        rest = _segments(path[len(base) :])
        if len(rest) > 1 and rest[0] != segment and segment_kind(rest[0]) == kind:
            found[rest[0]] += 1
    return sorted(found)
