"""Peak memory as the site grows: crawl synthetic sites of 20,000 and 100,000 linked pages.

    python benchmarks/bench_memory.py [--sizes 20000,100000]

The site is generated on the fly by an aiohttp server in its own process (so
its memory is not counted): page i links to pages 10i+1 .. 10i+10 (a tree, so
depth grows with size), to its neighbours and to ten "navigation" pages, like
a docs sidebar. Reports the crawler's peak RSS (largest process and the whole
process tree, parse pool included), wall and CPU time.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import VENV_BIN, run_measured, table


def _page(i: int, n: int) -> str:
    links = [j for j in range(10 * i + 1, 10 * i + 11) if j < n] + [max(0, i - 1), min(n - 1, i + 1)]
    nav = "".join(f'<li><a href="/docs/p{j}.html">Section {j}</a></li>' for j in range(10))
    body = "".join(f'<li><a href="/docs/p{j}.html">page {j}</a></li>' for j in links)
    return (
        f"<!DOCTYPE html><html><head><title>Page {i} - Synthetic docs</title></head><body>"
        f'<nav class="sidebar"><ul>{nav}</ul></nav><main><article><h1>Page {i}</h1>'
        f"<p>This is synthetic page number {i} of {n}. It explains option_{i} in some detail.</p>"
        f'<pre><code class="language-python">value_{i} = compute({i})\nprint(value_{i})</code></pre>'
        f"<h2>See also</h2><ul>{body}</ul></article></main></body></html>"
    )


def _serve(n: int, port_out: Any) -> None:
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if not (name.startswith("p") and name.endswith(".html") and name[1:-5].isdigit()):
            return web.Response(status=404)
        i = int(name[1:-5])
        if i >= n:
            return web.Response(status=404)
        return web.Response(text=_page(i, n), content_type="text/html")

    app = web.Application()
    app.router.add_get("/docs/{name}", handle)
    app.router.add_get("/robots.txt", lambda r: web.Response(text="User-agent: *\nAllow: /\n"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port_out.put(sock.getsockname()[1])
    web.run_app(app, sock=sock, print=None, access_log=None)


CONFIG = """\
output_base_dir: {work}/out
state_dir: {work}/state
num_workers: 16
max_requests: 16
max_requests_per_host: 16
http_client_settings:
  allow_private_networks: true
sites:
  synth:
    start_urls: ["http://127.0.0.1:{port}/docs/p0.html"]
    allowed_domain: 127.0.0.1
    allowed_path_prefix: /docs/
    use_sitemaps: false
"""


def measure(n: int) -> dict[str, Any]:
    queue: Any = multiprocessing.Queue()
    server = multiprocessing.Process(target=_serve, args=(n, queue), daemon=True)
    server.start()
    port = queue.get(timeout=30)
    try:
        with tempfile.TemporaryDirectory(prefix=f"bench-mem-{n}-") as tmp:
            work = Path(tmp)
            (work / "config.yaml").write_text(CONFIG.format(work=work, port=port))
            cmd = [
                str(VENV_BIN / "doc-scraper"),
                "crawl",
                "-config",
                str(work / "config.yaml"),
                "-site",
                "synth",
                "-loglevel",
                "error",
                "-no-progress",
            ]
            m = run_measured(cmd)
            pages = sum(1 for _ in (work / "out" / "synth").rglob("*.md"))
    finally:
        server.terminate()
        server.join(5)
    return {
        "site pages": n,
        "written": pages,
        "wall s": m.wall_s,
        "pages/s": pages / m.wall_s,
        "CPU s": m.cpu_s,
        "peak RSS MB": m.peak_rss_mb,
        "tree RSS MB": m.peak_tree_mb,
        "rc": m.returncode,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="20000,100000")
    args = ap.parse_args()
    rows = []
    t0 = time.monotonic()
    for n in (int(x) for x in args.sizes.split(",")):
        rows.append(measure(n))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    print("\n### Peak memory against site size (synthetic linked site)\n")
    print(
        table(
            rows, ["site pages", "written", "wall s", "pages/s", "CPU s", "peak RSS MB", "tree RSS MB", "rc"]
        )
    )
    if len(rows) >= 2:
        small, big = rows[0], rows[-1]
        print(
            f"\nlargest process: {big['peak RSS MB'] / small['peak RSS MB']:.2f}x from {small['site pages']} "
            f"to {big['site pages']} pages (target < 1.3x and < 300 MB)"
        )
    print(f"(bench_memory took {time.monotonic() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
