"""Probe a docs site politely for ``add``: robots.txt, the seed page, /llms.txt and the sitemap.

Requests go one at a time through the crawl's own ``Fetcher`` (SSRF guard, retries, size
caps), with the site's User-Agent and robots ``Crawl-delay`` honoured, inside one overall
time budget. Nothing is written; the result feeds ``scope.propose_scope`` and ``draft``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

from doc_scraper.errors import BlockedError, ConfigError, FetchError, HTTPStatusError
from doc_scraper.fetch.fetcher import Fetcher, is_html
from doc_scraper.fetch.limits import HostLimits
from doc_scraper.fetch.retry import RetryPolicy
from doc_scraper.fetch.session import make_session
from doc_scraper.frontier.robots import RobotsRules
from doc_scraper.urls import origin

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import aiohttp

    from doc_scraper.config.schema import Config
    from doc_scraper.models import FetchResult

logger = logging.getLogger(__name__)

PROBE_BUDGET_S = 180.0
PAGE_MAX_BYTES = 8 * 1024 * 1024
ROBOTS_MAX_BYTES = 512 * 1024
SITEMAP_LOCATIONS = ("/sitemap.xml", "/sitemap-index.xml", "/sitemap_index.xml")
SITEMAP_URL_CAP = 50_000
LLMS_TXT_CORROBORATES = 30
AI_AGENTS = (
    "gptbot", "chatgpt-user", "claudebot", "claude-web", "anthropic-ai", "ccbot",
    "google-extended", "perplexitybot", "bytespider",
)  # fmt: skip
_MD_LINK = re.compile(r"\[[^\]]*\]\((https?://[^)\s]+|/[^)\s]*)\)")


@dataclass(frozen=True, slots=True)
class RobotsInfo:
    """What robots.txt said about the seed."""

    url: str
    status: int = 0  # 0: could not be fetched
    allowed: bool = True
    sitemaps: tuple[str, ...] = ()
    crawl_delay: float | None = None
    ai_restricted: tuple[str, ...] = ()  # AI agents disallowed from the whole site
    content_signal: str = ""  # a Content-Signal line, e.g. "ai-input=no"


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """Everything fetched for ``add``; ``page`` is the seed after redirects."""

    seed_url: str
    page: FetchResult
    robots: RobotsInfo
    llms_txt_links: int = 0
    sitemap_url: str = ""
    sitemap_urls: tuple[str, ...] = ()
    sitemap_note: str = ""
    requests: int = 0
    evidence: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def final_url(self) -> str:
        return self.page.final_url


def normalize_seed(url: str) -> str:
    """Add ``https://`` when the scheme is missing; refuse what cannot be a web page."""
    text = url.strip()
    if not text:
        raise ConfigError("add needs a URL, e.g. doc-scraper add https://docs.example.com/")
    if "://" not in text:
        text = "https://" + text
    parts = urlsplit(text)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{url!r} is not an http(s) URL; give the docs home page, e.g. https://docs.example.com/"
        )
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", parts.query, ""))


def parse_robots(text: str, url: str, user_agent: str) -> RobotsInfo:
    """Evaluate robots.txt for ``url`` (as ``user_agent`` and as ``doc-scraper``)."""
    rules = RobotsRules.parse(text)
    allowed = rules.can_fetch(url, user_agent) and rules.can_fetch(url, "doc-scraper")
    site_root = urljoin(url, "/")
    restricted = tuple(
        agent for agent in AI_AGENTS if _names_agent(text, agent) and not rules.can_fetch(site_root, agent)
    )
    signal = ""
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-signal" and value.strip():
            signal = value.strip()
    return RobotsInfo(
        url=urljoin(url, "/robots.txt"),
        status=200,
        allowed=allowed,
        sitemaps=tuple(dict.fromkeys(rules.sitemaps)),
        crawl_delay=rules.crawl_delay(user_agent) or None,
        ai_restricted=restricted,
        content_signal=signal,
    )


def _names_agent(text: str, agent: str) -> bool:
    return re.search(r"(?im)^\s*user-agent\s*:\s*" + re.escape(agent) + r"\s*$", text) is not None


def count_llms_links(text: str) -> int:
    """Markdown links in an llms.txt; 0 when the body looks like an HTML page (a soft 404)."""
    head = text[:512].lstrip().lower()
    if head.startswith(("<!doctype", "<html", "<?xml")):
        return 0
    return len(_MD_LINK.findall(text))


