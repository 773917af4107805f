"""Turn a probe into a proposed config entry, with evidence per field, warnings and a preview.

``draft_site`` runs the whole ``add`` analysis (probe, preview, scope) and returns a ``Draft``;
``Draft.to_json`` and ``render_text`` show it; ``config_edit.add_site_to_file`` writes it.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from doc_scraper.config.durations import format_duration
from doc_scraper.config.load import SITE_KEY_PATTERN
from doc_scraper.discover.preview import PREVIEW_LINES_JSON, PREVIEW_LINES_TEXT, Preview, preview_page
from doc_scraper.discover.probe import PROBE_BUDGET_S, ProbeResult, make_prober, normalize_seed, within_budget
from doc_scraper.discover.scope import ScopeProposal, propose_scope, same_host
from doc_scraper.errors import ConfigError, FetchError

if TYPE_CHECKING:
    from doc_scraper.config.schema import Config

GENERIC_LABELS = frozenset({"www", "docs", "doc", "documentation", "help", "developer", "developers", "api"})
_TITLE_SKIP = frozenset({"documentation", "docs", "welcome", "home", "index", "overview", "the", "to"})
VALIDATED = ("high", "medium")
WEAK_PREVIEW_CHARS = 500  # a seed page with less text than this is probably a landing page

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Draft:
    """A proposed ``sites.<key>`` entry and why each field has its value."""

    site_key: str
    entry: dict[str, Any]
    framework: str
    confidence: str
    signal_source: str
    generator: str
    sitemap_page_count: int
    scope: ScopeProposal
    preview: Preview
    evidence: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    llms_txt_links: int = 0
    requests: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self, *, written: bool, config_path: str) -> dict[str, Any]:
        preview = self.preview
        return {
            "site_key": self.site_key,
            "framework": self.framework,
            "confidence": self.confidence,
            "signal_source": self.signal_source,
            "generator": self.generator,
            "sitemap_page_count": self.sitemap_page_count,
            "config": self.entry,
            "scope": {
                "pages_in_scope": self.scope.pages_in_scope,
                "sections": [{"path": name, "pages": count} for name, count in self.scope.clusters],
                "locale": self.scope.locale,
                "version": self.scope.version,
            },
            "preview": {
                "url": preview.url,
                "title": preview.title,
                "markdown": preview.head(PREVIEW_LINES_JSON),
                "chars": preview.chars,
                "page_text_ratio": preview.page_text_ratio,
                "code_blocks_kept": preview.code_blocks_kept,
                "code_blocks_total": preview.code_blocks_total,
                "headings": preview.headings,
                "nav_leak": preview.nav_leak,
                "error": preview.error,
            },
            "llms_txt_links": self.llms_txt_links,
            "requests": self.requests,
            "evidence": list(self.evidence),
            "warnings": list(self.warnings),
            "config_path": config_path,
            "written": written,
        }


def propose_site_key(url: str, title: str, framework: str, prefix: str, existing: set[str]) -> str:
    """``<first meaningful host label>_docs`` (IP hosts: prefix, title or framework); never a taken key."""
    host = (urlsplit(url).hostname or "").lower()
    base = ""
    if host and not _is_ip_or_local(host):
        labels = [label for label in host.split(".")[:-1] or host.split(".") if label not in GENERIC_LABELS]
        base = labels[0] if labels else host.split(".")[0]
    if not base:
        first = next((seg for seg in prefix.split("/") if seg), "")
        words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9]+", title) if w.lower() not in _TITLE_SKIP]
        base = (
            first
            or (words[0] if words else "")
            or (framework if framework not in ("unknown", "") else "site")
        )
    slug = re.sub(r"[^a-z0-9]+", "_", base.lower()).strip("_") or "site"
    key = slug if slug.endswith("_docs") else slug + "_docs"
    if not SITE_KEY_PATTERN.match(key):
        key = "site_" + key
    candidate, number = key, 2
    while candidate in existing:
        candidate, number = f"{key}_{number}", number + 1
    return candidate


def _is_ip_or_local(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def build_draft(
    probe: ProbeResult,
    preview: Preview,
    scope: ScopeProposal,
    *,
    existing_keys: set[str],
    site_key: str | None = None,
    selector: str | None = None,
    depth: int | None = None,
    sample: Preview | None = None,
) -> Draft:
    """Assemble the entry from the probe, the preview and the scope; explain every field.

    ``sample`` is the preview of a typical page, taken when the seed is a landing page.
    """
    final = probe.final_url
    host = urlsplit(final).hostname or ""
    detection = preview.detection
    seed_markdown = preview.markdown
    evidence = list(probe.evidence)
    warnings = list(probe.warnings)

    if site_key is not None:
        if not SITE_KEY_PATTERN.match(site_key):
            raise ConfigError(
                f"-site {site_key!r}: use letters, digits, '_', '.' or '-', starting with a letter or digit"
            )
        if site_key in existing_keys:
            raise ConfigError(
                f"site {site_key!r} already exists in the config; choose another key with -site KEY"
            )
        key = site_key
    else:
        key = propose_site_key(final, preview.title, detection.framework, scope.prefix, existing_keys)
        evidence.append(
            f"site key {key}: proposed from the URL and the page title"
            + (" (taken keys skipped)" if key[-1].isdigit() else "")
        )

    # content_selector: the flag, else the detected framework's selector if it held the content here
    if selector:
        content_selector = selector
        evidence.append(f"content_selector {selector!r}: given with -selector")
        if preview.error:
            warnings.append(f"-selector {selector!r} failed on the seed page: {preview.error}")
    elif detection.confidence in VALIDATED and detection.selector:
        content_selector = detection.selector
        evidence.append(
            f"content_selector {content_selector!r}: {detection.framework} detected ({detection.confidence}, "
            f"from {detection.source}) and the selector holds {preview.chars} characters on the seed page"
        )
    else:
        content_selector = "auto"
        sample_ok = (
            sample is not None and sample.detection.confidence in VALIDATED and sample.detection.selector
        )
        if sample is not None and sample_ok:
            evidence.append(
                f"content_selector auto: on the typical page {sample.url} the {sample.detection.framework} "
                f"selector {sample.detection.selector!r} holds {sample.chars} characters, but the seed page "
                "does not fit it (a landing page), so each page is detected during the crawl"
            )
            if detection.confidence not in VALIDATED:
                detection = sample.detection
        elif detection.confidence == "js-rendered" or preview.needs_javascript:
            warnings.append(
                f"the seed page is rendered by JavaScript ({detection.framework}); "
                "the crawl will find little text without a browser"
            )
        elif detection.framework != "unknown":
            evidence.append(
                f"content_selector auto: {detection.framework} detected ({detection.source}) but its "
                "selector did not hold enough text on this page; each page is detected during the crawl"
            )
        else:
            warnings.append(
                "no docs framework recognised: content_selector auto falls back to readability; "
                "check the preview, or give -selector CSS"
            )
    if sample is not None and not selector:
        preview = sample  # the typical page shows what the crawl will write better than a landing page
        evidence.append(
            f"preview: {sample.url} (the seed page has {len(seed_markdown)} characters of Markdown)"
        )

    max_depth = scope.max_depth
    if depth is not None:
        max_depth = depth
        evidence.append(f"max_depth {depth}: given with -depth")
    evidence.extend(scope.evidence)
    warnings.extend(scope.warnings)
    if preview.code_blocks_total and preview.code_blocks_kept < preview.code_blocks_total:
        evidence.append(
            f"preview keeps {preview.code_blocks_kept} of {preview.code_blocks_total} code blocks "
            "on the seed page"
        )
    if preview.nav_leak:
        warnings.append(
            f"{preview.nav_leak} navigation element(s) remain inside the content region; "
            "a narrower -selector may help"
        )
    canonical_host = _canonical_host(probe)
    if canonical_host and canonical_host != host.lower():
        warnings.append(
            f"the page's canonical URL is on {canonical_host}, not {host}: this may be a mirror; "
            "consider adding the canonical site instead"
        )

    entry: dict[str, Any] = {
        "start_urls": [final],
        "allowed_domain": host,
        "allowed_path_prefix": scope.prefix,
        "content_selector": content_selector,
        "max_depth": max_depth,
    }
    if scope.disallowed_path_patterns:
        entry["disallowed_path_patterns"] = list(scope.disallowed_path_patterns)
    if probe.robots.crawl_delay:
        entry["delay_per_host"] = format_duration(probe.robots.crawl_delay)
        evidence.append(f"delay_per_host {entry['delay_per_host']}: robots.txt Crawl-delay")
    return Draft(
        site_key=key,
        entry=entry,
        framework=detection.framework,
        confidence=detection.confidence,
        signal_source=detection.source,
        generator=detection.generator,
        sitemap_page_count=len(probe.sitemap_urls),
        scope=scope,
        preview=preview,
        evidence=tuple(evidence),
        warnings=tuple(dict.fromkeys(warnings)),
        llms_txt_links=probe.llms_txt_links,
        requests=probe.requests,
    )


def _canonical_host(probe: ProbeResult) -> str:
    match = re.search(
        rb"<link[^>]+rel=[\"']?canonical[\"']?[^>]*href=[\"']?([^\"' >]+)", probe.page.body[:200_000], re.I
    )
    if not match:
        return ""
    return (urlsplit(match.group(1).decode("utf-8", "replace")).hostname or "").lower()


def pick_sample(urls: tuple[str, ...] | list[str], scope: ScopeProposal, seed: str) -> str | None:
    """A typical page in scope to validate the selector on: the middle page of the largest section."""
    host = urlsplit(seed).hostname or ""
    seed_path = urlsplit(seed).path
    best_section = scope.clusters[0][0] if scope.clusters else ""
    candidates = []
    for url in urls:
        parts = urlsplit(url)
        path = parts.path or "/"
        if (
            not same_host(parts.hostname or "", host)
            or not path.startswith(scope.prefix)
            or path == seed_path
        ):
            continue
        if any(re.match(pattern, path) for pattern in scope.disallowed_path_patterns):
            continue
        rest = path[len(scope.prefix) :]
        if best_section.endswith("/") and not rest.startswith(best_section):
            continue
        candidates.append((path.count("/"), path, url))
    if not candidates:
        return None
    candidates.sort()
    return candidates[len(candidates) // 2][2]


def _weak(preview: Preview) -> bool:
    return preview.detection.confidence not in VALIDATED or preview.chars < WEAK_PREVIEW_CHARS


async def draft_site(
    url: str,
    config: Config,
    *,
    site_key: str | None = None,
    selector: str | None = None,
    depth: int | None = None,
    user_agent: str | None = None,
    budget_s: float = PROBE_BUDGET_S,
) -> Draft:
    """Probe ``url`` and propose an entry for ``config`` (nothing is written).

    When the seed is a landing page whose framework selector cannot be validated, one
    typical page from the sitemap is fetched and previewed as well.
    """
    seed = normalize_seed(url)
    async with within_budget(seed, budget_s), make_prober(config, user_agent=user_agent) as prober:
        probe = await prober.run(seed)
        page = probe.page
        preview = await asyncio.to_thread(
            preview_page, page.body, page.final_url, selector or "auto", page.charset
        )
        scope = propose_scope(page.final_url, list(probe.sitemap_urls) or None)
        sample: Preview | None = None
        sample_url = pick_sample(probe.sitemap_urls, scope, page.final_url) if _weak(preview) else None
        if sample_url:
            try:
                fetched = await prober.fetch_page(sample_url)
            except FetchError as exc:
                logger.info("add.sample_failed", extra={"url": sample_url, "error": str(exc)})
            else:
                sample = await asyncio.to_thread(
                    preview_page, fetched.body, fetched.final_url, selector or "auto", fetched.charset
                )
        probe = replace(probe, requests=prober.requests)
    return build_draft(
        probe,
        preview,
        scope,
        existing_keys=set(config.sites),
        site_key=site_key,
        selector=selector,
        depth=depth,
        sample=sample,
    )


def render_text(draft: Draft, config_path: str) -> str:
    """The human-readable draft: the YAML entry, evidence, warnings and the preview."""
    from doc_scraper.discover.config_edit import render_entry

    p = draft.preview
    lines = [
        f"Proposed entry for {config_path}:",
        "",
        "sites:",
        render_entry(draft.site_key, draft.entry, 2).rstrip("\n"),
        "",
        f"framework: {draft.framework} (confidence {draft.confidence}, signal {draft.signal_source}"
        + (f", generator {draft.generator!r}" if draft.generator else "")
        + ")",
        f"sitemap: {draft.sitemap_page_count} pages; in scope: {draft.scope.pages_in_scope}",
        "",
        "Evidence:",
        *(f"  - {line}" for line in draft.evidence),
    ]
    if draft.warnings:
        lines += ["", "Warnings:", *(f"  ! {line}" for line in draft.warnings)]
    ratio = f"{p.page_text_ratio:.0%}"
    lines += [
        "",
        f"Preview of {p.url or draft.entry['start_urls'][0]} "
        f"({p.chars} characters, {ratio} of the page text, "
        f"code blocks {p.code_blocks_kept}/{p.code_blocks_total}, {p.headings} headings, "
        f"nav leak {p.nav_leak}):",
    ]
    if p.error:
        lines.append(f"  (extraction failed: {p.error})")
    else:
        lines += ["  | " + line for line in p.head(PREVIEW_LINES_TEXT).splitlines()]
        if len(p.markdown.splitlines()) > PREVIEW_LINES_TEXT:
            lines.append("  | ...")
    return "\n".join(lines) + "\n"
