"""The MCP server: eleven tools over the corpus and the crawl jobs, thin by design.

``build_server(config)`` returns an ``MCPServer`` named ``doc-scraper``; the
CLI runs it on stdio. Each tool validates its arguments through a typed input
schema (integers with bounds and defaults, site keys as an enum), returns a
dict that is published both as structured content (with an output schema)
and as JSON text, and turns every failure into a tool error whose message
says what to do next. Nothing a tool raises stops the server.

The work lives elsewhere: ``corpus.Corpus`` answers reads from the index,
``jobs.JobManager`` runs crawls as background tasks.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired, ParamSpec, TypeVar

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field, ValidationError
from typing_extensions import TypedDict  # pydantic needs it for output schemas on Python 3.11

from doc_scraper import __version__, api
from doc_scraper.corpus import (  # the TypedDicts are return annotations, read at runtime
    DEFAULT_LIST_LIMIT,
    DEFAULT_READ_BYTES,
    DEFAULT_SEARCH_LIMIT,
    MAX_LIST_LIMIT,
    MAX_QUERY_CHARS,
    MAX_READ_BYTES,
    MAX_SEARCH_LIMIT,
    Corpus,
    CrawlDiff,
    Freshness,
    LivePage,
    PageContent,
    PageList,
    SearchResults,
    SiteInfo,
    require_site,
)
from doc_scraper.errors import DocScraperError
from doc_scraper.jobs import CrawlFunction, Job, JobManager

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from doc_scraper.config.schema import Config

logger = logging.getLogger(__name__)

SERVER_NAME = "doc-scraper"
RECENT_JOBS = 20
CANCEL_WAIT_S = 5.0
TOOL_NAMES = (
    "describe_server",
    "list_sites",
    "crawl_site",
    "get_job_status",
    "cancel_crawl",
    "list_pages",
    "read_page",
    "search_docs",
    "get_freshness",
    "diff_crawl",
    "get_page",
)

INSTRUCTIONS = (
    "doc-scraper keeps crawled copies of documentation sites as Markdown with a full-text index. "
    "Call describe_server first to see the site keys and whether they have been crawled. "
    "To answer a question from the docs: search_docs, then read_page on the best url. "
    "If a site has never been crawled (or get_freshness shows it is old), call crawl_site and poll "
    "get_job_status until it completes. describe_server's search_mode says whether search_docs "
    "ranks by words only (lexical) or by words and meaning (hybrid)."
)

# -- argument types (module level: tool annotations are evaluated at registration) ------------------

SiteKey = Annotated[
    str,
    Field(min_length=1, max_length=200, description="A site key from the config, as listed by list_sites."),
]
JobId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100,
        description="The job_id returned by crawl_site (or listed by describe_server).",
    ),
]
PageUrl = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="The page URL exactly as returned by search_docs or list_pages.",
    ),
]
ListLimit = Annotated[int, Field(ge=1, le=MAX_LIST_LIMIT, description="How many entries to return.")]
Offset = Annotated[
    int,
    Field(
        ge=0,
        description="Entries (or bytes, for read_page) to skip; pass the next_offset of the previous call.",
    ),
]
ReadBytes = Annotated[
    int, Field(ge=1, le=MAX_READ_BYTES, description="Largest piece of the page to return, in UTF-8 bytes.")
]
Query = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description='What to look for: plain words (best), "a phrase", a OR b, '
        "prefix*, or an identifier such as asyncio.gather.",
    ),
]
SearchLimit = Annotated[int, Field(ge=1, le=MAX_SEARCH_LIMIT, description="How many results to return.")]
SearchMode = Annotated[
    Literal["auto", "lexical", "dense", "hybrid"],
    Field(
        description="auto (default): hybrid when the index has embeddings, else lexical. lexical: "
        "words and identifiers only (FTS5). dense: meaning only (embeddings). hybrid: both fused."
    ),
]
OptionalSiteKey = Annotated[
    str, Field(max_length=200, description="Restrict the search to this site key; omit for all sites.")
]
Since = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        description="RFC 3339 time, e.g. 2026-01-31T00:00:00Z: the baseline is the last "
        "crawl that finished at or before it.",
    ),
]
Selector = Annotated[
    str,
    Field(
        min_length=1,
        max_length=500,
        description="CSS selector of the content to convert, or 'auto' to detect "
        "the docs framework's main content.",
    ),
]


# -- output shapes not owned by the corpus ----------------------------------------------------------


class ServerInfo(TypedDict):
    name: str
    version: str
    config_path: str
    state_dir: str  # absolute: relative paths in the config resolve against the server's start directory
    output_base_dir: str


class JobBrief(TypedDict):
    job_id: str
    site_key: str
    status: str
    mode: str
    started_at: str
    pages_processed: int
    completed_at: NotRequired[str]
    error_message: NotRequired[str]


class SearchModeInfo(TypedDict):
    mode: str  # what search_docs uses by default: hybrid or lexical
    available_modes: list[str]
    reason: str
    semantic_installed: bool  # the optional embedding runtime (doc-scraper[semantic])
    index_has_vectors: bool
    embedded_sections: int
    indexed_sections: int
    embedding_model: NotRequired[str]


class ServerDescription(TypedDict):
    server: ServerInfo
    search_mode: SearchModeInfo
    sites: list[SiteInfo]
    recent_jobs: list[JobBrief]
    total_sites: int
    total_jobs: int
    jobs_capped: bool
    next_actions: list[str]


class SiteList(TypedDict):
    sites: list[SiteInfo]
    config_path: str
    total_sites: int


class CrawlStarted(TypedDict):
    status: str  # started | already_running
    message: str
    job_id: str
    site_key: str
    incremental: bool
    mode: str


class JobStatus(TypedDict):
    job_id: str
    site_key: str
    status: str
    mode: str
    incremental: bool
    started_at: str
    pages_processed: int
    pages_queued: int
    pages_failed: int
    cancel_requested: bool
    completed_at: NotRequired[str]
    duration_seconds: NotRequired[float]
    error_message: NotRequired[str]
    summary: NotRequired[dict[str, Any]]
    next_actions: list[str]


class CancelResult(TypedDict):
    job_id: str
    cancelled: bool
    site_key: str
    status: str
    message: str


class RunningJob(TypedDict):
    job_id: str
    started_at: str
    pages_processed: int
    pages_queued: int
    incremental: bool


class FreshnessReport(Freshness):
    running_job: NotRequired[RunningJob]
    next_actions: list[str]


class SearchReport(SearchResults):
    next_actions: list[str]


# -- helpers ----------------------------------------------------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")


def _tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Turn our errors into tool errors with their message; a crash becomes a tool error too."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except ToolError:
            raise
        except DocScraperError as exc:
            raise ToolError(str(exc)) from exc
        except Exception as exc:
            logger.exception("mcp.tool_crashed", extra={"tool": fn.__name__})
            raise ToolError(
                f"internal error in {fn.__name__}: {type(exc).__name__}: {exc}. The server is "
                "still running; retry, or report this with the server log."
            ) from exc

    return wrapper


def _job_brief(job: Job) -> JobBrief:
    brief: JobBrief = {
        "job_id": job.job_id,
        "site_key": job.site_key,
        "status": job.status,
        "mode": job.mode,
        "started_at": job.started_at,
        "pages_processed": job.pages_processed,
    }
    if job.completed_at:
        brief["completed_at"] = job.completed_at
    if job.error_message:
        brief["error_message"] = job.error_message
    return brief


def _job_status(job: Job) -> JobStatus:
    status: JobStatus = {
        "job_id": job.job_id,
        "site_key": job.site_key,
        "status": job.status,
        "mode": job.mode,
        "incremental": job.incremental,
        "started_at": job.started_at,
        "pages_processed": job.pages_processed,
        "pages_queued": job.pages_queued,
        "pages_failed": job.pages_failed,
        "cancel_requested": job.cancel_requested,
        "next_actions": [],
    }
    if job.completed_at:
        status["completed_at"] = job.completed_at
    duration = job.duration_seconds()
    if duration is not None:
        status["duration_seconds"] = duration
    if job.error_message:
        status["error_message"] = job.error_message
    if job.summary is not None:
        status["summary"] = job.summary
    key = job.site_key
    if job.status in ("pending", "running"):
        status["next_actions"] = [
            f"poll get_job_status(job_id={job.job_id!r}) again in a few seconds",
            f"cancel_crawl(job_id={job.job_id!r}) to stop it",
        ]
    elif job.status == "completed":
        status["next_actions"] = [
            f"search_docs(query=..., site_key={key!r})",
            f"list_pages(site_key={key!r})",
            f"get_freshness(site_key={key!r})",
        ]
    else:
        status["next_actions"] = [
            f"crawl_site(site_key={key!r}, resume=true) to continue this crawl",
            f"crawl_site(site_key={key!r}) to start over",
        ]
    return status


def _search_mode_info(status: api.SearchStatus) -> SearchModeInfo:
    info: SearchModeInfo = {
        "mode": status.mode,
        "available_modes": list(status.available_modes),
        "reason": status.reason,
        "semantic_installed": status.semantic_installed,
        "index_has_vectors": status.index_has_vectors,
        "embedded_sections": status.embedded_sections,
        "indexed_sections": status.indexed_sections,
    }
    if status.embedding_model:
        info["embedding_model"] = status.embedding_model
    return info


async def _search_status(corpus: Corpus) -> api.SearchStatus:
    try:
        return await asyncio.to_thread(api.index_search_status, corpus.index_path)
    except DocScraperError as exc:  # a damaged index must not hide the rest of describe_server
        return api.SearchStatus("lexical", str(exc), semantic_installed=False, index_has_vectors=False)


def _annotations(
    title: str, *, read_only: bool = True, idempotent: bool = True, open_world: bool = False
) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=False,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


class DocScraperMCPServer(MCPServer[None]):
    """``MCPServer`` with argument errors a model can act on.

    The SDK reports a schema violation as a raw pydantic dump and ignores
    unknown argument names; here both become one short message naming the
    argument, what is allowed and what was sent.
    """

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            raise ToolError(f"unknown tool {name!r}; the tools are: {', '.join(TOOL_NAMES)}")
        accepted = set(tool.parameters.get("properties", {}))
        unknown = sorted(set(arguments) - accepted)
        if unknown:
            raise ToolError(
                f"{name}: unknown argument(s) {', '.join(unknown)}; "
                f"accepted: {', '.join(sorted(accepted)) or 'none'}"
            )
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(_explain_validation(name, cause)) from cause
            raise


def _explain_validation(tool: str, error: ValidationError) -> str:
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item.get("loc", ())) or "arguments"
        got = item.get("input")
        shown = "" if item.get("type") == "missing" else f" (got {got!r:.80})"
        problems.append(f"{where}: {item.get('msg', 'invalid')}{shown}")
    return f"invalid arguments for {tool}: " + "; ".join(problems) + ". Fix them and call again."


# -- the server -------------------------------------------------------------------------------------


def build_server(
    config: Config,
    *,
    crawl: CrawlFunction | None = None,
    jobs: JobManager | None = None,
    corpus: Corpus | None = None,
) -> DocScraperMCPServer:
    """The ``doc-scraper`` MCP server for ``config`` (``crawl`` replaces the engine in tests)."""
    jobs = jobs or JobManager.from_config(config, crawl=crawl)
    corpus = corpus or Corpus.from_config(config)
    tools = _make_tools(config, jobs, corpus)
    relative = {
        key: str(Path(getattr(config, key)).absolute())
        for key in ("state_dir", "output_base_dir")
        if not Path(getattr(config, key)).is_absolute()
    }

    @asynccontextmanager
    async def lifespan(_server: MCPServer[None]) -> AsyncIterator[None]:
        await jobs.open()
        logger.info("mcp.started", extra={"config_path": config.path, "sites": len(config.sites)})
        if relative:
            # Agents start servers from a directory of their choosing: say where the data is looked for.
            logger.warning(
                "mcp.relative_paths",
                extra={**relative, "hint": "use absolute paths in the config given to coding agents"},
            )
        try:
            yield None
        finally:
            await jobs.close()
            await corpus.close()
            logger.info("mcp.stopped")

    return DocScraperMCPServer(
        SERVER_NAME,
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=tools,
        lifespan=lifespan,
    )


def _make_tools(config: Config, jobs: JobManager, corpus: Corpus) -> list[Tool]:
    site_keys = sorted(config.sites)
    state_dir = str(Path(config.state_dir).absolute())
    output_base_dir = str(Path(config.output_base_dir).absolute())

    def running_status(sites: list[SiteInfo]) -> list[SiteInfo]:
        for info in sites:
            if jobs.active_job(info["key"]) is not None:
                info["status"] = "running"
        return sites

    @_tool_errors
    async def describe_server() -> ServerDescription:
        recent = jobs.recent(RECENT_JOBS)
        sites = running_status(await corpus.list_sites())
        status = await _search_status(corpus)
        uncrawled = [s["key"] for s in sites if not s.get("last_crawled")]
        actions = ["search_docs(query=...) to search every crawled site"]
        if uncrawled:
            actions.append(f"crawl_site(site_key={uncrawled[0]!r}) - not crawled yet: {', '.join(uncrawled)}")
        actions.append("get_freshness(site_key=...) before relying on an old crawl")
        return {
            "server": {
                "name": SERVER_NAME,
                "version": __version__,
                "config_path": config.path,
                "state_dir": state_dir,
                "output_base_dir": output_base_dir,
            },
            "search_mode": _search_mode_info(status),
            "sites": sites,
            "recent_jobs": [_job_brief(j) for j in recent],
            "total_sites": len(sites),
            "total_jobs": jobs.total_jobs,
            "jobs_capped": jobs.total_jobs > len(recent),
            "next_actions": actions,
        }

    @_tool_errors
    async def list_sites() -> SiteList:
        sites = running_status(await corpus.list_sites())
        return {"sites": sites, "config_path": config.path, "total_sites": len(sites)}

    @_tool_errors
    async def crawl_site(site_key: SiteKey, incremental: bool = False, resume: bool = False) -> CrawlStarted:
        require_site(config, site_key)
        if incremental and resume:
            raise ToolError(
                "choose one of incremental (re-check a finished crawl) and resume "
                "(continue an interrupted one), not both"
            )
        mode = "resume" if resume else "incremental" if incremental else "full"
        job, started = await jobs.start(site_key.strip(), mode=mode)
        if started:
            message = (
                f"{mode} crawl of {job.site_key!r} started in the background; poll "
                f"get_job_status(job_id={job.job_id!r}) until status is completed"
            )
        else:
            message = (
                f"a {job.mode} crawl of {job.site_key!r} is already running (job {job.job_id}); "
                "poll get_job_status for it, or cancel_crawl it first"
            )
        return {
            "status": "started" if started else "already_running",
            "message": message,
            "job_id": job.job_id,
            "site_key": job.site_key,
            "incremental": job.incremental,
            "mode": job.mode,
        }

    @_tool_errors
    async def get_job_status(job_id: JobId) -> JobStatus:
        return _job_status(jobs.get(job_id))

    @_tool_errors
    async def cancel_crawl(job_id: JobId) -> CancelResult:
        job, requested = await jobs.cancel(job_id, wait=CANCEL_WAIT_S)
        if requested and job.status == "cancelled":
            message = "the crawl stopped; its state is kept: crawl_site with resume=true continues it"
        elif requested or (job.cancel_requested and not job.finished):
            message = (
                "stop requested; in-flight pages are finishing. Poll get_job_status until status "
                "is cancelled; crawl_site with resume=true continues it later"
            )
        else:
            message = f"the job had already ended with status {job.status}; nothing to cancel"
        cancelled = job.status == "cancelled" or (requested and not job.finished)
        return {
            "job_id": job.job_id,
            "cancelled": cancelled,
            "site_key": job.site_key,
            "status": job.status if job.finished else "cancelling",
            "message": message,
        }

    @_tool_errors
    async def list_pages(
        site_key: SiteKey, max_results: ListLimit = DEFAULT_LIST_LIMIT, offset: Offset = 0
    ) -> PageList:
        return await corpus.list_pages(site_key, max_results=max_results, offset=offset)

    @_tool_errors
    async def read_page(
        site_key: SiteKey, url: PageUrl, max_bytes: ReadBytes = DEFAULT_READ_BYTES, offset: Offset = 0
    ) -> PageContent:
        return await corpus.read_page(site_key, url, max_bytes=max_bytes, offset=offset)

    @_tool_errors
    async def search_docs(
        query: Query,
        site_key: OptionalSiteKey = "",
        limit: SearchLimit = DEFAULT_SEARCH_LIMIT,
        mode: SearchMode = "auto",
    ) -> SearchReport:
        found = await corpus.search(
            query, site_key=site_key.strip() or None, limit=limit, mode=api.check_search_mode(mode)
        )
        actions = ["read_page(site_key=<result site_key>, url=<result url>) for the full text"]
        if not found["results"]:
            actions = ["retry with fewer or other words", "list_sites to check which sites are crawled"]
            if found["mode"] == "lexical":
                actions.append("describe_server: search_mode says whether hybrid (meaning) search can be on")
        return {**found, "next_actions": actions}

    @_tool_errors
    async def get_freshness(site_key: SiteKey) -> FreshnessReport:
        fresh = await corpus.freshness(site_key)
        report: FreshnessReport = {**fresh, "next_actions": []}  # type: ignore[typeddict-item]
        job = jobs.active_job(fresh["site_key"])
        if job is not None:
            report["running_job"] = {
                "job_id": job.job_id,
                "started_at": job.started_at,
                "pages_processed": job.pages_processed,
                "pages_queued": job.pages_queued,
                "incremental": job.incremental,
            }
            report["next_actions"] = [f"get_job_status(job_id={job.job_id!r})"]
        elif "last_crawl_id" not in fresh:
            report["next_actions"] = [f"crawl_site(site_key={site_key!r}) - the site was never crawled"]
        else:
            report["next_actions"] = [
                f"crawl_site(site_key={site_key!r}, incremental=true) to refresh it",
                f"diff_crawl(site_key={site_key!r}, since=...) to see what changed",
            ]
        return report

    @_tool_errors
    async def diff_crawl(
        site_key: SiteKey, since: Since, max_results: ListLimit = DEFAULT_LIST_LIMIT, offset: Offset = 0
    ) -> CrawlDiff:
        return await corpus.diff(site_key, since, max_results=max_results, offset=offset)

    @_tool_errors
    async def get_page(url: PageUrl, content_selector: Selector = "auto") -> LivePage:
        return await corpus.fetch_live(url.strip(), content_selector=content_selector)

    specs: list[tuple[Callable[..., Awaitable[Any]], str, ToolAnnotations]] = [
        (
            describe_server,
            (
                "Start here. Returns this server's name and version, the search mode search_docs uses "
                "(hybrid or lexical, and why), every configured documentation site "
                "(key, domain, indexed page count, when it was last crawled, whether a crawl runs now) and "
                "the 20 most recent crawl jobs, plus suggested next calls. Use the site keys with "
                "search_docs, list_pages, read_page and crawl_site."
            ),
            _annotations("Describe this server"),
        ),
        (
            list_sites,
            (
                "List the configured documentation sites: key, domain, path prefix, start URLs, depth and "
                "page limits, pages in the index and last crawl time. A site with pages 0 has not been "
                "crawled: call crawl_site for it before searching it."
            ),
            _annotations("List configured sites"),
        ),
        (
            crawl_site,
            (
                "Start crawling one site in the background and return a job_id at once (a crawl takes "
                "seconds to many minutes). Then poll get_job_status until status is completed, and use "
                "search_docs / read_page. incremental=true re-checks an already crawled site and only "
                "downloads pages that changed; resume=true continues a crawl that was cancelled or "
                "interrupted. If the site is already being crawled, returns status already_running with "
                "that job's id instead of starting a second crawl."
            ),
            _annotations("Start a crawl", read_only=False, idempotent=False, open_world=True),
        ),
        (
            get_job_status,
            (
                "Report a crawl job's progress: status (pending, running, completed, failed, cancelled), "
                "pages processed and still queued, failures, timing and, once finished, how many pages were "
                "added, changed or removed, or the error. Poll every few seconds while pending or running."
            ),
            _annotations("Check a crawl job"),
        ),
        (
            cancel_crawl,
            (
                "Stop a running crawl job. Pages in flight finish and the crawl state is kept, so "
                "crawl_site with resume=true continues later. Returns the job's status afterwards "
                "(cancelled, or cancelling while the last pages finish). A finished job is left as it is."
            ),
            _annotations("Cancel a crawl job", read_only=False),
        ),
        (
            list_pages,
            (
                "List the pages stored from a site's latest crawl, sorted by URL: url, title, link depth, "
                "crawl time and Markdown size in characters. Page through with offset (use next_offset). "
                "Pass a url to read_page to read it. To find pages about a topic, search_docs is better."
            ),
            _annotations("List crawled pages"),
        ),
        (
            read_page,
            (
                "Read one crawled page as Markdown from the stored crawl (no network access). Long pages "
                "come in pieces of at most max_bytes, cut between characters (preferably at a line end): "
                "when truncated is true, call again with offset=next_offset. The url must come from "
                "search_docs or list_pages (a trailing slash or index.html difference is tolerated)."
            ),
            _annotations("Read a crawled page"),
        ),
        (
            search_docs,
            (
                "Search the crawled documentation by page section: BM25 over words, with exact matches on "
                "identifiers such as asyncio.gather, fused with meaning (embeddings) when the index has "
                "them (mode auto/hybrid; lexical or dense to compare). Returns the best sections with site "
                "key, url, title, heading path, anchor and a snippet with the matched terms in [brackets], "
                "and the mode that answered. Then call read_page with a result's site_key and url for the "
                "full text. Omit site_key to search every site."
            ),
            _annotations("Search crawled docs"),
        ),
        (
            get_freshness,
            (
                "Tell how current a site's crawled copy is: the latest crawl's id, start and end time, mode "
                "and page count, its age in seconds, whether the output exists, and any crawl job running "
                "now. Use it to decide whether to refresh with crawl_site(incremental=true)."
            ),
            _annotations("Check crawl freshness"),
        ),
        (
            diff_crawl,
            (
                "Compare a site's latest crawl with the last crawl that finished at or before `since`: "
                "pages added, removed and changed (old and new content hashes) and the number unchanged, "
                "sorted by kind then URL and paged with offset/max_results. Use it to learn what changed in "
                "the docs since a date; get_freshness shows crawl times."
            ),
            _annotations("Diff crawls over time"),
        ),
        (
            get_page,
            (
                "Fetch a URL live from the web now and return its main content as Markdown (nothing is "
                "stored or indexed). Goes through the crawler's guarded fetcher: obeys robots.txt, refuses "
                "private and loopback addresses unless the config allows them, retries transient errors "
                "and waits between requests to one host. Prefer search_docs / read_page for crawled sites; "
                "use this for other pages or to check the live version of one."
            ),
            _annotations("Fetch a page live", open_world=True),
        ),
    ]
    tools: list[Tool] = []
    for fn, description, hints in specs:
        tool = Tool.from_function(
            fn,
            name=fn.__name__,
            title=hints.title,
            description=description,
            annotations=hints,
            structured_output=True,
        )
        props = tool.parameters.get("properties", {})
        for name in ("site_key",):
            if name in props and site_keys:
                allowed = site_keys + ([""] if fn is search_docs else [])
                props[name]["enum"] = allowed
        tools.append(tool)
    return tools


def tool_result_text(result: CallToolResult) -> str:
    """The text of a tool result (tests and the CLI use it to show errors)."""
    return "\n".join(getattr(block, "text", "") for block in result.content)
