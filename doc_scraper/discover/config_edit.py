"""Insert one site entry into config.yaml as text, leaving every other byte as it was.

The ``sites:`` mapping is located through the YAML node tree (so comments, quoting, key order
and blank lines elsewhere survive), the rendered entry is spliced after the last line of the
mapping at the indentation its keys already use, and the result is parsed and validated
before it atomically replaces the file (same folder temp file, original mode kept).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from doc_scraper.config.load import config_from_dict
from doc_scraper.errors import ConfigError

INDENT = 2


@dataclass(frozen=True, slots=True)
class SpliceResult:
    """The new file text and where the entry went (1-based line numbers)."""

    text: str
    first_line: int
    last_line: int
    created: bool  # the file did not exist (or was empty of YAML)


class _BlockDumper(yaml.SafeDumper):
    """Indent list items under their key (``key:\\n  - item``), as people write config files."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def render_entry(
    key: str,
    entry: dict[str, Any],
    indent: int,
    *,
    comment: str = "",
    newline: str = "\n",
    step: int = INDENT,
) -> str:
    """The YAML lines of ``key: entry`` indented by ``indent`` spaces, each line ending in ``newline``."""
    step = min(max(step, 2), 9)
    body = _dump({key: entry}, allow_unicode=True, step=step)
    if yaml.safe_load(body) != {key: entry}:
        # Some characters (NEL, line separators) do not survive raw: escape everything non-ASCII.
        body = _dump({key: entry}, allow_unicode=False, step=step)
    pad = " " * indent
    lines = []
    if comment:
        lines.append(pad + "# " + comment.replace("\n", " "))
    lines += [pad + line if line else line for line in body.splitlines()]
    return "".join(line + newline for line in lines)


def _dump(data: dict[str, Any], *, allow_unicode: bool, step: int) -> str:
    return yaml.dump(
        data,
        Dumper=_BlockDumper,
        default_flow_style=False,
        sort_keys=False,
        indent=step,
        width=1000,
        allow_unicode=allow_unicode,
    )


def splice_site(
    text: str, key: str, entry: dict[str, Any], *, source: str = "config.yaml", comment: str = ""
) -> SpliceResult:
    """Return ``text`` with ``key: entry`` added at the end of its ``sites:`` mapping."""
    newline = "\r\n" if "\r\n" in text else "\n"
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{source} is not valid YAML ({_short(exc)}); fix it before adding a site"
        ) from None
    if root is None:
        block = "sites:" + newline + render_entry(key, entry, INDENT, comment=comment, newline=newline)
        return _insert(text, len(text), block, newline, created=True)
    if not isinstance(root, yaml.MappingNode):
        raise ConfigError(
            f"{source}: the top level must be a mapping of keys, e.g. `sites:`; cannot add a site"
        )
    sites_value: yaml.Node | None = None
    sites_key: yaml.Node | None = None
    for key_node, value_node in root.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == "sites":
            sites_key, sites_value = key_node, value_node
    if sites_key is None or sites_value is None:
        block = "sites:" + newline + render_entry(key, entry, INDENT, comment=comment, newline=newline)
        return _insert(text, len(text), block, newline, created=False)

    if isinstance(sites_value, yaml.ScalarNode):
        if sites_value.tag != "tag:yaml.org,2002:null":
            raise ConfigError(f"{source}: `sites` must be a mapping of site keys", key="sites")
        if sites_value.start_mark.line != sites_key.start_mark.line or sites_value.value not in ("",):
            raise ConfigError(
                f"{source}: `sites: {sites_value.value}` is written inline; "
                "replace it with a plain `sites:` line, then run add again",
                key="sites",
            )
        indent = sites_key.start_mark.column + INDENT
        at = _line_end(text, sites_key.start_mark.line)
        block = render_entry(key, entry, indent, comment=comment, newline=newline)
        return _insert(text, at, block, newline, created=False)
    if not isinstance(sites_value, yaml.MappingNode) or sites_value.flow_style:
        raise ConfigError(
            f"{source}: `sites` is written in flow style ({{...}}); rewrite it as an indented block "
            "so entries can be added without reformatting the file",
            key="sites",
        )
    if not sites_value.value:
        raise ConfigError(f"{source}: `sites` is an empty mapping", key="sites")
    for key_node, _ in sites_value.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
            raise ConfigError(
                f"site {key!r} already exists in {source} (line {key_node.start_mark.line + 1}); "
                "choose another key with -site KEY",
                key=f"sites.{key}",
            )
    indent = sites_value.value[0][0].start_mark.column
    step = _nested_step(sites_value, indent)
    last_line = _last_content_line(text, sites_value.value[-1][1])
    block = render_entry(key, entry, indent, comment=comment, newline=newline, step=step)
    return _insert(text, _line_end(text, last_line), block, newline, created=False)


