"""Shared pieces of the benchmarks: docserve on loopback, measured subprocesses, tables.

Benchmarks may use ../shared (the corpus and docserve); the test suite never does.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DOC_SCRAPER_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
DOCSERVE = SHARED / "tools" / "docserve.py"
VENV_BIN = Path(sys.executable).parent


def need_shared() -> None:
    if not DOCSERVE.exists():
        sys.exit(f"benchmarks need the shared corpus and tools at {SHARED} (set DOC_SCRAPER_SHARED)")


@contextlib.contextmanager
def docserve(*args: str) -> Iterator[dict[str, Any]]:
    """Start docserve with ``args``; yields its ready line (base_url, sites, ...)."""
    proc = subprocess.Popen(
        [sys.executable, str(DOCSERVE), "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = json.loads(proc.stdout.readline())
        yield ready
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def stats(url: str, reset: bool = False) -> dict[str, Any]:
    query = "?reset=1" if reset else ""
    with urllib.request.urlopen(url + query, timeout=10) as resp:
        return json.loads(resp.read())  # type: ignore[no-any-return]


@dataclass
class Measured:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float  # largest single process (ru_maxrss over the tree)
    peak_tree_mb: float  # sum over the process tree, sampled every 100 ms
    returncode: int
    stderr_tail: str


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for proc_dir in Path("/proc").iterdir():
        entry = proc_dir.name
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/statm") as fh:
                total += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            pass
    return total


def run_measured(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> Measured:
    """Run ``cmd``; CPU and RSS include every child it waited for (the parse pool too)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            done.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    sampler.join()
    wall = time.monotonic() - t0
    return Measured(
        wall,
        usage.ru_utime + usage.ru_stime,
        usage.ru_maxrss / 1024,
        peak / 2**20,
        proc.returncode,
        err[-2000:],
    )


def table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for col in columns:
            value = row.get(col, "")
            cells.append(f"{value:.2f}" if isinstance(value, float) else str(value))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)
