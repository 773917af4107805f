"""``doc-scraper watch`` flags, site selection and signal handling, with an injected crawl function."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

import pytest

from doc_scraper.cli import watch as watch_cli
from doc_scraper.errors import ConfigError
from doc_scraper.models import CrawlSummary

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from doc_scraper.watch import CrawlFn

CONFIG = """\
state_dir: {state}
sites:
  alpha:
    start_urls: ["http://127.0.0.1:9/docs/"]
    allowed_domain: 127.0.0.1
  beta:
    start_urls: ["http://127.0.0.1:9/beta/"]
    allowed_domain: 127.0.0.1
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG.format(state=tmp_path / "state"))
    return path


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    watch_cli.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize("interval", ["0", "0s", "-1h", "tomorrow", "1d1d", ""])
def test_zero_negative_and_garbage_intervals_exit_with_a_config_error(
    config_file: Path, interval: str
) -> None:
    with pytest.raises(ConfigError, match="-interval"):
        watch_cli.run(_args("-config", str(config_file), "-site", "alpha", f"-interval={interval}"))


def test_a_negative_interval_given_as_a_separate_word_is_rejected_by_our_check_not_argparse(
    config_file: Path,
) -> None:
    from doc_scraper.cli import main

    assert main(["watch", "-config", str(config_file), "-site", "alpha", "-interval", "-1h"]) == 1


def test_an_unknown_site_key_is_named_with_the_available_ones(config_file: Path) -> None:
    with pytest.raises(ConfigError, match=r"site 'gamma' not found.*alpha, beta"):
        watch_cli.run(_args("-config", str(config_file), "-site", "gamma"))


def test_watch_without_a_site_selection_says_how_to_choose(config_file: Path) -> None:
    with pytest.raises(ConfigError, match="-all-sites"):
        watch_cli.run(_args("-config", str(config_file)))


def test_a_second_watcher_on_the_same_state_dir_is_refused(config_file: Path, tmp_path: Path) -> None:
    from doc_scraper.errors import StateError
    from doc_scraper.watch import watch_lock

    async def crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        raise AssertionError("must not crawl")

    with watch_lock(tmp_path / "state"), pytest.raises(StateError, match="another watch is running"):
        watch_cli.run(_args("-config", str(config_file), "-site", "alpha"), crawl=crawl)
    with watch_lock(tmp_path / "state") as lock:  # released on the way out: it can be taken again
        assert lock.read_text().strip() == str(os.getpid())


def test_all_sites_wins_over_site_like_crawl(config_file: Path) -> None:
    from doc_scraper.config.load import load_config

    args = _args("-config", str(config_file), "-site", "alpha", "-all-sites")
    assert watch_cli.select_site_keys(args, load_config(config_file)) == ["alpha", "beta"]


def test_sigterm_during_a_crawl_stops_cleanly_exits_0_and_keeps_the_site_resumable(
    config_file: Path, tmp_path: Path
) -> None:
    calls: list[list[str]] = []

    async def crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        calls.append(keys)
        os.kill(os.getpid(), signal.SIGTERM)  # as `kill PID` would, mid-crawl
        await asyncio.wait_for(stop.wait(), 5)
        return [CrawlSummary(site_key=k, ok=False, mode="incremental", interrupted=True) for k in keys]

    code = watch_cli.run(
        _args("-config", str(config_file), "-sites", "alpha,beta", "-interval", "1h"), crawl=crawl
    )
    assert code == 0
    assert calls == [["alpha", "beta"]]
    state = json.loads((tmp_path / "state" / "watch_state.json").read_text())
    assert state["sites"]["alpha"]["interrupted"] is True
    assert state["sites"]["alpha"]["last_run_time"] == ""
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # handlers removed on the way out


def test_a_finished_batch_is_saved_before_the_watcher_sleeps(config_file: Path, tmp_path: Path) -> None:
    async def crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        out = [CrawlSummary(site_key=k, ok=k == "alpha", mode="incremental", pages=7, error="") for k in keys]
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGINT)  # stop during the sleep
        return out

    code = watch_cli.run(_args("-config", str(config_file), "-all-sites", "-interval", "30m"), crawl=crawl)
    assert code == 0
    state = json.loads((tmp_path / "state" / "watch_state.json").read_text())
    assert state["sites"]["alpha"]["last_run_success"] is True
    assert state["sites"]["alpha"]["pages_processed"] == 7
    assert state["sites"]["beta"]["last_run_success"] is False
    assert state["sites"]["beta"]["error_message"] == "crawl failed"


