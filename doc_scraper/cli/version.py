"""``doc-scraper version``: print the version."""

from __future__ import annotations

import argparse

from doc_scraper import __version__
from doc_scraper.errors import UsageError

HELP = "print the doc-scraper version"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # Collected only to reject them with a clear message instead of argparse's generic one.
    parser.add_argument("extra", nargs="*", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if args.extra:
        raise UsageError(f"version takes no arguments, got: {' '.join(args.extra)}")
    print(f"doc-scraper {__version__}")
    return 0
