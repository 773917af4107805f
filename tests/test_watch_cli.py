"""``doc-scraper watch`` flags, site selection and signal handling, with an injected crawl function."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
from typing import TYPE_CHECKING

import pytest

from doc_scraper.cli import watch as watch_cli
from doc_scraper.errors import ConfigError
from doc_scraper.models import CrawlSummary

if TYPE_CHECKING:
    from pathlib import Path

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


def test_an_unknown_site_key_is_named_with_the_available_ones(config_file: Path) -> None:
    with pytest.raises(ConfigError, match=r"site 'gamma' not found.*alpha, beta"):
        watch_cli.run(_args("-config", str(config_file), "-site", "gamma"))


def test_watch_without_a_site_selection_says_how_to_choose(config_file: Path) -> None:
    with pytest.raises(ConfigError, match="-all-sites"):
        watch_cli.run(_args("-config", str(config_file)))


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
