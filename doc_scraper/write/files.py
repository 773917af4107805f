"""Markdown files: atomic writes, YAML frontmatter, in-site links made relative."""

from __future__ import annotations

import json
import os
import posixpath
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from collections.abc import Callable

    from doc_scraper.models import PageRecord

# A Markdown inline link or image target: ](url) or ](url "title").
_LINK_TARGET = re.compile(r"\]\((?P<url>https?://[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder and ``os.replace``: all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


# Characters YAML will not take raw inside a double-quoted scalar (or folds as line breaks).
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return repr(value)
    # A JSON string is a valid YAML double-quoted scalar; escape what YAML reads differently.
    text = json.dumps(str(value), ensure_ascii=False)
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def frontmatter(fields: dict[str, Any]) -> str:
    """YAML frontmatter block; every title round-trips through a YAML parser."""
    body = "".join(f"{key}: {_yaml_scalar(value)}\n" for key, value in fields.items())
    return f"---\n{body}---\n\n"


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split a file written by ``render_page`` back into (fields, body)."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        return {}, text
    data = yaml.safe_load(text[4 : end + 1]) or {}
    body = text[end + 5 :]
    if body.startswith("\n"):
        body = body[1:]
    return (data if isinstance(data, dict) else {}), body


def relativize_links(markdown: str, from_relpath: str, to_relpath: Callable[[str], str | None]) -> str:
    """Point absolute links that land inside the site at the local .md files.

    ``to_relpath`` maps an absolute URL (without fragment) to its output path,
    or None when it is outside the site. Fenced code is left untouched.
    """
    from_dir = posixpath.dirname(from_relpath)

    def replace(match: re.Match[str]) -> str:
        url = match.group("url")
        base, _, fragment = url.partition("#")
        target = to_relpath(base)
        if target is None:
            return match.group(0)
        rel = posixpath.relpath(target, from_dir or ".")
        if fragment:
            rel += "#" + fragment
        return f"]({rel}{match.group('title') or ''})"

    out: list[str] = []
    in_fence = ""
    for line in markdown.splitlines(keepends=True):
        fence = _FENCE.match(line)
        if in_fence:
            if fence and fence.group(1)[0] == in_fence[0] and len(fence.group(1)) >= len(in_fence):
                in_fence = ""
            out.append(line)
            continue
        if fence:
            in_fence = fence.group(1)
            out.append(line)
            continue
        out.append(_LINK_TARGET.sub(replace, line) if "](" in line else line)
    return "".join(out)


def render_page(record: PageRecord, body: str) -> str:
    fields = {
        "title": record.title,
        "url": record.url,
        "crawled_at": record.crawled_at,
        "content_hash": record.content_hash,
        "depth": record.depth,
    }
    return frontmatter(fields) + body.rstrip("\n") + "\n"


def write_page(site_dir: Path, record: PageRecord, body: str) -> Path:
    """Write one page's Markdown file under ``site_dir`` atomically."""
    target = (site_dir / record.path).resolve()
    root = site_dir.resolve()
    if root not in target.parents:
        # url_to_relpath already sanitises; this is the last line of defence.
        raise ValueError(f"refusing to write outside the site folder: {record.path!r}")
    atomic_write_text(target, render_page(record, body))
    return target
