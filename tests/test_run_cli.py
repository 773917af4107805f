"""``doc-scraper run``: a JSON task on stdin behaves exactly like the flag-driven command."""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import TYPE_CHECKING

import pytest

from doc_scraper.cli import main

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = """\
state_dir: {state}
output_base_dir: {out}
sites:
  alpha:
    start_urls: ["http://127.0.0.1:9/docs/"]
    allowed_domain: 127.0.0.1
  beta:
    start_urls: ["http://127.0.0.1:9/beta/"]
    allowed_domain: 127.0.0.1
"""


class _Stdin(io.TextIOWrapper):
    def isatty(self) -> bool:
        return False


def _feed(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(text.encode())))


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(CONFIG.format(state=tmp_path / "state", out=tmp_path / "out"))
    return path


@pytest.fixture
def dispatched(monkeypatch: pytest.MonkeyPatch) -> list[argparse.Namespace]:
    """Replace crawl.run and watch.run by recorders returning the exit code in ``calls.code``."""
    from doc_scraper.cli import crawl, watch

    calls: list[argparse.Namespace] = []

    def record(args: argparse.Namespace) -> int:
        calls.append(args)
        return int(getattr(record, "code", 0))

    monkeypatch.setattr(crawl, "run", record)
    monkeypatch.setattr(watch, "run", record)
    calls.append(argparse.Namespace(recorder=record))
    return calls


def _flags_namespace(argv: list[str]) -> argparse.Namespace:
    from doc_scraper.cli import build_parser

    return build_parser().parse_args(argv)


def _public(ns: argparse.Namespace) -> dict[str, object]:
    return {k: v for k, v in vars(ns).items() if not k.startswith("_")}


@pytest.mark.parametrize(
    ("task", "argv_text"),
    [
        ({"command": "crawl", "site": "alpha"}, "crawl -site alpha"),
        ({"command": "crawl", "sites": ["alpha", "beta"], "incremental": True},
         "crawl -sites alpha,beta -incremental"),
        ({"command": "crawl", "all_sites": True, "full": True, "json_logs": True},
         "crawl -all-sites -full -json"),
        ({"command": "crawl", "site": "alpha", "resume": True, "loglevel": "debug"},
         "crawl -site alpha -resume -loglevel debug"),
        ({"command": "watch", "all_sites": True}, "watch -all-sites"),
        ({"command": "watch", "site": "alpha", "interval": "1d12h"}, "watch -site alpha -interval 1d12h"),
    ],
)  # fmt: skip
def test_a_valid_task_reaches_the_command_with_the_same_arguments_as_its_flags(
    task: dict[str, object],
    argv_text: str,
    config_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    dispatched: list[argparse.Namespace],
) -> None:
    task = {**task, "config": str(config_file)}
    _feed(monkeypatch, json.dumps(task))
    assert main(["run"]) == 0
    argv = argv_text.split()
    flags = _flags_namespace([argv[0], "-config", str(config_file), *argv[1:]])
    assert _public(dispatched[-1]) == _public(flags)


@pytest.mark.parametrize("code", [0, 1, 130])
def test_the_exit_code_is_the_dispatched_commands(
    code: int, config_file: Path, monkeypatch: pytest.MonkeyPatch, dispatched: list[argparse.Namespace]
) -> None:
    dispatched[0].recorder.code = code
    _feed(monkeypatch, json.dumps({"command": "crawl", "site": "alpha", "config": str(config_file)}))
    assert main(["run"]) == code


def test_an_unknown_site_fails_like_the_flag_driven_crawl(
    config_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    flag_code = main(["crawl", "-config", str(config_file), "-site", "nope"])
    flag_err = capsys.readouterr().err
    _feed(monkeypatch, json.dumps({"command": "crawl", "site": "nope", "config": str(config_file)}))
    assert main(["run"]) == flag_code == 1
    assert capsys.readouterr().err == flag_err


def test_a_missing_config_fails_like_the_flag_driven_watch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "absent.yaml")
    flag_code = main(["watch", "-config", missing, "-site", "a"])
    flag_err = capsys.readouterr().err
    _feed(monkeypatch, json.dumps({"command": "watch", "site": "a", "config": missing}))
    assert main(["run"]) == flag_code == 1
    assert capsys.readouterr().err == flag_err


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ('{"command": "crawl", "site": "a", "sites": ["b"]}', "error: sites: give only one of site, sites"),
        ('{"command": "watch", "site": "a", "full": true}', "error: full: only for crawl"),
        ('{"command": "crawl", "site": "a", "colour": "red"}', "error: colour: unknown field"),
        (
            '{"command": "crawl", "site": "a", "incremental": true, "full": true}',
            "error: full: cannot be combined",
        ),
        ("not json", "error: task: invalid JSON"),
        ("", "error: task: no JSON on stdin"),
    ],
)
def test_an_invalid_task_exits_1_with_a_message_naming_the_field(
    task: str,
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    dispatched: list[argparse.Namespace],
) -> None:
    _feed(monkeypatch, task)
    assert main(["run"]) == 1
    assert capsys.readouterr().err.startswith(message)
    assert len(dispatched) == 1  # only the recorder holder: nothing was dispatched


def test_run_takes_no_arguments(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _feed(monkeypatch, '{"command": "crawl", "site": "a"}')
    assert main(["run", "extra"]) == 1
    assert "run takes no arguments" in capsys.readouterr().err