def _nested_step(sites: yaml.MappingNode, indent: int) -> int:
    """How far the existing sites indent their keys (2 when no site is a block mapping)."""
    for _, value in sites.value:
        if isinstance(value, yaml.MappingNode) and not value.flow_style and value.value:
            step = int(value.value[0][0].start_mark.column) - indent
            if step >= 2:
                return step
    return INDENT


def _insert(text: str, at: int, block: str, newline: str, *, created: bool) -> SpliceResult:
    before = text[:at]
    if before and not before.endswith("\n"):
        block = newline + block
    new_text = before + block + text[at:]
    first = before.count("\n") + 1 + (1 if block.startswith(newline) else 0)
    last = first + block.strip("\r\n").count("\n")
    return SpliceResult(text=new_text, first_line=first, last_line=last, created=created)


def _line_end(text: str, line: int) -> int:
    """Offset just past the newline that ends 0-based ``line`` (or the end of the text)."""
    pos = 0
    for _ in range(line + 1):
        nxt = text.find("\n", pos)
        if nxt < 0:
            return len(text)
        pos = nxt + 1
    return pos


def _last_content_line(text: str, node: yaml.Node) -> int:
    """The 0-based line holding the last character of ``node`` (block mappings end at the next token)."""
    while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    end = node.end_mark
    line = end.line if end.column > 0 else end.line - 1
    lines = text.splitlines()
    while line > node.start_mark.line and line < len(lines) and not lines[line].strip():
        line -= 1
    return max(line, node.start_mark.line)


def validate_new_text(old_text: str, new_text: str, key: str, *, source: str) -> None:
    """Parse ``new_text``: it must hold every old key unchanged, the new site, and pass validation."""
    try:
        old = yaml.safe_load(old_text) if old_text.strip() else {}
        new = yaml.safe_load(new_text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{source}: the edited file would not parse ({_short(exc)}); nothing written"
        ) from None
    old = old or {}
    if not isinstance(new, dict) or not isinstance(new.get("sites"), dict) or key not in new["sites"]:
        raise ConfigError(f"{source}: the edited file lost its sites mapping; nothing written")
    expected_sites = dict(old.get("sites") or {})
    added = new["sites"].get(key)
    rest_new = {k: v for k, v in new.items() if k != "sites"}
    rest_old = {k: v for k, v in old.items() if k != "sites"}
    others = {k: v for k, v in new["sites"].items() if k != key}
    if rest_new != rest_old or others != expected_sites or not isinstance(added, dict):
        raise ConfigError(f"{source}: the edit would change other keys; nothing written (please report this)")
    try:
        config_from_dict(new, source)
    except ConfigError as exc:
        raise ConfigError(
            f"{source} would not be valid after adding {key!r}: {exc}; nothing written"
        ) from None


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` by ``text`` via a temp file in the same folder, keeping the file's mode."""
    mode: int | None = None
    with contextlib.suppress(FileNotFoundError):
        mode = stat.S_IMODE(path.stat().st_mode)
    folder = path.parent if str(path.parent) else Path()
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            Path(tmp).chmod(mode)
        else:
            Path(tmp).chmod(0o644 & ~_umask())
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise


def add_site_to_file(
    path: str | Path, key: str, entry: dict[str, Any], *, comment: str = "", new_file_text: str = ""
) -> SpliceResult:
    """Splice, validate and atomically write; returns what was written.

    A missing file is created from ``new_file_text`` (e.g. a header comment) plus the entry.
    """
    file = Path(path)
    created = not file.exists()
    try:
        old_text = new_file_text if created else file.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{file} is not UTF-8; save it as UTF-8 first") from None
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc.strerror or exc}") from exc
    result = splice_site(old_text, key, entry, source=str(file), comment=comment)
    validate_new_text(old_text, result.text, key, source=str(file))
    try:
        write_atomically(file, result.text)
    except OSError as exc:
        raise ConfigError(f"cannot write {file}: {exc.strerror or exc}; the file is unchanged") from exc
    return SpliceResult(result.text, result.first_line, result.last_line, created=created)


def added_comment(framework: str) -> str:
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    return f"added by doc-scraper add on {day} (framework: {framework})"


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]
