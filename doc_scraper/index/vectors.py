"""Section embeddings stored beside the FTS5 index, and dense search over them.

Three tables in ``index.db`` (created on first use, so an index without
embeddings is unchanged):

- ``embed_meta``: the model id the vectors were made with (name + version);
  a different model empties the vector tables, so the next pass re-embeds all;
- ``embed_cache``: content-addressed vectors, keyed by a hash of model id and
  the embedded text. A page re-crawled with the same sections gets new section
  rows but finds its vectors here: only changed sections are embedded again;
- ``section_vectors``: which cached vector each section uses; rows vanish with
  their section (``ON DELETE CASCADE``).

Vectors are L2-normalised float32, little-endian, so a dot product is the
cosine similarity. Search loads the live generation's vectors once per
process into a matrix (NumPy when installed, plain Python otherwise: the tests
run without NumPy) and reloads it when the stored set changes.
"""

from __future__ import annotations

import hashlib
import heapq
import importlib
import logging
import re
import sys
import threading
import weakref
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from doc_scraper.index.db import cacheable, change_version, fetch_all, fetch_one

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    import apsw

logger = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS embed_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS embed_cache (hash TEXT PRIMARY KEY, vector BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS section_vectors (
    section_id INTEGER PRIMARY KEY REFERENCES sections (id) ON DELETE CASCADE,
    hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS section_vectors_hash ON section_vectors (hash);
"""

# Characters of section text embedded: the model reads 256 word pieces at most, so more is wasted work.
EMBED_TEXT_CHARS = 1200
_LINK_TARGET_RE = re.compile(r"\]\([^)\s]*\)")
_MARKUP_RE = re.compile(r"[`*_#>|]+|-{3,}|={3,}")


@dataclass(frozen=True, slots=True)
class PendingSection:
    """A section that has no vector yet, with the text to embed."""

    section_id: int
    text: str
    hash: str


def embed_text(heading_text: str, text: str, *, max_chars: int = EMBED_TEXT_CHARS) -> str:
    """What the model reads for a section: its heading path, then its text without link targets or markup."""
    body = _MARKUP_RE.sub(" ", _LINK_TARGET_RE.sub("]", text))
    body = " ".join(body.replace("[", " ").replace("]", " ").split())
    head = " ".join(heading_text.split())
    out = f"{head}: {body}" if head else body
    return out[:max_chars]


def text_hash(model_id: str, text: str) -> str:
    return hashlib.sha1(f"{model_id}\0{text}".encode()).hexdigest()[:32]


def to_blob(vector: Any) -> bytes:
    """float32 little-endian bytes of a vector (a NumPy row or a sequence of floats)."""
    if hasattr(vector, "astype"):
        return bytes(vector.astype("<f4").tobytes())
    values = array("f", [float(v) for v in vector])
    if sys.byteorder == "big":
        values.byteswap()
    return values.tobytes()


def from_blob(blob: bytes) -> array[float]:
    values = array("f")
    values.frombytes(blob)
    if sys.byteorder == "big":
        values.byteswap()
    return values


# ------------------------------------------------------------------ writes (one writer connection)


def ensure_schema(conn: apsw.Connection, model_id: str) -> bool:
    """Create the vector tables; forget all vectors if they were made by another model.

    Returns True when stored vectors were dropped because the model changed.
    """
    conn.execute(SCHEMA)
    row = fetch_one(conn, "SELECT value FROM embed_meta WHERE key = 'model'")
    if row is not None and str(row[0]) == model_id:
        return False
    changed = row is not None
    if changed:
        logger.info(
            "embed.model_changed", extra={"old_model": str(row[0]) if row else "", "new_model": model_id}
        )
        conn.execute("DELETE FROM section_vectors")
        conn.execute("DELETE FROM embed_cache")
    conn.execute("INSERT OR REPLACE INTO embed_meta (key, value) VALUES ('model', ?)", (model_id,))
    return changed


def pending_sections(conn: apsw.Connection, model_id: str, limit: int) -> list[PendingSection]:
    """Up to ``limit`` sections (any generation) that have no vector yet."""
    rows = fetch_all(
        conn,
        "SELECT s.id, s.heading_text, s.text FROM sections s"
        " WHERE NOT EXISTS (SELECT 1 FROM section_vectors v WHERE v.section_id = s.id)"
        " ORDER BY s.id LIMIT ?",
        (int(limit),),
    )
    out = []
    for sid, heading, text in rows:
        content = embed_text(str(heading), str(text))
        out.append(PendingSection(int(sid), content, text_hash(model_id, content)))
    return out


def link_cached(conn: apsw.Connection, sections: Sequence[PendingSection]) -> list[PendingSection]:
    """Point sections whose text is already embedded at the cached vector; return the others."""
    misses: list[PendingSection] = []
    for section in sections:
        if fetch_one(conn, "SELECT 1 FROM embed_cache WHERE hash = ?", (section.hash,)):
            conn.execute(
                "INSERT OR REPLACE INTO section_vectors (section_id, hash) VALUES (?, ?)",
                (section.section_id, section.hash),
            )
        else:
            misses.append(section)
    return misses


def store_vectors(conn: apsw.Connection, items: Iterable[tuple[PendingSection, Any]]) -> int:
    """Save computed vectors and link their sections; sections deleted meanwhile are skipped."""
    n = 0
    for section, vector in items:
        conn.execute(
            "INSERT OR REPLACE INTO embed_cache (hash, vector) VALUES (?, ?)", (section.hash, to_blob(vector))
        )
        conn.execute(
            "INSERT OR REPLACE INTO section_vectors (section_id, hash)"
            " SELECT id, ? FROM sections WHERE id = ?",
            (section.hash, section.section_id),
        )
        n += 1
    return n


def prune_cache(conn: apsw.Connection) -> int:
    """Drop cached vectors no section uses any more."""
    conn.execute("DELETE FROM embed_cache WHERE hash NOT IN (SELECT hash FROM section_vectors)")
    return int(conn.changes())


# ------------------------------------------------------------------ reads


def has_table(conn: apsw.Connection) -> bool:
    return (
        fetch_one(conn, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'section_vectors'")
        is not None
    )


def stored_model(conn: apsw.Connection) -> str | None:
    """The model id of the stored vectors, or None if this index has none."""
    if not has_table(conn):
        return None
    row = fetch_one(conn, "SELECT value FROM embed_meta WHERE key = 'model'")
    if row is None or fetch_one(conn, "SELECT 1 FROM section_vectors LIMIT 1") is None:
        return None
    return str(row[0])


def coverage(conn: apsw.Connection) -> tuple[int, int]:
    """(live sections with a vector, live sections)."""
    live = (
        "FROM sections s JOIN pages p ON p.id = s.page_id"
        " JOIN sites st ON st.site_key = p.site_key AND st.live_generation = p.generation"
    )
    total_row = fetch_one(conn, f"SELECT count(*) {live}")
    total = int(total_row[0]) if total_row else 0
    if not has_table(conn):
        return 0, total
    done_row = fetch_one(conn, f"SELECT count(*) {live} JOIN section_vectors v ON v.section_id = s.id")
    return (int(done_row[0]) if done_row else 0), total


def _numpy() -> Any | None:
    try:
        return importlib.import_module("numpy")
    except ImportError:
        return None


class VectorMatrix:
    """The live generation's section vectors, searchable by cosine similarity."""

    def __init__(self, ids: list[int], sites: list[str], blobs: list[bytes]) -> None:
        self.ids = ids
        self.sites = sites
        np = _numpy()
        self._np = np
        self.dim = len(blobs[0]) // 4 if blobs else 0
        self._rows: dict[int, int] | None = None  # section id -> row, built on first use
        if np is not None:
            flat = np.frombuffer(b"".join(blobs), dtype="<f4")
            self._matrix: Any = flat.reshape(len(blobs), self.dim) if blobs else flat.reshape(0, 0)
            self._site_arr: Any = np.array(sites, dtype=object)
        else:
            self._matrix = [from_blob(b) for b in blobs]

    def __len__(self) -> int:
        return len(self.ids)

    def cosines(self, query: Any, section_ids: Iterable[int]) -> dict[int, float]:
        """Cosine of ``query`` with each given section that has a vector."""
        if not self.ids:
            return {}
        if self._rows is None:
            self._rows = {sid: i for i, sid in enumerate(self.ids)}
        rows = [(sid, self._rows[sid]) for sid in section_ids if sid in self._rows]
        if not rows:
            return {}
        if self._np is not None:
            np = self._np
            q = np.asarray(query, dtype="<f4").reshape(-1)
            scores = self._matrix[[i for _, i in rows]] @ q
            return {sid: float(v) for (sid, _), v in zip(rows, scores, strict=True)}
        qv = [float(v) for v in query]
        return {sid: sum(a * b for a, b in zip(self._matrix[i], qv, strict=False)) for sid, i in rows}

    def search(self, query: Any, k: int, *, site_key: str | None = None) -> list[tuple[int, float]]:
        """The ``k`` most similar sections as (section id, cosine), best first."""
        if not self.ids or k <= 0:
            return []
        if self._np is not None:
            np = self._np
            q = np.asarray(query, dtype="<f4").reshape(-1)
            scores = self._matrix @ q
            if site_key is not None:
                scores = np.where(self._site_arr == site_key, scores, -np.inf)
            k = min(k, len(self.ids))
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top])]
            return [(self.ids[i], float(scores[i])) for i in top if np.isfinite(scores[i])]
        qv = [float(v) for v in query]
        scored = (
            (self.ids[i], sum(a * b for a, b in zip(row, qv, strict=False)))
            for i, row in enumerate(self._matrix)
            if site_key is None or self.sites[i] == site_key
        )
        return heapq.nlargest(k, scored, key=lambda t: t[1])


