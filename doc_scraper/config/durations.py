"""Durations as people write them: ``500ms``, ``45s``, ``2m``, ``1h30m``, ``1d12h``, ``7d`` or ``90``.

A plain number (int, float or numeric text) means seconds. Values are floats in seconds.
"""

from __future__ import annotations

import math
import re

_UNIT_SECONDS: dict[str, float] = {
    "ms": 0.001,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}
# Largest unit first: format_duration walks this order.
_FORMAT_UNITS: tuple[tuple[str, int], ...] = (("d", 86400), ("h", 3600), ("m", 60))

_NUMBER = re.compile(r"\d+(?:\.\d+)?|\.\d+")
_PART = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*(ms|s|m|h|d)", re.IGNORECASE)
_EXAMPLES = "e.g. 500ms, 45s, 2m, 1h30m, 7d or a number of seconds"


def parse_duration(text: str | int | float) -> float:
    """Return ``text`` as seconds; raise ``ValueError`` with a readable message if it is not a duration.

    Each unit may appear once; the parts are added up, so ``1h30m`` is 5400.0.
    """
    if isinstance(text, bool):
        raise ValueError(f"expected a duration ({_EXAMPLES}), got {str(text).lower()}")
    if isinstance(text, int | float):
        value = float(text)
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"expected a finite duration ({_EXAMPLES}), got {text}")
        if value < 0:
            raise ValueError(f"a duration must not be negative, got {text}")
        return value
    if not isinstance(text, str):
        raise ValueError(f"expected a duration ({_EXAMPLES}), got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise ValueError(f"expected a duration ({_EXAMPLES}), got an empty string")
    if stripped.startswith("-"):
        raise ValueError(f'a duration must not be negative, got "{text}"')
    if stripped.startswith("+"):
        stripped = stripped[1:].lstrip()
    if _NUMBER.fullmatch(stripped):
        return float(stripped)
    total = 0.0
    seen: set[str] = set()
    pos = 0
    while pos < len(stripped):
        match = _PART.match(stripped, pos)
        if match is None:
            raise ValueError(f'"{text}" is not a duration; write it like {_EXAMPLES}')
        unit = match.group(2).lower()
        if unit in seen:
            raise ValueError(f'"{text}" repeats the unit "{unit}"; write each unit once, e.g. 1h30m')
        seen.add(unit)
        total += float(match.group(1)) * _UNIT_SECONDS[unit]
        pos = match.end()
    return total


def format_duration(seconds: float) -> str:
    """Render seconds compactly (``1h30m``, ``500ms``, ``1.5s``); ``parse_duration`` reads it back."""
    if math.isnan(seconds) or math.isinf(seconds):
        return str(seconds)
    if seconds < 0:
        return "-" + format_duration(-seconds)
    # Millisecond precision: anything finer is noise for crawl delays and timeouts.
    millis = round(seconds * 1000)
    if millis == 0:
        return "0s"
    if millis < 1000:
        return f"{millis}ms"
    parts: list[str] = []
    whole_seconds, rest_ms = divmod(millis, 1000)
    for unit, size in _FORMAT_UNITS:
        count, whole_seconds = divmod(whole_seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    if whole_seconds or rest_ms:
        if rest_ms:
            parts.append(f"{whole_seconds}.{rest_ms:03d}".rstrip("0") + "s")
        else:
            parts.append(f"{whole_seconds}s")
    return "".join(parts)
