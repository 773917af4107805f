"""A small docs site served by aiohttp on loopback, with knobs for fault injection.

Pages are generated Sphinx-like HTML kept in a dict, so tests can edit, add and
delete pages between crawls. The server records what it was asked, how many
requests overlapped, and the gaps between request arrivals per path.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import random
import time
from collections import Counter
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.test_utils import TestServer


def page_html(title: str, body: str, links: list[str]) -> str:
    nav = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title} — Demo 1.0 documentation</title>
<link rel="stylesheet" href="_static/pygments.css"></head>
<body>
<div class="sphinxsidebar" role="navigation"><ul>{nav}</ul></div>
<div class="document"><div class="body" role="main">
<section id="{title.lower().replace(" ", "-")}">
<h1>{title}<a class="headerlink" href="#" title="Permalink to this heading">¶</a></h1>
<p>{body}</p>
<div class="highlight-python3 notranslate"><div class="highlight"><pre>print("{title}")</pre></div></div>
<p>Related: {" ".join(f'<a href="{h}">{h}</a>' for h in links)}</p>
</section></div></div>
<div class="footer">© Copyright Demo.</div>
</body></html>"""


@dataclass
class DocSite:
    """The site's content and its fault knobs; mutate between crawls."""

    pages: dict[str, str] = field(default_factory=dict)  # path -> html
    robots: str = "User-agent: *\nDisallow: /docs/private/\n"
    sitemap: list[str] | None = None  # paths listed in /sitemap.xml
    fail_first: dict[str, int] = field(default_factory=dict)  # path -> 503s before success
    rate_limited: dict[str, int] = field(default_factory=dict)  # path -> 429s (Retry-After: 0) first
    redirects: dict[str, str] = field(default_factory=dict)  # path -> target path (301)
    latency: float = 0.0
    requests: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    body_bytes: int = 0
    arrivals: list[float] = field(default_factory=list)
    active: int = 0
    max_active: int = 0
    user_agents: set[str] = field(default_factory=set)
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # path -> (body, content type)
    resets: dict[str, int] = field(default_factory=dict)  # path -> connections cut mid-body first
    # Random faults on page requests: each request fails with these odds, but one path
    # fails at most ``max_faults_per_path`` times in a row, so retries can succeed.
    fail_rate: float = 0.0  # 503
    reset_rate: float = 0.0  # connection closed mid-body
    max_faults_per_path: int = 2
    rate_limit_rps: float = 0.0  # page requests closer than 1/rps get 429 (Retry-After: 0)
    trap_prefix: str | None = None  # e.g. "/docs/cal/": /docs/cal/YYYY/MM links to next month forever
    seed: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    _streak: Counter[str] = field(default_factory=Counter)
    _last_page: float = 0.0
    _rng: random.Random = field(default_factory=random.Random)

    @classmethod
    def linked(cls, n: int, *, prefix: str = "/docs/") -> DocSite:
        """``n`` pages in a chain-and-star: index links to all, each links to the next."""
        site = cls()
        names = [f"p{i}.html" for i in range(n)]
        site.pages[prefix + "index.html"] = page_html("Index", "Start here.", names)
        for i, name in enumerate(names):
            nxt = [names[(i + 1) % n], "index.html"]
            site.pages[prefix + name] = page_html(f"Page {i}", f"Content of page number {i}.", nxt)
        return site

    def etag(self, path: str) -> str:
        return '"' + hashlib.sha1(self.pages[path].encode()).hexdigest()[:16] + '"'

    def __post_init__(self) -> None:
        self._rng.seed(self.seed)

    def reset_counters(self) -> None:
        self.requests.clear()
        self.statuses.clear()
        self.body_bytes = 0
        self.arrivals.clear()
        self.max_active = 0

    def min_gap(self) -> float:
        page_arrivals = sorted(self.arrivals)
        gaps = [b - a for a, b in itertools.pairwise(page_arrivals)]
        return min(gaps) if gaps else float("inf")

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.user_agents.add(request.headers.get("User-Agent", ""))
        if path == "/robots.txt":
            return web.Response(text=self.robots)
        if path == "/sitemap.xml":
            if self.sitemap is None:
                return self._status(404)
            host = f"http://{request.host}"
            locs = "".join(f"<url><loc>{host}{p}</loc></url>" for p in self.sitemap)
            body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
            return web.Response(text=body, content_type="application/xml")
        self.requests[path] += 1
        self.arrivals.append(time.monotonic())
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if self.latency:
                await asyncio.sleep(self.latency)
            fault = self._fault(path)
            if fault == "reset":
                return await self._reset(request)
            if fault:
                return self._status(int(fault), **({"Retry-After": "0"} if fault == "429" else {}))
            return self._page(path, request)
        finally:
            self.active -= 1

    def _fault(self, path: str) -> str:
        """The injected fault for this request: "reset", "503", "429" or ""."""
        if self.resets.get(path, 0) > 0:
            self.resets[path] -= 1
            return "reset"
        now = time.monotonic()
        if self.rate_limit_rps and now - self._last_page < 1.0 / self.rate_limit_rps:
            self.faults["429"] += 1
            return "429"
        self._last_page = now
        if self._streak[path] < self.max_faults_per_path and (self.fail_rate or self.reset_rate):
            if self._rng.random() < self.fail_rate:
                self._streak[path] += 1
                self.faults["503"] += 1
                return "503"
            if self._rng.random() < self.reset_rate:
                self._streak[path] += 1
                self.faults["reset"] += 1
                return "reset"
        self._streak[path] = 0
        return ""

    async def _reset(self, request: web.Request) -> web.StreamResponse:
        """Promise a body, send part of it, then close the connection."""
        resp = web.StreamResponse(headers={"Content-Type": "text/html", "Content-Length": "100000"})
        await resp.prepare(request)
        await resp.write(b"<!DOCTYPE html><html><head><title>cut")
        assert request.transport is not None
        request.transport.close()
        return resp

    def trap_page(self, path: str) -> str | None:
        """A calendar page under ``trap_prefix`` (``YYYY/MM``) linking to the next month, or None."""
        if not self.trap_prefix or not path.startswith(self.trap_prefix):
            return None
        parts = path[len(self.trap_prefix) :].strip("/").split("/")
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return None
        year, month = int(parts[0]), int(parts[1])
        if not 1 <= month <= 12:
            return None
        ny, nm = (year + 1, 1) if month == 12 else (year, month + 1)
        py, pm = (year - 1, 12) if month == 1 else (year, month - 1)
        links = [
            f"{self.trap_prefix}{ny:04d}/{nm:02d}",
            f"{self.trap_prefix}{py:04d}/{pm:02d}",
            f"{self.trap_prefix}{year:04d}/{month:02d}?session={self._rng.getrandbits(48):x}",
        ]
        return page_html(f"Events {year:04d}-{month:02d}", f"Nothing happens in {year} month {month}.", links)

    def _status(self, code: int, **headers: str) -> web.Response:
        self.statuses[code] += 1
        return web.Response(status=code, text=f"status {code}", headers=headers)

    def _page(self, path: str, request: web.Request) -> web.Response:
        if self.fail_first.get(path, 0) > 0:
            self.fail_first[path] -= 1
            return self._status(503)
        if self.rate_limited.get(path, 0) > 0:
            self.rate_limited[path] -= 1
            return self._status(429, **{"Retry-After": "0"})
        if path in self.redirects:
            self.statuses[301] += 1
            raise web.HTTPMovedPermanently(location=self.redirects[path])
        if path in self.files:
            body, ctype = self.files[path]
            self.statuses[200] += 1
            return web.Response(body=body, content_type=ctype)
        if path not in self.pages:
            trap = self.trap_page(path)
            if trap is None:
                return self._status(404)
            self.statuses[200] += 1
            return web.Response(text=trap, content_type="text/html")
        etag = self.etag(path)
        if request.headers.get("If-None-Match") == etag:
            return self._status(304, ETag=etag)
        self.statuses[200] += 1
        body = self.pages[path].encode()
        self.body_bytes += len(body)
        return web.Response(body=body, content_type="text/html", charset="utf-8", headers={"ETag": etag})


async def start(site: DocSite) -> TestServer:
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", site.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


class ThreadedServer:
    """The site served from its own thread and event loop.

    Timing checks need this: when server and crawler share one loop, a busy
    loop delays the server's view of arrivals and bunches them up.
    """

    def __init__(self, site: DocSite) -> None:
        import threading

        self.site = site
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.server: TestServer | None = None

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(start(self.site))
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> str:
        self.thread.start()
        self.ready.wait(10)
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}"

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        asyncio.run_coroutine_threadsafe(self.server.close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()
