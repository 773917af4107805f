from __future__ import annotations

import gc
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from doc_scraper.errors import StateError
from doc_scraper.frontier.store import SCHEMA_VERSION, CrawlStore, PageState

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "site"


@pytest.fixture
def store(path: Path) -> Iterator[CrawlStore]:
    s = CrawlStore.open(path)
    yield s
    s.close()


def ok(url: str, depth: int = 0, **kw: object) -> PageState:
    return PageState(url=url, status="ok", depth=depth, **kw)  # type: ignore[arg-type]


# -- ordering and dedup -----------------------------------------------------------------------


def test_claim_returns_shallowest_first_and_fifo_within_a_depth(store: CrawlStore) -> None:
    store.add([("a2", 2), ("b0", 0), ("c1", 1), ("d0", 0), ("e2", 2), ("f1", 1)])
    assert store.claim(10) == [("b0", 0), ("d0", 0), ("c1", 1), ("f1", 1), ("a2", 2), ("e2", 2)]


def test_claim_takes_at_most_n_and_never_hands_out_a_url_twice(store: CrawlStore) -> None:
    store.add([(f"u{i}", 0) for i in range(5)])
    first = store.claim(2)
    second = store.claim(2)
    third = store.claim(10)
    assert [u for u, _ in first + second + third] == [f"u{i}" for i in range(5)]
    assert store.claim(10) == []
    assert store.inflight_count() == 5
    assert store.queued_count() == 5  # claimed entries stay on disk until completed


def test_priority_orders_within_a_depth_but_never_before_a_shallower_url(store: CrawlStore) -> None:
    store.add([("low", 1), ("high", 1, 10), ("shallow", 0), ("neg", 1, -5)])
    assert [u for u, _ in store.claim(10)] == ["shallow", "high", "low", "neg"]


def test_add_skips_seen_urls_and_duplicates_within_one_call(store: CrawlStore) -> None:
    assert store.add([("x", 0), ("y", 1), ("x", 3)]) == ["x", "y"]
    assert store.add([("y", 0), ("z", 0)]) == ["z"]
    assert store.queued_count() == 3
    assert store.seen("x")
    assert not store.seen("nope")


def test_add_rejects_a_negative_depth(store: CrawlStore) -> None:
    with pytest.raises(ValueError, match="depth"):
        store.add([("x", -1)])
    assert store.queued_count() == 0


def test_links_shallower_than_the_claim_position_are_claimed_next(store: CrawlStore) -> None:
    store.add([("a", 2), ("b", 2), ("c", 2)])
    assert store.claim(1) == [("a", 2)]
    store.add([("shallow", 1)])
    assert store.claim(2) == [("shallow", 1), ("b", 2)]


def test_a_released_url_is_claimed_again(store: CrawlStore) -> None:
    store.add([("a", 0), ("b", 0)])
    assert store.claim(2) == [("a", 0), ("b", 0)]
    store.release("a")
    assert store.claim(5) == [("a", 0)]


# -- complete ---------------------------------------------------------------------------------


def test_complete_stores_state_dequeues_and_enqueues_only_unseen_links(store: CrawlStore) -> None:
    store.add([("root", 0), ("known", 1)])
    assert store.claim(1) == [("root", 0)]
    added = store.complete(
        "root", ok("root", links=("known", "new")), [("known", 1), ("new", 1), ("root", 1)]
    )
    assert added == ["new"]
    assert store.get("root") == ok("root", links=("known", "new"))
    assert list(store.iter_queue()) == [("known", 1), ("new", 1)]
    assert store.queued_count() == 2
    assert store.inflight_count() == 0
    assert store.seen("root")


def test_complete_of_a_queued_url_that_was_not_claimed_removes_it(store: CrawlStore) -> None:
    store.add([("a", 0), ("b", 0)])
    store.complete("b", ok("b"))
    assert store.claim(5) == [("a", 0)]
    assert store.queued_count() == 1


def test_complete_of_a_never_queued_url_records_it_as_seen(store: CrawlStore) -> None:
    store.complete("redirect-target", ok("redirect-target"))
    assert store.seen("redirect-target")
    assert store.queued_count() == 0
    assert store.add([("redirect-target", 0)]) == []