_cache_lock = threading.Lock()
_matrix_cache: dict[str, tuple[tuple[Any, ...], VectorMatrix]] = {}
# Per connection: the change version at which it last computed the fingerprint, and that fingerprint.
_unchanged: weakref.WeakKeyDictionary[apsw.Connection, tuple[tuple[int, int], tuple[Any, ...]]] = (
    weakref.WeakKeyDictionary()
)


def _fingerprint(conn: apsw.Connection) -> tuple[Any, ...]:
    row = fetch_one(conn, "SELECT count(*), max(rowid) FROM section_vectors")
    gens = fetch_all(conn, "SELECT site_key, live_generation FROM sites ORDER BY site_key")
    return (tuple(row or ()), tuple(tuple(g) for g in gens))


def load_matrix(conn: apsw.Connection, cache_key: str) -> VectorMatrix:
    """The live vectors, cached per ``cache_key`` (the database path) until the stored set changes."""
    version = change_version(conn)
    with _cache_lock:
        seen = _unchanged.get(conn)
        cached = _matrix_cache.get(cache_key)
        if seen is not None and seen[0] == version and cached is not None and cached[0] == seen[1]:
            return cached[1]  # nothing committed since this connection last looked: skip the count
    if not has_table(conn):
        return VectorMatrix([], [], [])
    fp = _fingerprint(conn)
    with _cache_lock:
        if cacheable(conn):
            _unchanged[conn] = (version, fp)
        cached = _matrix_cache.get(cache_key)
        if cached is not None and cached[0] == fp:
            return cached[1]
    rows = fetch_all(
        conn,
        "SELECT s.id, p.site_key, c.vector FROM section_vectors v"
        " JOIN sections s ON s.id = v.section_id JOIN pages p ON p.id = s.page_id"
        " JOIN sites st ON st.site_key = p.site_key AND st.live_generation = p.generation"
        " JOIN embed_cache c ON c.hash = v.hash ORDER BY s.id",
    )
    matrix = VectorMatrix([int(r[0]) for r in rows], [str(r[1]) for r in rows], [bytes(r[2]) for r in rows])
    with _cache_lock:
        _matrix_cache[cache_key] = (fp, matrix)
    logger.debug("embed.matrix_loaded", extra={"db_path": cache_key, "vectors": len(matrix)})
    return matrix
