"""pages.jsonl: records streamed during the crawl, finalised by byte offset.

During a crawl new records are appended to ``<name>.part``. Finalising merges
the previous finished file and the part file: per URL the last record wins,
records come out sorted by URL, then exactly one ``crawl_meta`` line. Only
offsets are held in memory, never page bodies.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from doc_scraper.models import PageRecord

PART_SUFFIX = ".part"


def page_json(record: PageRecord) -> dict[str, Any]:
    return {
        "record_type": "page",
        "url": record.url,
        "title": record.title,
        "content": record.content,
        "headings": list(record.headings),
        "links": list(record.links),
        "images": list(record.images),
        "content_hash": record.content_hash,
        "crawled_at": record.crawled_at,
        "depth": record.depth,
        "path": record.path,
    }


class JsonlAppender:
    """Appends page records to the part file; one line each, flushed as written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[bytes] | None = open(path, "ab")  # noqa: SIM115 - closed in close()

    def append(self, record: PageRecord) -> None:
        if self._fh is None:
            raise ValueError("appender is closed")
        line = json.dumps(page_json(record), ensure_ascii=False).encode("utf-8") + b"\n"
        self._fh.write(line)
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()
            self._fh = None


def _url_key(url: str) -> int:
    # 64-bit digest: a collision needs ~4e9 pages per site; ints keep the map small.
    return int.from_bytes(hashlib.blake2b(url.encode(), digest_size=8).digest(), "big")


def _index_records(files: list[Path]) -> dict[int, int]:
    """url key -> (file index, offset, length) of its last page record, packed in one int.

    Packing keeps memory near 100 bytes per page, so finalising 100,000 pages
    costs ~10 MB however large the pages are.
    """
    where: dict[int, int] = {}
    for i, path in enumerate(files):
        if not path.exists():
            continue
        offset = 0
        with open(path, "rb") as fh:
            for line in fh:
                length = len(line)
                if line.endswith(b"\n"):  # a torn last line (kill -9) is ignored
                    try:
                        data = json.loads(line)
                    except ValueError:
                        data = None
                    if isinstance(data, dict) and data.get("record_type") == "page" and "url" in data:
                        where[_url_key(str(data["url"]))] = (offset << 32 | length) << 8 | i
                offset += length
    return where


def finalize_jsonl(
    target: Path,
    sources: list[Path],
    keep_urls: Iterable[str],
    meta: dict[str, Any],
) -> int:
    """Write ``target`` from ``sources`` (oldest first) for the URLs in ``keep_urls``.

    ``keep_urls`` must be sorted; URLs without a record are skipped. Returns
    the number of page records written.
    """
    where = _index_records(sources)
    handles = [open(p, "rb") if p.exists() else None for p in sources]  # noqa: SIM115
    tmp = target.with_name(target.name + ".tmp")
    count = 0
    try:
        with open(tmp, "wb") as out:
            for url in keep_urls:
                packed = where.get(_url_key(url))
                if packed is None:
                    continue
                fh = handles[packed & 0xFF]
                if fh is None:
                    continue
                fh.seek(packed >> 40)
                out.write(fh.read((packed >> 8) & 0xFFFFFFFF))
                count += 1
            meta_line = {"record_type": "crawl_meta", **meta, "total_pages": count}
            out.write(json.dumps(meta_line, ensure_ascii=False).encode("utf-8") + b"\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    finally:
        for fh in handles:
            if fh is not None:
                fh.close()
        tmp.unlink(missing_ok=True)
    return count


def iter_pages(path: Path) -> Iterable[dict[str, Any]]:
    """Stream the page records of a finished pages.jsonl."""
    if not path.exists():
        return
    with open(path, "rb") as fh:
        for line in fh:
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and data.get("record_type") == "page":
                yield data


def read_meta(path: Path) -> dict[str, Any] | None:
    """The trailing crawl_meta record of a finished file, or None."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    with open(path, "rb") as fh:
        fh.seek(max(0, path.stat().st_size - 65536))
        tail = fh.read().splitlines()
    for line in reversed(tail):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("record_type") == "crawl_meta":
            return data
    return None