# ---------------------------------------------------------------- with the real engine

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><meta name="generator" content="Sphinx 7.2.6">
<title>{name} - Demo documentation</title></head><body><div class="document"><div class="body" role="main">
<h1>{name}</h1><p>{name} is a page of the demo documentation with enough prose to be taken as content by
the extractor, which wants a couple of hundred characters before it trusts a region.</p>
<p>{links}</p></div></div></body></html>"""


class _Site:
    def __init__(self, pages: int) -> None:
        names = [f"p{i}" for i in range(pages)]
        links = " ".join(f'<a href="/docs/{n}.html">{n}</a>' for n in names)
        self.pages = {f"/docs/{n}.html": PAGE.format(name=n, links=links).encode() for n in names}
        self.pages["/docs/"] = PAGE.format(name="Home", links=links).encode()
        self.kill_on: str | None = None  # SIGTERM this process when this path is requested
        self.hits: list[str] = []
        self.base = ""


@pytest.fixture
def live_site() -> Iterator[_Site]:
    site = _Site(pages=6)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            site.hits.append(self.path)
            if self.path == site.kill_on:
                site.kill_on = None
                os.kill(os.getpid(), signal.SIGTERM)
            body = site.pages.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield site
    server.shutdown()
    server.server_close()


def _live_config(tmp_path: Path, site: _Site) -> Path:
    path = tmp_path / "live.yaml"
    path.write_text(
        f"state_dir: {tmp_path / 'state'}\noutput_base_dir: {tmp_path / 'out'}\nmax_retries: 0\n"
        "num_workers: 1\nhttp_client_settings:\n  allow_private_networks: true\n"
        f"sites:\n  demo:\n    start_urls: ['{site.base}/docs/']\n    allowed_domain: 127.0.0.1\n"
        "    allowed_path_prefix: /docs/\n    content_selector: div.body\n    use_sitemaps: false\n"
    )
    return path


def _stop_after_each_batch(config_path: Path) -> CrawlFn:
    """The production crawl function, plus a SIGTERM once the batch is done (ends the watcher)."""
    from doc_scraper.config.load import load_config
    from doc_scraper.watch import api_crawl_fn

    real = api_crawl_fn(load_config(config_path))

    async def crawl(keys: list[str], stop: asyncio.Event) -> list[CrawlSummary]:
        result = await real(keys, stop)
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGTERM)
        return result

    return crawl


def test_watch_crawls_with_the_real_engine_and_records_the_run(live_site: _Site, tmp_path: Path) -> None:
    config = _live_config(tmp_path, live_site)
    code = watch_cli.run(_args("-config", str(config), "-site", "demo"), crawl=_stop_after_each_batch(config))
    assert code == 0
    state = json.loads((tmp_path / "state" / "watch_state.json").read_text())["sites"]["demo"]
    assert state["last_run_success"] is True
    assert state["pages_processed"] == 7
    assert (tmp_path / "out" / "demo" / "p5.md").exists()


def test_sigterm_during_a_real_crawl_is_resumed_by_the_next_watch(live_site: _Site, tmp_path: Path) -> None:
    config = _live_config(tmp_path, live_site)
    live_site.kill_on = "/docs/p2.html"
    code = watch_cli.run(_args("-config", str(config), "-site", "demo"))
    assert code == 0
    state = json.loads((tmp_path / "state" / "watch_state.json").read_text())["sites"]["demo"]
    assert state["interrupted"] is True
    assert state["last_run_time"] == ""
    first_run_hits = len(live_site.hits)
    # the next start finds the site due and finishes the crawl
    code = watch_cli.run(_args("-config", str(config), "-site", "demo"), crawl=_stop_after_each_batch(config))
    assert code == 0
    state = json.loads((tmp_path / "state" / "watch_state.json").read_text())["sites"]["demo"]
    assert state["interrupted"] is False
    assert state["last_run_success"] is True
    assert state["pages_processed"] == 7
    assert len(live_site.hits) > first_run_hits
