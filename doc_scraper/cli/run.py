"""``doc-scraper run``: read one JSON task from stdin and run it as ``crawl`` or ``watch``.

The task is validated strictly (unknown fields, wrong types, conflicting fields are
errors, exit 1), then turned into the equivalent command line and handed to
``cli.main``, so the exit code is the one the flag-driven command gives.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

from doc_scraper.errors import ConfigError
from doc_scraper.taskspec import parse_task_spec

if TYPE_CHECKING:
    import argparse

logger = logging.getLogger(__name__)

HELP = 'run one JSON task from stdin, e.g. {"command": "crawl", "site": "my_docs", "incremental": true}'

_DESCRIPTION_FIELDS = """fields: command ("crawl" | "watch", required), config (default config.yaml),
exactly one of site | sites [..] | all_sites: true, resume, incremental, full (crawl only),
interval (watch only, default 24h), loglevel (default info), json_logs"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = _DESCRIPTION_FIELDS
    # No flags: everything comes from the JSON object. Stray words are caught in run().
    parser.add_argument("extra", nargs="*", help=None)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "extra", None):
        raise ConfigError(
            f"run takes no arguments (got {' '.join(args.extra)!r}); pipe the JSON task on stdin"
        )
    if sys.stdin is None:
        raise ConfigError("run reads a JSON task on stdin, but there is no stdin; pipe the task in")
    if sys.stdin.isatty():
        print(
            'reading one JSON task, e.g. {"command": "crawl", "all_sites": true}; end with Ctrl-D',
            file=sys.stderr,
        )
    raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    spec = parse_task_spec(raw)
    argv = spec.argv()
    logger.debug("run.dispatch", extra={"argv": " ".join(argv)})
    from doc_scraper.cli import main

    return main(argv)
