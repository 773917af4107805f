"""Killed and interrupted crawls resume with nothing lost and nothing fetched twice."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections import Counter
from typing import TYPE_CHECKING

import pytest
import yaml

from doc_scraper import api
from doc_scraper.config.load import load_config
from tests.docsite import DocSite, start

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

N_PAGES = 40
WORKERS = 4


@pytest.fixture
async def served() -> AsyncIterator[tuple[DocSite, str]]:
    docs = DocSite.linked(N_PAGES)
    docs.latency = 0.02
    server = await start(docs)
    try:
        yield docs, f"http://127.0.0.1:{server.port}"
    finally:
        await server.close()


def write_config(work: Path, base: str) -> Path:
    cfg = {
        "output_base_dir": str(work / "out"),
        "state_dir": str(work / "state"),
        "num_workers": WORKERS,
        "max_requests_per_host": WORKERS,
        "http_client_settings": {"allow_private_networks": True},
        "sites": {
            "demo": {
                "start_urls": [f"{base}/docs/index.html"],
                "allowed_domain": "127.0.0.1",
                "allowed_path_prefix": "/docs/",
            }
        },
    }
    path = work / "config.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


async def run_crawl(
    config: Path, *extra: str, kill_on: str | None = None, kill_after: int = 1, sig: int = signal.SIGKILL
) -> tuple[int, str]:
    """Run ``doc-scraper crawl``; optionally send ``sig`` after ``kill_after`` log lines with ``kill_on``."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "doc_scraper",
        "crawl",
        "-config",
        str(config),
        "-site",
        "demo",
        "-loglevel",
        "debug",
        "-no-progress",
        *extra,
        stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stderr is not None
    seen = 0
    lines: list[str] = []
    sent = False
    while True:
        raw = await proc.stderr.readline()
        if not raw:
            break
        line = raw.decode(errors="replace")
        lines.append(line)
        if kill_on and not sent and kill_on in line:
            seen += 1
            if seen >= kill_after:
                proc.send_signal(sig)
                sent = True
    code = await proc.wait()
    return code, "".join(lines[-40:])


def snapshot(work: Path) -> tuple[set[str], list[tuple[str, str]]]:
    site = work / "out" / "demo"
    files = {str(p.relative_to(site)) for p in site.rglob("*.md")}
    records = [json.loads(x) for x in (site / "pages.jsonl").read_text().splitlines()]
    pages = [(r["url"], r["content_hash"]) for r in records if r["record_type"] == "page"]
    assert [r["record_type"] for r in records].count("crawl_meta") == 1
    return files, pages


def normalise(pages: list[tuple[str, str]], base: str) -> list[tuple[str, str]]:
    return [(url.replace(base, "BASE"), h) for url, h in pages]


@pytest.mark.parametrize(
    ("kill_on", "kill_after"),
    [
        ("page.written", 3),  # early
        ("page.written", N_PAGES // 2),  # middle
        ("crawl.finalizing", 1),  # during finalisation
    ],
)
async def test_a_crawl_killed_with_sigkill_resumes_to_the_same_result(
    tmp_path: Path, served: tuple[DocSite, str], kill_on: str, kill_after: int
) -> None:
    docs, base = served
    reference = tmp_path / "reference"
    reference.mkdir()
    # The uninterrupted crawl runs in-process (same code path, no process start-up).
    [summary] = await api.crawl_sites(load_config(write_config(reference, base)), ["demo"])
    assert summary.ok, summary.error
    want_files, want_pages = snapshot(reference)
    assert len(want_files) == N_PAGES + 1

    docs.reset_counters()
    work = tmp_path / "killed"
    work.mkdir()
    config = write_config(work, base)
    code, log = await run_crawl(config, kill_on=kill_on, kill_after=kill_after)
    assert code == -signal.SIGKILL, log
    first_run: Counter[str] = Counter(docs.requests)
    docs.reset_counters()
    code, log = await run_crawl(config, "-resume")
    assert code == 0, log
    files, pages = snapshot(work)
    assert files == want_files
    assert normalise(pages, base) == normalise(want_pages, base)
    assert len({url for url, _ in pages}) == len(pages)  # no duplicate records
    # Only pages in flight at the kill may be fetched again after the resume.
    twice = [p for p in docs.requests if first_run[p] and docs.requests[p]]
    assert len(twice) <= WORKERS, twice
    assert all(first_run[p] + docs.requests[p] <= 2 for p in docs.requests)


async def test_sigint_stops_gracefully_with_exit_130_and_the_crawl_resumes(
    tmp_path: Path, served: tuple[DocSite, str]
) -> None:
    _, base = served
    config = write_config(tmp_path, base)
    code, log = await run_crawl(config, kill_on="page.written", kill_after=5, sig=signal.SIGINT)
    assert code == 130, log
    assert "resume" in log
    assert not (tmp_path / "out" / "demo").exists()  # a fresh crawl is staged until it completes
    code, log = await run_crawl(config, "-resume")
    assert code == 0, log
    files, _ = snapshot(tmp_path)
    assert len(files) == N_PAGES + 1


async def test_a_second_crawl_of_the_same_site_is_refused_while_one_runs(
    tmp_path: Path, served: tuple[DocSite, str]
) -> None:
    docs, base = served
    docs.latency = 0.1
    config = write_config(tmp_path, base)
    first = asyncio.ensure_future(run_crawl(config))
    await asyncio.sleep(0)
    for _ in range(100):  # wait until the first crawl holds its state
        if any((tmp_path / "state").glob("demo*/LOCK")):
            break
        await asyncio.sleep(0.05)
    code, log = await run_crawl(config, "-resume")
    assert code == 1
    assert "in use by another doc-scraper process" in log
    code, log = await first
    assert code == 0, log