class Prober:
    """One probe: a private session and fetcher, requests made one by one."""

    def __init__(self, config: Config, *, user_agent: str) -> None:
        self.config = config
        self.user_agent = user_agent
        self.delay = max(0.0, config.default_delay_per_host)
        self.requests = 0
        self.evidence: list[str] = []
        self.warnings: list[str] = []
        self._fetcher: Fetcher | None = None
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> Prober:
        self._session = make_session(self.config)
        retry = RetryPolicy(max_retries=min(self.config.max_retries, 2), initial_delay=0.5, max_delay=5.0)
        self._fetcher = Fetcher(
            self._session,
            HostLimits(1, 1, 0.0),
            retry,
            max_redirects=self.config.max_redirects,
            allow_private_networks=self.config.http_client_settings.allow_private_networks,
        )
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._session is not None:
            await self._session.close()
        self._session = None
        self._fetcher = None

    async def run(self, seed: str) -> ProbeResult:
        """robots.txt, the seed page, /llms.txt and the sitemap (inside ``async with``)."""
        return await self._probe(seed)

    async def _probe(self, seed: str) -> ProbeResult:
        # 1. robots.txt of the seed's origin
        robots = await self.robots_for(seed)
        if not robots.allowed:
            raise BlockedError(
                seed,
                f"robots.txt at {robots.url} disallows this path for {self.user_agent!r}; "
                "doc-scraper will not crawl it",
                reason="robots",
            )
        # 2. the seed page
        page = await self.fetch_page(seed)
        if urlsplit(page.final_url).netloc != urlsplit(seed).netloc:
            self.warnings.append(
                f"{seed} redirects to another host: {page.final_url}; the draft uses the new host"
            )
            robots = await self.robots_for(page.final_url)
            if not robots.allowed:
                raise BlockedError(
                    page.final_url, f"robots.txt at {robots.url} disallows this path", reason="robots"
                )
        elif page.final_url != seed:
            self.evidence.append(f"start URL: {seed} redirects to {page.final_url}")
        # 3. /llms.txt
        llms = await self.llms_txt(page.final_url)
        # 4. the sitemap: robots-declared first, then the usual places
        sitemap_url, urls, note = await self.sitemap(page.final_url, robots.sitemaps)
        return ProbeResult(
            seed_url=seed,
            page=page,
            robots=robots,
            llms_txt_links=llms,
            sitemap_url=sitemap_url,
            sitemap_urls=tuple(urls),
            sitemap_note=note,
            requests=self.requests,
            evidence=tuple(self.evidence),
            warnings=tuple(self.warnings),
        )

    async def _get(self, url: str, *, max_bytes: int, truncate: bool = False) -> FetchResult:
        assert self._fetcher is not None
        self.requests += 1
        return await self._fetcher.fetch_bytes(
            url, user_agent=self.user_agent, max_bytes=max_bytes, delay=self.delay, truncate=truncate
        )

    async def robots_for(self, url: str) -> RobotsInfo:
        robots_url = urljoin(url, "/robots.txt")
        try:
            result = await self._get(robots_url, max_bytes=ROBOTS_MAX_BYTES, truncate=True)
        except HTTPStatusError as exc:
            if 400 <= exc.status < 500:
                self.evidence.append(f"robots.txt: HTTP {exc.status}, so every path is allowed")
                return RobotsInfo(url=robots_url, status=exc.status)
            raise FetchError(
                robots_url, f"robots.txt answered HTTP {exc.status}; try again later (crawlers must wait)"
            ) from exc
        text = result.body.decode("utf-8", "replace")
        info = parse_robots(text, url, self.user_agent)
        if info.crawl_delay:
            self.delay = max(self.delay, info.crawl_delay)
        note = f"robots.txt: the seed path is {'allowed' if info.allowed else 'disallowed'}"
        if info.sitemaps:
            note += f"; declares {len(info.sitemaps)} sitemap(s)"
        if info.crawl_delay:
            note += f"; Crawl-delay {info.crawl_delay:g}s"
        self.evidence.append(note)
        if info.ai_restricted:
            self.warnings.append(
                "robots.txt shuts out AI crawlers ("
                + ", ".join(info.ai_restricted)
                + "): the site owner may not "
                "want its docs fed to AI tools; check the site's terms before using the crawl that way"
            )
        if "ai-input=no" in info.content_signal.replace(" ", "").lower():
            self.warnings.append(f"robots.txt Content-Signal: {info.content_signal} (no AI input wanted)")
        return info

    async def fetch_page(self, url: str) -> FetchResult:
        assert self._fetcher is not None
        self.requests += 1
        try:
            page = await self._fetcher.fetch(
                url, user_agent=self.user_agent, delay=self.delay, max_bytes=PAGE_MAX_BYTES
            )
        except HTTPStatusError as exc:
            if exc.status in (401, 403, 429):
                raise FetchError(
                    url,
                    f"HTTP {exc.status}: the site refuses automated clients (bot protection or login); "
                    "doc-scraper cannot crawl it",
                ) from exc
            raise
        if page.status != 200:
            raise FetchError(url, f"HTTP {page.status}; give the URL of a page that loads")
        if not is_html(page.content_type):
            raise FetchError(url, f"the page is {page.content_type}, not HTML; give the docs home page")
        return page

    async def llms_txt(self, url: str) -> int:
        llms_url = urljoin(url, "/llms.txt")
        try:
            result = await self._get(llms_url, max_bytes=PAGE_MAX_BYTES, truncate=True)
        except (HTTPStatusError, BlockedError):
            return 0
        except FetchError as exc:
            logger.debug("add.llms_txt_failed", extra={"url": llms_url, "error": str(exc)})
            return 0
        links = count_llms_links(result.body.decode("utf-8", "replace"))
        if links:
            corroborates = " (enough to corroborate the sitemap)" if links >= LLMS_TXT_CORROBORATES else ""
            self.evidence.append(f"/llms.txt lists {links} links{corroborates}")
        return links

    async def sitemap(self, url: str, declared: tuple[str, ...]) -> tuple[str, list[str], str]:
        """URLs of the site's sitemap(s): robots-declared first, then the usual locations.

        The crawl's own reader does the work (gzip sniffing, indexes followed, streaming
        ``<loc>`` parsing, caps on size and URL count); each file is fetched at most once.
        """
        from doc_scraper.frontier.sitemaps import discover_sitemaps

        fetched: dict[str, FetchResult | FetchError] = {}

        async def fetch_once(url: str, *, user_agent: str, max_bytes: int, truncate: bool) -> FetchResult:
            if url not in fetched:
                try:
                    fetched[url] = await self._get(url, max_bytes=max_bytes, truncate=truncate)
                except FetchError as exc:
                    fetched[url] = exc
            outcome = fetched[url]
            if isinstance(outcome, FetchError):
                raise outcome
            return outcome

        site = origin(url)
        tries = [list(declared), [urljoin(url, path) for path in SITEMAP_LOCATIONS[1:]]]
        for candidates in tries:
            entries = await discover_sitemaps(
                fetch_once, site, candidates, user_agent=self.user_agent, max_urls=SITEMAP_URL_CAP
            )
            urls = list(dict.fromkeys(entry.loc for entry in entries))
            if urls:
                found = [u for u, r in fetched.items() if not isinstance(r, FetchError) and r.status == 200]
                source = "declared in robots.txt" if candidates is tries[0] and declared else "usual location"
                note = f"sitemap ({source}; {len(found)} file(s) read): {len(urls)} URLs"
                if len(urls) >= SITEMAP_URL_CAP:
                    note += f" (stopped at {SITEMAP_URL_CAP})"
                self.evidence.append(note)
                return (found[0] if found else ""), urls, note
        self.evidence.append("no sitemap found (robots.txt Sitemap lines, /sitemap.xml, /sitemap_index.xml)")
        return "", [], ""


