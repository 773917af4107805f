"""``IndexReader``: read-only access to ``index.db`` from any thread.

Each thread gets its own read-only connection (SQLite connections are not
shared between concurrent readers), WAL lets reads run while the writer
thread writes, and every query runs under a time limit.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from doc_scraper.errors import StateError
from doc_scraper.index import history, pages
from doc_scraper.index import hybrid as _hybrid
from doc_scraper.index import search as _search
from doc_scraper.index.db import DEFAULT_QUERY_TIME_LIMIT, open_connection, snapshot, time_limit

if TYPE_CHECKING:
    from datetime import datetime

    import apsw

    from doc_scraper.index.history import CrawlDiff, CrawlInfo
    from doc_scraper.index.pages import PageInfo, StoredPage
    from doc_scraper.index.search import SearchResult


class IndexReader:
    """Searches and page reads over the live generation of every site."""

    def __init__(self, db_path: Path, *, time_limit_s: float = DEFAULT_QUERY_TIME_LIMIT) -> None:
        self.db_path = db_path
        self.time_limit_s = time_limit_s
        self._local = threading.local()
        self._lock = threading.Lock()
        self._all: list[apsw.Connection] = []

    @classmethod
    def open(cls, db_path: Path, *, time_limit_s: float = DEFAULT_QUERY_TIME_LIMIT) -> IndexReader:
        """Open the index read-only; StateError if there is no index yet or it is unusable."""
        path = Path(db_path)
        if not path.is_file():
            raise StateError(str(path), "no search index yet; run `doc-scraper crawl -site KEY` first")
        reader = cls(path, time_limit_s=time_limit_s)
        reader._conn()  # fail now, not on the first query, if the file is unusable
        return reader

    def _conn(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_connection(self.db_path, readonly=True)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this reader opened (call once no thread uses it)."""
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()

    def _live_generation(self, conn: apsw.Connection, site_key: str) -> int | None:
        row = conn.execute("SELECT live_generation FROM sites WHERE site_key = ?", (site_key,)).fetchone()
        return None if row is None else int(row[0])

    # -------------------------------------------------------------- queries

    def search(
        self,
        query: str,
        *,
        site_key: str | None = None,
        limit: int = 10,
        one_per_page: bool = True,
        mode: str | None = None,
    ) -> list[SearchResult]:
        """``mode``: lexical, dense or hybrid; None: hybrid if the index has vectors and the extra is on."""
        conn = self._conn()
        chosen, embedder = _hybrid.resolve_mode(conn, mode)  # may load the model: outside the time limit
        with time_limit(conn, self.time_limit_s), snapshot(conn):
            if chosen == "lexical":
                return _search.search(conn, query, site_key=site_key, limit=limit, one_per_page=one_per_page)
            return _hybrid.search(
                conn,
                query,
                embedder=embedder,
                mode=chosen,
                db_key=str(self.db_path),
                site_key=site_key,
                limit=limit,
                one_per_page=one_per_page,
            )

    def search_mode(self) -> str:
        """The mode ``search`` uses by default: ``hybrid`` or ``lexical``."""
        from doc_scraper.index.embed import index_mode

        return index_mode(self._conn())

    def list_pages(self, site_key: str, offset: int = 0, limit: int = 100) -> tuple[list[PageInfo], int]:
        conn = self._conn()
        with time_limit(conn, self.time_limit_s), snapshot(conn):
            generation = self._live_generation(conn, site_key)
            if generation is None:
                return [], 0
            return pages.list_pages(conn, site_key, generation, offset, limit)

    def get_page(self, site_key: str, url: str) -> StoredPage | None:
        conn = self._conn()
        with time_limit(conn, self.time_limit_s), snapshot(conn):
            generation = self._live_generation(conn, site_key)
            if generation is None:
                return None
            return pages.get_page(conn, site_key, generation, url)

    def latest_crawl(self, site_key: str) -> CrawlInfo | None:
        conn = self._conn()
        with time_limit(conn, self.time_limit_s):
            return history.latest_crawl(conn, site_key)

    def crawls(self, site_key: str, limit: int = 50) -> list[CrawlInfo]:
        conn = self._conn()
        with time_limit(conn, self.time_limit_s):
            return history.list_crawls(conn, site_key, limit)

    def diff(self, site_key: str, since: datetime) -> CrawlDiff:
        conn = self._conn()
        with time_limit(conn, self.time_limit_s), snapshot(conn):
            return history.diff(conn, site_key, since)

    def sites(self) -> list[str]:
        """Site keys that have pages in the index."""
        conn = self._conn()
        with time_limit(conn, self.time_limit_s):
            rows = conn.execute(
                "SELECT DISTINCT p.site_key FROM pages p JOIN sites s ON s.site_key = p.site_key"
                " AND s.live_generation = p.generation ORDER BY p.site_key"
            ).fetchall()
        return [str(r[0]) for r in rows]
