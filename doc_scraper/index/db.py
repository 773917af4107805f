"""The SQLite index file: connections, pragmas, schema migrations, query time limits.

One database per state directory (``<state_dir>/index.db``) in WAL mode, so
readers never wait for the single writer thread. Migrations are forward-only
and numbered; ``schema_version`` holds the version reached, and a file written
by a newer doc-scraper is refused rather than guessed at.

Generations: every site has a ``live_generation`` in ``sites``. Searches and
page reads only see rows of the live generation. A fresh crawl writes into a
new staging generation and ``finish_crawl(commit=True)`` flips the pointer in
one transaction, so readers see either the old crawl or the new one, never a
half-written mix.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any, cast

import apsw

from doc_scraper.errors import SearchError, StateError

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

logger = logging.getLogger(__name__)

DEFAULT_QUERY_TIME_LIMIT = 2.0  # seconds a single read query may run
BUSY_TIMEOUT_MS = 5000
_PROGRESS_STEPS = 2000  # VM instructions between time checks

# The FTS5 tokenizer: Porter stemming over unicode61 suits prose questions;
# identifiers are matched exactly through ``section_idents`` instead.
FTS_TOKENIZE = "porter unicode61 remove_diacritics 2"

_MIGRATION_1 = f"""
CREATE TABLE sites (
    site_key TEXT PRIMARY KEY,
    live_generation INTEGER NOT NULL DEFAULT 0,
    staging_generation INTEGER
);
CREATE TABLE crawls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    site_key TEXT NOT NULL,
    mode TEXT NOT NULL,
    status TEXT NOT NULL,              -- running | completed | interrupted
    generation INTEGER NOT NULL,
    started_at TEXT NOT NULL,          -- RFC 3339 as given
    started_ts REAL,                   -- the same instant as epoch seconds, for comparisons
    ended_at TEXT,
    ended_ts REAL,
    pages INTEGER NOT NULL DEFAULT 0,
    added INTEGER NOT NULL DEFAULT 0,
    changed INTEGER NOT NULL DEFAULT 0,
    unchanged INTEGER NOT NULL DEFAULT 0,
    removed INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    summary TEXT NOT NULL DEFAULT '{{}}'
);
CREATE INDEX crawls_site_ended ON crawls (site_key, ended_ts);
CREATE TABLE page_history (
    crawl_id INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    title TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    depth INTEGER NOT NULL,
    PRIMARY KEY (crawl_id, url)
) WITHOUT ROWID;
CREATE INDEX page_history_url ON page_history (url);
CREATE TABLE pages (
    id INTEGER PRIMARY KEY,
    site_key TEXT NOT NULL,
    generation INTEGER NOT NULL,
    url TEXT NOT NULL,
    url_key TEXT NOT NULL,             -- normalised url for lookups (no trailing slash / index.html)
    title TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    depth INTEGER NOT NULL,
    crawled_at TEXT NOT NULL,
    output_path TEXT NOT NULL,
    headings TEXT NOT NULL,            -- JSON array
    crawl_id INTEGER,
    content TEXT NOT NULL,             -- last: big values sit on overflow pages the other reads skip
    UNIQUE (site_key, generation, url)
);
CREATE INDEX pages_url_key ON pages (site_key, generation, url_key);
CREATE TABLE sections (
    id INTEGER PRIMARY KEY,
    page_id INTEGER NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    anchor TEXT NOT NULL,
    heading_path TEXT NOT NULL,        -- JSON array of headings
    heading_text TEXT NOT NULL,        -- the same joined with " > ", indexed
    title TEXT NOT NULL,               -- the page title
    level INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    identifiers TEXT NOT NULL          -- identifier words, space separated, indexed
);
CREATE INDEX sections_page ON sections (page_id);
CREATE TABLE section_idents (
    ident TEXT NOT NULL,               -- lower-cased identifier or dotted suffix
    section_id INTEGER NOT NULL REFERENCES sections (id) ON DELETE CASCADE,
    strength INTEGER NOT NULL,         -- 2: the section defines it, 1: it is mentioned
    PRIMARY KEY (ident, section_id)
) WITHOUT ROWID;
CREATE INDEX section_idents_section ON section_idents (section_id);
CREATE VIRTUAL TABLE sections_fts USING fts5 (
    title, heading_text, text, identifiers,
    content='sections', content_rowid='id',
    tokenize='{FTS_TOKENIZE}'
);
CREATE VIRTUAL TABLE sections_vocab USING fts5vocab (sections_fts, row);
CREATE TRIGGER sections_ai AFTER INSERT ON sections BEGIN
    INSERT INTO sections_fts (rowid, title, heading_text, text, identifiers)
    VALUES (new.id, new.title, new.heading_text, new.text, new.identifiers);
