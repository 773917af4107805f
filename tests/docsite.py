"""A small docs site served by aiohttp on loopback, with knobs for fault injection.

Pages are generated Sphinx-like HTML kept in a dict, so tests can edit, add and
delete pages between crawls. The server records what it was asked, how many
requests overlapped, and the gaps between request arrivals per path.
"""

from __future__ import annotations

import asyncio
import hashlib
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

    def reset_counters(self) -> None:
        self.requests.clear()
        self.statuses.clear()
        self.body_bytes = 0
        self.arrivals.clear()
        self.max_active = 0

    def min_gap(self) -> float:
        page_arrivals = sorted(self.arrivals)
        gaps = [b - a for a, b in zip(page_arrivals, page_arrivals[1:], strict=False)]
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
            return self._page(path, request)
        finally:
            self.active -= 1

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
            return self._status(404)
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