def make_prober(config: Config, *, user_agent: str | None = None) -> Prober:
    """A ``Prober`` for ``config``'s client settings; use it as ``async with``."""
    probe_config = replace(config, max_requests=max(1, config.max_requests))
    return Prober(probe_config, user_agent=user_agent or config.default_user_agent)


async def probe_site(
    url: str, config: Config, *, user_agent: str | None = None, budget_s: float = PROBE_BUDGET_S
) -> ProbeResult:
    """Probe ``url`` with the config's client settings; raise ``FetchError``/``BlockedError`` on refusal."""
    seed = normalize_seed(url)
    async with within_budget(seed, budget_s), make_prober(config, user_agent=user_agent) as prober:
        return await prober.run(seed)


@contextlib.asynccontextmanager
async def within_budget(seed: str, budget_s: float) -> AsyncIterator[None]:
    """Turn running out of ``budget_s`` into a ``FetchError`` that says so."""
    try:
        async with asyncio.timeout(budget_s):
            yield
    except FetchError:
        raise  # FetchTimeout is a TimeoutError too: keep its own message
    except TimeoutError as exc:
        raise FetchError(
            seed, f"probing took longer than {budget_s:g}s; the site is too slow to add now"
        ) from exc


__all__ = [
    "ProbeResult",
    "Prober",
    "RobotsInfo",
    "count_llms_links",
    "make_prober",
    "normalize_seed",
    "parse_robots",
    "probe_site",
    "within_budget",
]