END;
CREATE TRIGGER sections_ad AFTER DELETE ON sections BEGIN
    INSERT INTO sections_fts (sections_fts, rowid, title, heading_text, text, identifiers)
    VALUES ('delete', old.id, old.title, old.heading_text, old.text, old.identifiers);
END;
"""

# Forward-only: append, never edit a released entry.
MIGRATIONS: tuple[str, ...] = (_MIGRATION_1,)
SCHEMA_VERSION = len(MIGRATIONS)


Row = tuple[Any, ...]


def fetch_all(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Row]:
    """Rows of a query, typed loosely (SQLite values are checked where they are used)."""
    return cast("list[Row]", conn.execute(sql, params).fetchall())


def fetch_one(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> Row | None:
    return cast("Row | None", conn.execute(sql, params).fetchone())


def change_version(conn: apsw.Connection) -> tuple[int, int]:
    """A value that moves whenever the database may have changed, as seen from ``conn``.

    ``PRAGMA data_version`` moves when another connection commits; the
    connection's own writes, even rolled back ones, move ``total_changes()``.
    """
    row = fetch_one(conn, "PRAGMA data_version")
    return (int(row[0]) if row else 0, conn.total_changes())


def cacheable(conn: apsw.Connection) -> bool:
    """Whether what ``conn`` reads now may be kept: not inside a write transaction that may roll back."""
    return bool(conn.readonly("main")) or not conn.in_transaction


@contextlib.contextmanager
def snapshot(conn: apsw.Connection) -> Iterator[None]:
    """Run several reads against one consistent state of the database."""
    conn.execute("SAVEPOINT snapshot")
    try:
        yield
    finally:
        conn.execute("RELEASE snapshot")


def open_connection(path: Path, *, readonly: bool = False) -> apsw.Connection:
    """Open ``path`` with our pragmas; a writable connection also migrates the schema."""
    try:
        if readonly:
            flags = apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE | apsw.SQLITE_OPEN_URI
        conn = apsw.Connection(str(path), flags=flags)
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        conn.execute("PRAGMA foreign_keys = ON")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            migrate(conn, path)
        elif check_version(conn, path) < SCHEMA_VERSION:
            conn.close()
            raise StateError(
                str(path),
                "the search index is missing or from an older doc-scraper; "
                "run `doc-scraper crawl -site KEY` to create or upgrade it",
            )
        return conn
    except apsw.Error as exc:
        raise StateError(
            str(path),
            f"cannot open the index database: {exc}; delete it to rebuild the index with the next crawl",
        ) from exc


def schema_version(conn: apsw.Connection) -> int:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def check_version(conn: apsw.Connection, path: Path) -> int:
    version = schema_version(conn)
    if version > SCHEMA_VERSION:
        raise StateError(
            str(path),
            f"index schema version {version} is newer than this doc-scraper "
            f"understands ({SCHEMA_VERSION}); upgrade doc-scraper or delete the file",
        )
    return version


def migrate(conn: apsw.Connection, path: Path) -> None:
    """Bring the schema up to ``SCHEMA_VERSION``, one migration per transaction."""
    with conn:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY)")
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = check_version(conn, path)
            if version >= SCHEMA_VERSION:
                conn.execute("COMMIT")
                return
            conn.execute(MIGRATIONS[version])
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version + 1,))
            conn.execute("COMMIT")
            logger.info("index.migrated", extra={"db_path": str(path), "version": version + 1})
        except BaseException:
            conn.execute("ROLLBACK")
            raise


@contextlib.contextmanager
def time_limit(conn: apsw.Connection, seconds: float) -> Iterator[None]:
    """Abort any statement on ``conn`` that runs longer than ``seconds`` (raises SearchError)."""
    deadline = time.monotonic() + seconds

    def _check() -> bool:
        return time.monotonic() > deadline

    conn.set_progress_handler(_check, _PROGRESS_STEPS)
    try:
        yield
    except apsw.InterruptError as exc:
        raise SearchError(
            f"the query took longer than {seconds:g} s and was stopped; use fewer or more specific terms"
        ) from exc
    finally:
        conn.set_progress_handler(None)