def test_complete_refuses_a_state_for_another_url(store: CrawlStore) -> None:
    with pytest.raises(ValueError, match="state is for"):
        store.complete("a", ok("b"))


def test_complete_stamps_the_current_run_unless_given(store: CrawlStore) -> None:
    store.begin_run("full")
    run = store.begin_run("incremental")
    store.complete("a", ok("a"))
    store.complete("b", ok("b", crawl_run=1))
    assert store.get("a").crawl_run == run == 2  # type: ignore[union-attr]
    assert store.get("b").crawl_run == 1  # type: ignore[union-attr]


def test_a_claimed_but_uncompleted_url_is_still_queued_after_reopen(path: Path) -> None:
    with CrawlStore.open(path) as s:
        s.add([("a", 0), ("b", 1)])
        assert s.claim(2) == [("a", 0), ("b", 1)]
    with CrawlStore.open(path) as s:
        assert s.queued_count() == 2
        assert s.claim(5) == [("a", 0), ("b", 1)]


def test_a_completed_url_is_not_queued_after_reopen_and_its_state_is_kept(path: Path) -> None:
    with CrawlStore.open(path) as s:
        s.add([("a", 0), ("b", 0)])
        s.claim(2)
        s.complete("a", ok("a", etag='"x"'), [("c", 1)])
    with CrawlStore.open(path) as s:
        assert s.claim(5) == [("b", 0), ("c", 1)]
        assert s.get("a") == ok("a", etag='"x"')
        assert s.queued_count() == 2
        assert s.seen("a")


def test_queued_count_follows_every_change_and_survives_reopen(path: Path) -> None:
    with CrawlStore.open(path) as s:
        s.add([(f"u{i}", i % 3) for i in range(50)])
        for url, depth in s.claim(20):
            s.complete(url, ok(url, depth), [(url + "/child", depth + 1)])
        s.requeue("u0", 0)
        s.requeue("u1", 0)  # still queued: no-op
        count = s.queued_count()
        assert count == sum(1 for _ in s.iter_queue())
    with CrawlStore.open(path) as s:
        assert s.queued_count() == count == sum(1 for _ in s.iter_queue())
        assert s.pending()


def test_pending_is_false_once_everything_is_completed(store: CrawlStore) -> None:
    store.add([("a", 0)])
    assert store.pending()
    for url, depth in store.claim(5):
        store.complete(url, ok(url, depth))
    assert not store.pending()
    assert store.claim(5) == []


# -- requeue and incremental ------------------------------------------------------------------


def test_requeue_puts_a_completed_url_back_once(store: CrawlStore) -> None:
    store.add([("a", 0)])
    store.claim(1)
    store.complete("a", ok("a"))
    assert store.requeue("a", 0) is True
    assert store.requeue("a", 0) is False
    assert store.claim(5) == [("a", 0)]
    assert store.queued_count() == 1


def test_reset_for_incremental_keeps_states_and_replaces_the_frontier(path: Path) -> None:
    with CrawlStore.open(path) as s:
        s.add([("a", 0), ("b", 1), ("stale", 2)])
        for url, depth in s.claim(2):
            s.complete(url, ok(url, depth))
        n = s.reset_for_incremental([(st.url, st.depth) for st in s.iter_states()] + [("a", 0)])
        assert n == 2
        assert list(s.iter_queue()) == [("a", 0), ("b", 1)]
        assert s.queued_count() == 2
        assert not s.seen("stale")
        assert s.get("a") is not None
        assert s.add([("stale", 2)]) == ["stale"]
    with CrawlStore.open(path) as s:
        assert [u for u, _ in s.claim(10)] == ["a", "b", "stale"]
        assert s.meta()["generation"] == 1


def test_an_interrupted_reset_leaves_the_old_frontier_intact(path: Path) -> None:
    def start() -> Iterator[tuple[str, int]]:
        for i in range(5000):
            yield (f"new{i}", 0)
        raise RuntimeError("killed")

    with CrawlStore.open(path) as s:
        s.add([("old", 0)])
        with pytest.raises(RuntimeError):
            s.reset_for_incremental(start())
        assert list(s.iter_queue()) == [("old", 0)]
        assert not s.seen("new0")
    with CrawlStore.open(path) as s:  # reopening purges the half-built generation
        assert list(s.iter_queue()) == [("old", 0)]
        assert s.reset_for_incremental([("new1", 0)]) == 1
        assert list(s.iter_queue()) == [("new1", 0)]


