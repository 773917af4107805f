"""SIGKILL a process driving the store at random moments; the state must stay consistent."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import plyvel
import pytest

from doc_scraper.frontier.store import CrawlStore, PageState

ROOT = Path(__file__).resolve().parents[1]
TOTAL = 5_000  # pages u/0 .. u/4999, all reachable from u/0

# The crawler stand-in: claims, "fetches", completes with links, and appends each
# completed URL to a log after complete() returned. Exit 3 = a completed page was
# handed out again.
CRAWLER = """
import os, sys
from pathlib import Path
from doc_scraper.frontier.store import CrawlStore, PageState

path, log, total = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
store = CrawlStore.open(path)
store.add([("u/0", 0)])
fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
print("ready", flush=True)
while True:
    batch = store.claim(8)
    if not batch:
        break
    for url, depth in batch:
        if store.get(url) is not None:
            sys.exit(3)
        n = int(url[2:])
        links = [(f"u/{c}", depth + 1) for c in (2 * n + 1, 2 * n + 2, n + 7) if c < total]
        store.complete(url, PageState(url=url, status="ok", depth=depth), links)
        os.write(fd, (url + "\\n").encode())
store.close()
print("done", flush=True)
"""

# Rebuilds the frontier from the page states and SIGKILLs itself at a chosen point:
# "items:K" after K start items were read, "purge" while deleting the old generation.
RESETTER = """
import os, signal, sys
from pathlib import Path
from doc_scraper.frontier.store import CrawlStore

store = CrawlStore.open(Path(sys.argv[1]))
where, _, k = sys.argv[2].partition(":")

def start():
    for i, s in enumerate(store.iter_states()):
        if where == "items" and i == int(k):
            os.kill(os.getpid(), signal.SIGKILL)
        yield (s.url, s.depth)

if where == "purge":
    real = store._delete_range
    def dying(start, stop):
        real(start, stop)
        if store._gen == 1 and start.startswith(b"q:"):  # after the switch, mid-purge
            os.kill(os.getpid(), signal.SIGKILL)
    store._delete_range = dying
print("ready", flush=True)
store.reset_for_incremental(start())
print("done", flush=True)
"""


def _children(n: int) -> list[int]:
    return [c for c in (2 * n + 1, 2 * n + 2, n + 7) if c < TOTAL]


def _run(script: str, args: list[str], kill_after: float | None) -> int:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, env=env, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    if kill_after is None:
        proc.wait(timeout=60)
    else:
        try:
            proc.wait(timeout=kill_after)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=10)
    proc.stdout.close()
    return proc.returncode


def _check_invariants(path: Path, log: Path) -> tuple[set[str], list[str]]:
    with CrawlStore.open(path) as store:
        states = {s.url for s in store.iter_states()}
        queue = [url for url, _ in store.iter_queue()]
        assert len(queue) == len(set(queue)), "a URL is queued twice"
        assert store.queued_count() == len(queue)
        assert not states & set(queue), "a completed URL is still queued"
        assert "u/0" in states or "u/0" in queue
        known = states | set(queue)
        for url in states:
            for c in _children(int(url[2:])):
                assert f"u/{c}" in known, f"link u/{c} of completed {url} was lost"
        for url in queue[:200]:
            assert store.seen(url)
    logged = log.read_text().split() if log.exists() else []
    assert len(logged) == len(set(logged)), "a completed page was processed twice"
    assert set(logged) <= states
    return states, queue


@pytest.mark.e2e
def test_a_crawl_killed_at_random_moments_loses_nothing_and_repeats_nothing(tmp_path: Path) -> None:
    path, log = tmp_path / "site", tmp_path / "completed.log"
    rng = random.Random(1234)
    kills = 0
    for _ in range(5):
        rc = _run(CRAWLER, [str(path), str(log), str(TOTAL)], kill_after=rng.uniform(0.0, 0.15))
        assert rc in (0, -signal.SIGKILL), f"crawler exited with {rc}"
        kills += rc == -signal.SIGKILL
        _check_invariants(path, log)
    assert kills >= 3  # the test must actually interrupt work
    assert _run(CRAWLER, [str(path), str(log), str(TOTAL)], kill_after=None) == 0
    states, queue = _check_invariants(path, log)
    assert queue == []
    assert states == {f"u/{i}" for i in range(TOTAL)}


def _raw_queue_keys(path: Path) -> int:
    db = plyvel.DB(str(path))
    try:
        return sum(1 for _ in db.iterator(prefix=b"q:", include_value=False))
    finally:
        db.close()


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["items:2500", "purge"])
def test_a_reset_killed_part_way_leaves_exactly_the_old_or_the_new_frontier(
    tmp_path: Path, where: str
) -> None:
    path = tmp_path / "site"
    n = 3000  # the reset writes 2000 per batch: "items:2500" dies after one batch
    with CrawlStore.open(path) as store:
        store.add((f"u/{i}", i % 3) for i in range(n))
        for url, depth in store.claim(n):
            store.complete(url, PageState(url=url, status="ok", depth=depth))
        store.add([("leftover", 5)])
    assert _run(RESETTER, [str(path), where], kill_after=None) == -signal.SIGKILL
    with CrawlStore.open(path) as store:
        queue = [url for url, _ in store.iter_queue()]
        assert store.queued_count() == len(queue)
        if where == "purge":
            assert sorted(queue) == sorted(f"u/{i}" for i in range(n))
            assert not store.seen("leftover")
        else:
            assert queue == ["leftover"]
            assert store.seen("u/0")
    # Reopening purged the other generation's keys.
    assert _raw_queue_keys(path) == len(queue)
