"""The ``run`` task spec: one strict JSON object that stands for a ``crawl`` or ``watch`` command line.

``parse_task_spec(text)`` validates and returns a ``TaskSpec``; ``TaskSpec.argv()`` is the
equivalent flag-driven command line, so ``run`` exits exactly as that command would.
Every rejection is a ``ConfigError`` whose message starts with the offending field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from doc_scraper.config.durations import parse_duration
from doc_scraper.errors import ConfigError

MAX_SPEC_BYTES = 1024 * 1024
COMMANDS = ("crawl", "watch")
LOGLEVELS = ("debug", "info", "warn", "warning", "error")
DEFAULT_CONFIG = "config.yaml"
DEFAULT_INTERVAL = "24h"
DEFAULT_LOGLEVEL = "info"

# field -> JSON type name used in messages
_TYPES: dict[str, str] = {
    "command": "string",
    "config": "string",
    "site": "string",
    "sites": "array of strings",
    "all_sites": "boolean",
    "resume": "boolean",
    "incremental": "boolean",
    "full": "boolean",
    "interval": "string",
    "loglevel": "string",
    "json_logs": "boolean",
}
_CRAWL_ONLY = ("resume", "incremental", "full")
_WATCH_ONLY = ("interval",)
_EXAMPLE = '{"command": "crawl", "site": "my_docs", "incremental": true}'


@dataclass(frozen=True, slots=True)
class TaskSpec:
    """A validated task: which command, on which sites, with which options."""

    command: str
    config: str = DEFAULT_CONFIG
    site: str | None = None
    sites: tuple[str, ...] = ()
    all_sites: bool = False
    resume: bool = False
    incremental: bool = False
    full: bool = False
    interval: str = DEFAULT_INTERVAL
    loglevel: str = DEFAULT_LOGLEVEL
    json_logs: bool = False

    def argv(self) -> list[str]:
        """The flag-driven command line this spec stands for."""
        out = [self.command, "-config", self.config]
        if self.all_sites:
            out.append("-all-sites")
        elif self.sites:
            out += ["-sites", ",".join(self.sites)]
        elif self.site is not None:
            out += ["-site", self.site]
        if self.command == "crawl":
            for flag in _CRAWL_ONLY:
                if getattr(self, flag):
                    out.append("-" + flag)
        else:
            out += ["-interval", self.interval]
        out += ["-loglevel", self.loglevel]
        if self.json_logs:
            out.append("-json")
        return out


def parse_task_spec(text: str | bytes) -> TaskSpec:
    """Parse and validate one JSON task object; raise ``ConfigError`` naming the bad field."""
    data = _decode(text)
    return validate_task_spec(data)


def validate_task_spec(data: Any) -> TaskSpec:
    """Validate an already-decoded task object (see ``parse_task_spec``)."""
    if not isinstance(data, dict):
        raise ConfigError(f"expected one JSON object such as {_EXAMPLE}, got {_json_type(data)}", key="task")
    unknown = [name for name in data if name not in _TYPES]
    if unknown:
        name = unknown[0]
        hint = _closest(name)
        fix = f'; did you mean "{hint}"?' if hint else f"; known fields: {', '.join(_TYPES)}"
        if name == "pprof":
            fix = "; profiling is not supported by this implementation, remove the field"
        raise ConfigError(f"unknown field{fix}", key=name)
    for name, value in data.items():
        _check_type(name, value)

    if "command" not in data:
        raise ConfigError('required; set "command": "crawl" or "command": "watch"', key="command")
    command = data["command"]
    if command not in COMMANDS:
        raise ConfigError(f'must be "crawl" or "watch", got {json.dumps(command)}', key="command")

    for name in ("config", "site", "interval", "loglevel"):
        if name in data and not data[name].strip():
            raise ConfigError("must not be empty", key=name)
    sites = data.get("sites")
    if sites is not None:
        if not sites:
            raise ConfigError('must list at least one site key, e.g. ["a", "b"]', key="sites")
        for index, key in enumerate(sites):
            if not key.strip():
                raise ConfigError("must not be empty", key=f"sites[{index}]")
            if "," in key:
                raise ConfigError(
                    "a site key cannot contain a comma; list each key separately", key=f"sites[{index}]"
                )
        duplicates = sorted({key for key in sites if sites.count(key) > 1})
        if duplicates:
            raise ConfigError(f"lists {duplicates[0]!r} more than once", key="sites")
    if data.get("all_sites") is False:
        raise ConfigError(
            "only true is meaningful; remove the field or select sites with site/sites", key="all_sites"
        )

    chosen = [name for name in ("site", "sites", "all_sites") if name in data]
    if not chosen:
        raise ConfigError('set exactly one of "site", "sites" or "all_sites": true', key="site")
    if len(chosen) > 1:
        raise ConfigError(f"give only one of {', '.join(chosen)}; they are alternatives", key=chosen[1])

    if command == "watch":
        for name in _CRAWL_ONLY:
            if name in data:
                raise ConfigError(
                    "only for crawl; watch always crawls incrementally, remove the field", key=name
                )
    else:
        for name in _WATCH_ONLY:
            if name in data:
                raise ConfigError('only for watch; use "command": "watch" or remove the field', key=name)
        if data.get("incremental") and data.get("full"):
            raise ConfigError('cannot be combined with "incremental": true; choose one', key="full")

    interval = data.get("interval", DEFAULT_INTERVAL)
    if command == "watch":
        check_interval(interval, key="interval")
    loglevel = data.get("loglevel", DEFAULT_LOGLEVEL)
    if loglevel not in LOGLEVELS:
        allowed = ", ".join(LOGLEVELS)
        raise ConfigError(f"must be one of {allowed}, got {json.dumps(loglevel)}", key="loglevel")

    return TaskSpec(
        command=command,
        config=data.get("config", DEFAULT_CONFIG),
        site=data.get("site"),
        sites=tuple(sites or ()),
        all_sites=bool(data.get("all_sites", False)),
        resume=bool(data.get("resume", False)),
        incremental=bool(data.get("incremental", False)),
        full=bool(data.get("full", False)),
        interval=interval,
        loglevel=loglevel,
        json_logs=bool(data.get("json_logs", False)),
    )


def check_interval(text: str, *, key: str = "-interval") -> float:
    """Parse a watch interval; zero, negative, non-finite and garbage values raise ``ConfigError``."""
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise ConfigError(f"{exc}", key=key) from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(
            f"must be a positive duration such as 30m, 24h or 7d, got {json.dumps(text)}", key=key
        )
    return seconds


# ---------------------------------------------------------------- helpers


def _decode(text: str | bytes) -> Any:
    too_big = f"the task is over {MAX_SPEC_BYTES} bytes; send one small JSON object"
    if isinstance(text, bytes):
        if len(text) > MAX_SPEC_BYTES:
            raise ConfigError(too_big, key="task")
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ConfigError("not UTF-8; send the task as UTF-8 JSON", key="task") from None
    if len(text) > MAX_SPEC_BYTES:
        raise ConfigError(too_big, key="task")
    stripped = text.strip()
    if not stripped:
        raise ConfigError(f"no JSON on stdin; send one object such as {_EXAMPLE}", key="task")
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    try:
        data, end = decoder.raw_decode(stripped)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}", key="task"
        ) from None
    except RecursionError:
        raise ConfigError("JSON nested too deeply", key="task") from None
    if stripped[end:].strip():
        raise ConfigError("only one JSON object is accepted; remove what follows it", key="task")
    return data


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in pairs:
        if name in out:
            raise ConfigError("given twice; keep one", key=name)
        out[name] = value
    return out


def _no_constant(name: str) -> Any:
    raise ConfigError(f"{name} is not valid JSON", key="task")


def _check_type(name: str, value: Any) -> None:
    expected = _TYPES[name]
    if expected == "string":
        ok = isinstance(value, str)
    elif expected == "boolean":
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
    if not ok:
        article = "an" if expected[0] in "aeiou" else "a"
        raise ConfigError(f"must be {article} {expected}, got {_json_type(value)} {_short(value)}", key=name)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _closest(name: str) -> str | None:
    import difflib

    found = difflib.get_close_matches(name, list(_TYPES), n=1, cutoff=0.6)
    return found[0] if found else None
