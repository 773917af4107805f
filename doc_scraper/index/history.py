"""Crawl runs, page history, generations and the diff between two crawls.

Writers (``begin_crawl``, ``finish_crawl``) run on the writer thread inside
its transaction; readers take a connection of their own. Times are stored as
the RFC 3339 text the engine gave plus epoch seconds, and compared as epoch
seconds, so fractional seconds and offsets order correctly.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from doc_scraper.index.db import fetch_all, fetch_one
from doc_scraper.index.pages import drop_generations

if TYPE_CHECKING:
    import apsw

    from doc_scraper.index.db import Row

logger = logging.getLogger(__name__)

COUNT_KEYS = ("pages", "added", "changed", "unchanged", "removed", "failed")
_CRAWL_COLUMNS = (
    "id, site_key, mode, status, started_at, ended_at, pages, added, changed, unchanged, removed, failed"
)


@dataclass(frozen=True, slots=True)
class CrawlInfo:
    """One recorded crawl run of a site."""

    id: int
    site_key: str
    mode: str
    status: str  # running | completed | interrupted
    started_at: str
    ended_at: str | None
    pages: int = 0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0


@dataclass(frozen=True, slots=True)
class ChangedPage:
    url: str
    content_hash: str
    prior_hash: str


@dataclass(frozen=True, slots=True)
class CrawlDiff:
    """What changed in a site between a baseline crawl and the latest completed one."""

    site_key: str
    baseline: CrawlInfo | None
    current: CrawlInfo | None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[ChangedPage, ...] = ()
    unchanged: int = 0
    note: str = ""  # why there is nothing to compare, when that is the case


def parse_time(value: str | datetime) -> float | None:
    """Epoch seconds of an RFC 3339 string or datetime (naive = UTC); None if unparseable."""
    try:
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(value.strip())
    except (ValueError, AttributeError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


# ------------------------------------------------------------------ writes


def site_generations(conn: apsw.Connection, site_key: str) -> tuple[int, int | None]:
    conn.execute("INSERT OR IGNORE INTO sites (site_key) VALUES (?)", (site_key,))
    row = fetch_one(
        conn, "SELECT live_generation, staging_generation FROM sites WHERE site_key = ?", (site_key,)
    )
    if row is None:  # cannot happen after the INSERT OR IGNORE above
        return 0, None
    return int(row[0]), (None if row[1] is None else int(row[1]))


def begin_crawl(conn: apsw.Connection, site_key: str, mode: str, started_at: str, *, fresh: bool) -> int:
    """Record a crawl start and pick the generation it writes into; returns the crawl id."""
    live, staging = site_generations(conn, site_key)
    conn.execute(
        "UPDATE crawls SET status = 'interrupted' WHERE site_key = ? AND status = 'running'", (site_key,)
    )
    if fresh:
        if staging is not None:
            conn.execute("DELETE FROM pages WHERE site_key = ? AND generation = ?", (site_key, staging))
        top = fetch_one(conn, "SELECT max(generation) FROM pages WHERE site_key = ?", (site_key,))
        generation = max(live, staging or 0, int(top[0] or 0) if top else 0) + 1
        conn.execute("UPDATE sites SET staging_generation = ? WHERE site_key = ?", (generation, site_key))
    elif mode == "resume" and staging is not None:
        generation = staging
    else:
        generation = live
    conn.execute(
        "INSERT INTO crawls (site_key, mode, status, generation, started_at, started_ts)"
        " VALUES (?, ?, 'running', ?, ?, ?)",
        (site_key, mode, generation, started_at, parse_time(started_at)),
    )
    crawl_id = int(conn.last_insert_rowid())
    logger.info(
        "index.crawl_started",
        extra={"site_key": site_key, "crawl_id": crawl_id, "mode": mode, "generation": generation},
    )
    return crawl_id


def crawl_target(conn: apsw.Connection, crawl_id: int) -> tuple[str, int, int]:
    """(site_key, generation the crawl writes into, live generation) of a crawl."""
    row = fetch_one(
        conn,
        "SELECT c.site_key, c.generation, s.live_generation FROM crawls c"
        " JOIN sites s ON s.site_key = c.site_key WHERE c.id = ?",
        (crawl_id,),
    )
    if row is None:
        raise KeyError(f"unknown crawl id {crawl_id}")
    return str(row[0]), int(row[1]), int(row[2])


def finish_crawl(
    conn: apsw.Connection,
    crawl_id: int,
    ended_at: str,
    summary: dict[str, int],
    *,
    commit: bool,
    retention: int,
) -> None:
    """Close a crawl. ``commit`` makes its generation live, records history and applies retention."""
    site_key, generation, _ = crawl_target(conn, crawl_id)
    counts = {key: int(summary.get(key, 0) or 0) for key in COUNT_KEYS}
    status = "completed" if commit else "interrupted"
    if commit:
        # The committed generation becomes live; any other (the old live one, or the staging of an
        # interrupted fresh crawl that this crawl supersedes) is dropped, so a later resume starts clean.
        conn.execute(
            "UPDATE sites SET live_generation = ?, staging_generation = NULL WHERE site_key = ?",
            (generation, site_key),
        )
        dropped = drop_generations(conn, site_key, generation)
        row = fetch_one(
            conn, "SELECT count(*) FROM pages WHERE site_key = ? AND generation = ?", (site_key, generation)
        )
        counts["pages"] = int(row[0]) if row else 0
        conn.execute(
            "INSERT INTO page_history (crawl_id, url, title, content_hash, depth)"
            " SELECT ?, url, title, content_hash, depth FROM pages WHERE site_key = ? AND generation = ?",
            (crawl_id, site_key, generation),
        )
        logger.info(
            "index.generation_live",
            extra={
                "site_key": site_key,
                "generation": generation,
                "pages": counts["pages"],
                "dropped_pages": dropped,
            },
        )
    conn.execute(
        "UPDATE crawls SET status = ?, ended_at = ?, ended_ts = ?, pages = ?, added = ?, changed = ?,"
        " unchanged = ?, removed = ?, failed = ?, summary = ? WHERE id = ?",
        (
            status,
            ended_at,
            parse_time(ended_at),
            counts["pages"],
            counts["added"],
            counts["changed"],
            counts["unchanged"],
            counts["removed"],
            counts["failed"],
            json.dumps(summary, default=str),
            crawl_id,
        ),
    )
    if commit and retention > 0:
        conn.execute(
            "DELETE FROM crawls WHERE site_key = ? AND status != 'running' AND id NOT IN"
            " (SELECT id FROM crawls WHERE site_key = ? AND status != 'running'"
            "  ORDER BY id DESC LIMIT ?)",
            (site_key, site_key, retention),
        )


# ------------------------------------------------------------------ reads


def _crawl(row: Row) -> CrawlInfo:
    return CrawlInfo(
        id=int(row[0]),
        site_key=str(row[1]),
        mode=str(row[2]),
        status=str(row[3]),
        started_at=str(row[4]),
        ended_at=None if row[5] is None else str(row[5]),
        pages=int(row[6]),
        added=int(row[7]),
        changed=int(row[8]),
        unchanged=int(row[9]),
        removed=int(row[10]),
        failed=int(row[11]),
    )


def latest_crawl(conn: apsw.Connection, site_key: str) -> CrawlInfo | None:
    """The most recent crawl of a site, whatever its status."""
    row = fetch_one(
        conn, f"SELECT {_CRAWL_COLUMNS} FROM crawls WHERE site_key = ? ORDER BY id DESC LIMIT 1", (site_key,)
    )
    return _crawl(row) if row else None


def list_crawls(conn: apsw.Connection, site_key: str, limit: int = 50) -> list[CrawlInfo]:
    rows = fetch_all(
        conn,
        f"SELECT {_CRAWL_COLUMNS} FROM crawls WHERE site_key = ? ORDER BY id DESC LIMIT ?",
        (site_key, limit),
    )
    return [_crawl(r) for r in rows]


def diff(conn: apsw.Connection, site_key: str, since: datetime) -> CrawlDiff:
    """Compare the latest completed crawl with the last one completed at or before ``since``."""
    cutoff = parse_time(since)
    row = fetch_one(
        conn,
        f"SELECT {_CRAWL_COLUMNS} FROM crawls WHERE site_key = ? AND status = 'completed'"
        " ORDER BY ended_ts DESC, id DESC LIMIT 1",
        (site_key,),
    )
    current = _crawl(row) if row else None
    if current is None:
        return CrawlDiff(site_key, None, None, note=f"no completed crawl of {site_key!r} yet")
    row = fetch_one(
        conn,
        f"SELECT {_CRAWL_COLUMNS} FROM crawls WHERE site_key = ? AND status = 'completed'"
        " AND ended_ts <= ? ORDER BY ended_ts DESC, id DESC LIMIT 1",
        (site_key, cutoff),
    )
    baseline = _crawl(row) if row else None
    if baseline is None:
        return CrawlDiff(
            site_key,
            None,
            current,
            note=f"no completed crawl of {site_key!r} ended at or before {since.isoformat()}",
        )
    if baseline.id == current.id:
        return CrawlDiff(
            site_key,
            baseline,
            current,
            note="the latest crawl is the baseline: nothing has been crawled since",
        )
    old: dict[str, str] = dict(
        fetch_all(conn, "SELECT url, content_hash FROM page_history WHERE crawl_id = ?", (baseline.id,))
    )
    new: dict[str, str] = dict(
        fetch_all(conn, "SELECT url, content_hash FROM page_history WHERE crawl_id = ?", (current.id,))
    )
    added = tuple(sorted(u for u in new if u not in old))
    removed = tuple(sorted(u for u in old if u not in new))
    changed = tuple(
        ChangedPage(u, str(new[u]), str(old[u])) for u in sorted(new) if u in old and new[u] != old[u]
    )
    unchanged = sum(1 for u in new if u in old and new[u] == old[u])
    return CrawlDiff(
        site_key, baseline, current, added=added, removed=removed, changed=changed, unchanged=unchanged
    )
