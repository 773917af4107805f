"""The README and the CLI agree: every command has help and is documented."""

from __future__ import annotations

from pathlib import Path

import pytest

from doc_scraper.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_help_and_a_readme_entry(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([command, "-h"])
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out
    assert f"`{command}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_flags_take_one_or_two_dashes(capsys: pytest.CaptureFixture[str]) -> None:
    one_dash = main(["config", "list", "-config", "missing.yaml"])
    assert one_dash == main(["config", "list", "--config", "missing.yaml"]) == 1


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from doc_scraper import __version__

    assert main(["version"]) == 0
    assert capsys.readouterr().out.strip() == f"doc-scraper {__version__}"
