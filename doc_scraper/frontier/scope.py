"""Which URLs belong to a site's crawl: domain, path prefix, patterns, depth, traps.

``Scope.check`` answers with None (in scope) or a short reason key that the
engine counts under ``skipped/<reason>``. Pass normalised URLs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from doc_scraper.errors import ConfigError
from doc_scraper.urls import path_segments_match_prefix, url_matches_domain, url_to_relpath

if TYPE_CHECKING:
    from doc_scraper.config.schema import Config, SiteConfig

__all__ = ["RESOURCE_EXTENSIONS", "SCOPE_REASONS", "Scope"]

# Links to these are assets, never documentation pages.
RESOURCE_EXTENSIONS = frozenset(
    {
        *("svg", "png", "jpg", "jpeg", "gif", "webp", "ico", "bmp", "tiff", "avif"),
        *("woff", "woff2", "ttf", "eot", "otf", "css", "js", "mjs", "json", "xml"),
        *("pdf", "zip", "tar", "gz", "tgz", "mp4", "mp3", "wav", "ogg", "webm"),
    }
)

# Every reason ``Scope.check`` may return, in the order the checks run.
SCOPE_REASONS = (
    "invalid",  # the URL cannot be parsed
    "scheme",  # not http(s)
    "url_length",  # longer than max_url_length
    "domain",  # host name is not allowed_domain (any port)
    "prefix",  # path outside allowed_path_prefix (segment-wise)
    "resource",  # an asset extension (image, font, script, archive...)
    "pattern",  # a disallowed_path_patterns regex matches the path
    "path_depth",  # more than max_path_depth segments
    "repetition",  # one segment repeated more than max_segment_repeats times
    "depth",  # link depth not below max_depth
)


@dataclass(frozen=True, slots=True)
class Scope:
    """The scope rules of one site, ready to test URLs against."""

    allowed_domain: str
    path_prefix: str
    patterns: tuple[re.Pattern[str], ...] = ()
    max_depth: int = 0
    max_url_length: int = 2048
    max_path_depth: int = 32
    max_segment_repeats: int = 3

    @classmethod
    def from_site(cls, site: SiteConfig, config: Config) -> Scope:
        """Compile the site's rules; a bad regex raises ``ConfigError`` naming its key."""
        patterns: list[re.Pattern[str]] = []
        for i, pattern in enumerate(site.disallowed_path_patterns):
            try:
                patterns.append(re.compile(pattern))
            except re.error as exc:
                raise ConfigError(
                    f"invalid regular expression {pattern!r}: {exc}; fix or remove the pattern",
                    key=f"sites.{site.key}.disallowed_path_patterns[{i}]",
                ) from exc
        return cls(
            allowed_domain=site.allowed_domain.strip().lower(),
            path_prefix=site.allowed_path_prefix or "/",
            patterns=tuple(patterns),
            max_depth=site.max_depth,
            max_url_length=config.max_url_length,
            max_path_depth=config.max_path_depth,
            max_segment_repeats=config.max_segment_repeats,
        )

    def check(self, url: str, depth: int) -> str | None:
        """None if ``url`` at link ``depth`` is in scope, else the reason key.

        Start URLs have depth 0; a URL at depth d passes iff ``max_depth`` is 0
        or d < ``max_depth`` (``max_depth: 1`` = start pages only).
        """
        reason = self.check_target(url)
        if reason is None and self.max_depth and depth >= self.max_depth:
            return "depth"
        return reason

    def check_target(self, url: str) -> str | None:
        """Every check except depth: use it for redirect targets and sitemap URLs."""
        try:
            parts = urlsplit(url)
            parts.port  # noqa: B018 - validates the port
        except ValueError:
            return "invalid"
        if parts.scheme.lower() not in ("http", "https"):
            return "scheme"
        if self.max_url_length and len(url) > self.max_url_length:
            return "url_length"
        if not url_matches_domain(url, self.allowed_domain):
            return "domain"
        path = parts.path or "/"
        if not path_segments_match_prefix(path, self.path_prefix):
            return "prefix"
        segments = [s for s in path.split("/") if s]
        if segments and not path.endswith("/"):
            ext = segments[-1].rpartition(".")[2].lower()
            if "." in segments[-1] and ext in RESOURCE_EXTENSIONS:
                return "resource"
        if any(p.search(path) for p in self.patterns):
            return "pattern"
        if self.max_path_depth and len(segments) > self.max_path_depth:
            return "path_depth"
        if self.max_segment_repeats and _max_repeats(segments) > self.max_segment_repeats:
            return "repetition"
        return None

    def relpath(self, url: str) -> str | None:
        """The output file of ``url`` relative to the site folder (None outside the site)."""
        return url_to_relpath(url, self.allowed_domain, self.path_prefix)


def _max_repeats(segments: list[str]) -> int:
    counts: dict[str, int] = {}
    for seg in segments:
        counts[seg] = counts.get(seg, 0) + 1
    return max(counts.values(), default=0)