# -- page states and meta ---------------------------------------------------------------------


def test_page_state_round_trips_and_ignores_unknown_keys() -> None:
    state = PageState(
        url="https://ex.com/é",
        status="not_modified",
        error="",
        depth=3,
        content_hash="ab" * 32,
        etag='W/"1"',
        last_modified="Tue, 01 Oct 2024 10:00:00 GMT",
        links=("https://ex.com/a", "https://ex.com/b"),
        output_path="guide/é.md",
        fetched_at="2026-11-29T12:00:00Z",
        title="Guide",
        http_status=304,
        crawl_run=4,
    )
    assert PageState.from_json(state.to_json()) == state
    extra = state.to_json()[:-1] + b',"future_field":1}'
    assert PageState.from_json(extra) == state


def test_iter_states_and_states_page_stream_every_state_in_url_order(store: CrawlStore) -> None:
    for url in ["c", "a", "b", "d"]:
        store.complete(url, ok(url))
    assert [s.url for s in store.iter_states()] == ["a", "b", "c", "d"]
    assert [s.url for s in store.states_page(limit=2)] == ["a", "b"]
    assert [s.url for s in store.states_page(after="b", limit=5)] == ["c", "d"]
    assert store.delete_state("c") is True
    assert store.delete_state("c") is False
    assert store.get("c") is None


def test_runs_are_numbered_and_recorded_in_meta(path: Path) -> None:
    with CrawlStore.open(path) as s:
        assert s.meta()["run"] == 0
        assert s.begin_run("full") == 1
        assert s.meta()["status"] == "running"
        s.finish_run()
    with CrawlStore.open(path) as s:
        meta = s.meta()
        assert meta["run"] == 1
        assert meta["mode"] == "full"
        assert meta["status"] == "complete"
        assert meta["finished_at"].endswith("Z")
        assert meta["schema"] == SCHEMA_VERSION
        assert s.begin_run("resume") == 2
        assert s.meta()["finished_at"] == ""


# -- locking and damage -----------------------------------------------------------------------


def test_a_second_open_in_the_same_process_is_refused_as_in_use(store: CrawlStore, path: Path) -> None:
    with pytest.raises(StateError, match="in use by another doc-scraper process") as info:
        CrawlStore.open(path)
    assert info.value.path == str(path)
    store.add([("a", 0)])  # the first handle is untouched
    assert store.queued_count() == 1


