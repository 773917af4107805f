"""Flags spelled both ``-name`` and ``--name``, as the Go original accepts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse


def add_flag(parser: argparse.ArgumentParser | Any, name: str, **kwargs: Any) -> None:
    """Add an option reachable as ``-name`` and ``--name`` (dest = name with _)."""
    kwargs.setdefault("dest", name.replace("-", "_"))
    parser.add_argument(f"-{name}", f"--{name}", **kwargs)


def add_config_flag(parser: argparse.ArgumentParser) -> None:
    add_flag(
        parser, "config", default="config.yaml", metavar="FILE", help="config file (default: config.yaml)"
    )


def add_site_selection(parser: argparse.ArgumentParser) -> None:
    add_flag(parser, "site", metavar="KEY", help="one site key from the config")
    add_flag(parser, "sites", metavar="A,B", help="comma-separated site keys, crawled in parallel")
    add_flag(parser, "all-sites", action="store_true", help="every site in the config")


def add_log_flags(parser: argparse.ArgumentParser) -> None:
    add_flag(
        parser,
        "loglevel",
        default="info",
        choices=["debug", "info", "warn", "warning", "error"],
        help="log level (default: info)",
    )
    add_flag(parser, "json", action="store_true", dest="json_logs", help="JSON log lines on stderr")
