"""Logging setup: text or JSON lines on stderr. Nothing else configures logging."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

# LogRecord attributes; everything else on a record came from ``extra=``.
_RESERVED = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}

LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _RESERVED and not k.startswith("_")}


class TextFormatter(logging.Formatter):
    """``12:00:01 INFO page.written url=... path=...``"""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        parts = [stamp, record.levelname, record.getMessage()]
        parts += [f"{k}={v}" for k, v in _fields(record).items()]
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JSONFormatter(logging.Formatter):
    """One JSON object per line: ts, level, event, then the extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
            "logger": record.name,
        }
        data.update(_fields(record))
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return json.dumps(data, default=str, ensure_ascii=False)


def setup_logging(level: str = "info", *, json_lines: bool = False, stream: Any = None) -> None:
    """Configure the root logger once; safe to call again (replaces our handler)."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if getattr(handler, "_doc_scraper", False):
            root.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler._doc_scraper = True  # type: ignore[attr-defined]
    handler.setFormatter(JSONFormatter() if json_lines else TextFormatter())
    root.addHandler(handler)
    root.setLevel(LEVELS.get(level.lower(), logging.INFO))
    # Library chatter stays at warning unless we debug.
    for noisy in ("asyncio", "aiohttp", "mcp", "httpx", "readability"):
        logging.getLogger(noisy).setLevel(logging.DEBUG if level == "debug" else logging.WARNING)