@pytest.mark.e2e
def test_open_is_refused_while_another_process_holds_the_state(path: Path) -> None:
    holder = (
        "import sys\n"
        "from pathlib import Path\n"
        "from doc_scraper.frontier.store import CrawlStore\n"
        "s = CrawlStore.open(Path(sys.argv[1]))\n"
        "s.add([('kept', 0)])\n"
        "print('held', flush=True)\n"
        "sys.stdin.read()\n"
        "s.close()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", holder, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        with pytest.raises(StateError, match="in use by another doc-scraper process"):
            CrawlStore.open(path)
        with pytest.raises(StateError, match="in use"):
            CrawlStore.open(path, fresh=True)  # never wipes a state someone holds
    finally:
        proc.communicate("", timeout=10)
    assert proc.returncode == 0
    with CrawlStore.open(path) as s:
        assert list(s.iter_queue()) == [("kept", 0)]


def test_a_garbage_current_file_gives_an_error_naming_full(path: Path) -> None:
    with CrawlStore.open(path) as s:
        s.add([("a", 0)])
    (path / "CURRENT").write_text("garbage\n")
    with pytest.raises(StateError, match="--full") as info:
        CrawlStore.open(path)
    assert "damaged" in str(info.value)


def test_a_missing_manifest_gives_an_error_naming_full(path: Path) -> None:
    with CrawlStore.open(path) as s:
        s.add([("a", 0)])
    for manifest in path.glob("MANIFEST-*"):
        manifest.unlink()
    with pytest.raises(StateError, match="--full"):
        CrawlStore.open(path)


def test_a_garbage_schema_version_gives_an_error_naming_full(path: Path) -> None:
    import plyvel

    with CrawlStore.open(path) as s:
        s.add([("a", 0)])
    db = plyvel.DB(str(path))
    db.put(b"m:schema", b"\x00zz")
    db.close()
    with pytest.raises(StateError, match=r"damaged.*--full"):
        CrawlStore.open(path)


def test_keys_without_a_schema_version_are_refused(path: Path) -> None:
    import plyvel

    path.parent.mkdir(parents=True)
    db = plyvel.DB(str(path), create_if_missing=True)
    db.put(b"q:something", b"x")
    db.close()
    with pytest.raises(StateError, match=r"schema version is missing.*--full"):
        CrawlStore.open(path)


def test_a_newer_schema_asks_to_upgrade_or_rebuild(path: Path) -> None:
    import plyvel

    CrawlStore.open(path).close()
    db = plyvel.DB(str(path))
    db.put(b"m:schema", str(SCHEMA_VERSION + 1).encode())
    db.close()
    with pytest.raises(StateError, match=r"upgrade doc-scraper or .*--full"):
        CrawlStore.open(path)


def test_a_damaged_page_state_gives_a_state_error_naming_full(path: Path) -> None:
    import plyvel

    CrawlStore.open(path).close()
    db = plyvel.DB(str(path))
    db.put(b"p:https://ex.com/", b"{not json")
    db.close()
    with CrawlStore.open(path) as s, pytest.raises(StateError, match="--full"):
        s.get("https://ex.com/")


def test_opening_a_missing_state_without_create_says_so(path: Path) -> None:
    with pytest.raises(StateError, match="no crawl state here"):
        CrawlStore.open(path, create=False)
    assert not path.exists()


def test_a_fresh_open_rebuilds_a_damaged_state(path: Path) -> None:
    with CrawlStore.open(path) as s:
        s.add([("a", 0)])
        s.complete("b", ok("b"))
    (path / "CURRENT").write_text("garbage\n")
    with CrawlStore.open(path, fresh=True) as s:
        assert s.queued_count() == 0
        assert s.get("b") is None
        assert s.meta()["run"] == 0


# -- memory -----------------------------------------------------------------------------------


def test_a_large_frontier_lives_on_disk_not_in_python_memory(store: CrawlStore) -> None:
    total = 200_000
    for start in range(0, total, 5000):
        store.add((f"https://ex.com/docs/page/{i}", i % 4) for i in range(start, start + 5000))
    assert store.queued_count() == total
    # Nothing in the store object grows with the frontier.
    sizes = {
        k: len(v) for k, v in vars(store).items() if hasattr(v, "__len__") and not isinstance(v, str | bytes)
    }
    assert max(sizes.values(), default=0) <= 0, sizes

    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        done = 0
        while done < 1000:
            for url, depth in store.claim(50):
                store.complete(url, ok(url, depth), [(url + "/sub", depth + 1)])
                done += 1
        store.add((f"https://ex.com/more/{i}", 1) for i in range(5000))
        gc.collect()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert current - base < 200_000  # ~200 bytes per queued URL would already be 44 MB
    assert peak - base < 4_000_000  # one batch of a few thousand URLs at most
    assert store.queued_count() == total - 1000 + 1000 + 5000
    assert store.claim(1) == [("https://ex.com/docs/page/4000", 0)]


def test_a_fresh_open_refuses_to_delete_a_folder_that_is_not_crawl_state(path: Path) -> None:
    path.mkdir(parents=True)
    (path / "notes.md").write_text("mine")
    with pytest.raises(StateError, match="not deleting"):
        CrawlStore.open(path, fresh=True)
    assert (path / "notes.md").read_text() == "mine"


def test_a_complete_that_fails_part_way_writes_nothing(store: CrawlStore) -> None:
    store.add([("a", 0)])
    store.claim(1)
    with pytest.raises(ValueError, match="depth"):
        store.complete("a", ok("a"), [("fine", 1), ("bad", -1)])
    assert store.get("a") is None
    assert not store.seen("fine")
    assert list(store.iter_queue()) == [("a", 0)]
    assert store.queued_count() == 1
    assert store.complete("a", ok("a"), [("fine", 1)]) == ["fine"]
    assert store.claim(5) == [("fine", 1)]
