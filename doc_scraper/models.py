"""Frozen values handed between pipeline stages.

Everything here is picklable: ``ParsedPage`` travels back from the process
pool, so no lxml object may ever be stored in these classes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The converter writes SECTION_MARK + str(index) + SECTION_END on its own line
# where a section starts (a heading, or an API definition with an id); the
# index refers to ``ConvertedRegion.marks``. ``convert.sections`` splits on
# these and strips them, so they never reach a written file.
SECTION_MARK = "\ue000"
SECTION_END = "\ue001"


@dataclass(frozen=True, slots=True)
class CrawlRequest:
    """One URL the scheduler hands to a worker."""

    url: str
    depth: int
    referrer: str | None = None
    # Validators from the previous crawl, for a conditional GET.
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True, slots=True)
class FetchResult:
    """What the fetcher got for a URL (after redirects)."""

    url: str
    final_url: str
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes
    content_type: str = ""
    charset: str | None = None
    elapsed_ms: float = 0.0
    attempts: int = 1
    redirects: tuple[str, ...] = ()

    @property
    def not_modified(self) -> bool:
        return self.status == 304


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    """How to pick content and links from a page (from the site config)."""

    content_selector: str = "auto"  # a CSS selector list, or "auto"
    link_selectors: tuple[str, ...] = ()  # empty: the whole <body>
    respect_nofollow: bool = False


@dataclass(frozen=True, slots=True)
class SectionMark:
    """Where a section starts in the converted Markdown."""

    anchor: str  # the element id in the HTML, or a GitHub-style slug
    kind: str  # "heading" or "definition"
    level: int  # 1-6 for headings; definitions sit one below their heading
    title: str  # heading text, or the definition's name


@dataclass(frozen=True, slots=True)
class Section:
    """A searchable piece of a page: one heading (or API entry) and its text."""

    anchor: str
    heading_path: tuple[str, ...]  # ("Guide", "Configuration", "Layers")
    level: int
    text: str  # Markdown of the section body, heading line included
    seq: int = 0


@dataclass(frozen=True, slots=True)
class Detection:
    """Which docs framework a page was built with, and how sure we are."""

    framework: str = "unknown"  # profile id, "unknown", or a shell id
    confidence: str = "fallback"  # high | medium | unvalidated | fallback | js-rendered
    source: str = "none"  # generator | dom | asset | shell | none
    selector: str = ""  # the CSS selector that was used ("" = readability)
    generator: str = ""


@dataclass(frozen=True, slots=True)
class ParsedPage:
    """The result of parsing one HTML page: Markdown, links and metadata."""

    url: str
    title: str
    markdown: str  # links inside are absolute URLs; the writer relativises them
    content_hash: str  # SHA-256 hex of ``markdown``
    # SHA-256 of the Markdown with link targets blanked: the same page served at two URLs
    # differs only in its resolved links, so this is what duplicate detection compares.
    text_hash: str = ""
    headings: tuple[str, ...] = ()
    links: tuple[str, ...] = ()  # absolute http(s) URLs to follow, fragments dropped
    canonical: str | None = None
    images: tuple[str, ...] = ()  # absolute image URLs inside the content
    sections: tuple[Section, ...] = ()
    detection: Detection = field(default_factory=Detection)
    needs_javascript: bool = False  # a client-rendered shell: nothing written
    text_length: int = 0
    noindex: bool = False


@dataclass(frozen=True, slots=True)
class PageRecord:
    """One page as stored in pages.jsonl and the index."""

    url: str
    title: str
    content: str
    content_hash: str
    crawled_at: str  # RFC 3339, UTC
    depth: int
    headings: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    path: str = ""  # output path relative to the site folder


@dataclass(frozen=True, slots=True)
class PageOutcome:
    """What happened to one URL; expected outcomes are counted, not raised."""

    url: str
    kind: str  # added | changed | unchanged | not_modified | skipped | failed | shell | removed
    depth: int = 0
    status: int = 0
    error: str = ""  # error class, e.g. "HTTP_404", "timeout"
    detail: str = ""


@dataclass(frozen=True, slots=True)
class CrawlProgress:
    """A snapshot of a running crawl, for progress lines and MCP job status."""

    site_key: str
    pages_done: int = 0
    pages_queued: int = 0
    pages_failed: int = 0
    elapsed_s: float = 0.0


@dataclass(frozen=True, slots=True)
class CrawlSummary:
    """How one site's crawl ended."""

    site_key: str
    ok: bool
    mode: str  # full | incremental | resume
    started_at: str = ""  # RFC 3339 UTC
    ended_at: str = ""
    pages: int = 0  # pages in the output after the crawl
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    retries: int = 0
    needs_javascript: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count (robots, scope, trap, ...)
    duration_s: float = 0.0
    interrupted: bool = False
    error: str = ""
    output_dir: str = ""
