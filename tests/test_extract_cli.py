"""``doc-scraper extract``: one saved page to Markdown through the crawl's code path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from doc_scraper.cli import main

if TYPE_CHECKING:
    import pytest

FIXTURES = Path(__file__).parent / "fixtures"
NPM = FIXTURES / "docusaurus" / "npm-whoami.html"
NPM_URL = "http://127.0.0.1:8000/npm-docusaurus/docs/commands/npm-whoami/"


def test_extract_prints_the_same_markdown_a_crawl_writes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", "--url", NPM_URL, str(NPM)]) == 0
    out = capsys.readouterr().out
    assert out == (FIXTURES / "docusaurus" / "npm-whoami.md").read_text(encoding="utf-8")


def test_extract_json_reports_detection(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", "-json", "-url", NPM_URL, str(NPM)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["framework"] == "docusaurus"
    assert data["confidence"] == "high"
    assert data["selector"] == "article .theme-doc-markdown"
    assert data["markdown"].startswith("# npm-whoami")
    assert "http://127.0.0.1:8000/npm-docusaurus/docs/commands/npm-config" in data["links"]


def test_extract_with_an_explicit_selector(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    page = tmp_path / "p.html"
    page.write_text(
        "<html><body><div id='side'>menu</div><div id='doc'><h2>Hi</h2><p>Body</p></div></body></html>"
    )
    assert main(["extract", "--selector", "#doc", str(page)]) == 0
    assert capsys.readouterr().out == "## Hi\n\nBody\n"


def test_extract_reads_standard_input(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io
    import sys

    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"<html><body><p>From stdin</p></body></html>"))
    )
    assert main(["extract", "-"]) == 0
    assert "From stdin" in capsys.readouterr().out


def test_extract_of_a_javascript_shell_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    page = tmp_path / "shell.html"
    page.write_text(
        '<html><body><div id="swagger-ui"></div><script src="swagger-ui-bundle.js"></script></body></html>'
    )
    assert main(["extract", str(page)]) == 1
    assert "needs JavaScript" in capsys.readouterr().err


def test_extract_of_a_missing_file_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["extract", "/nonexistent/page.html"]) == 2
    assert "cannot read" in capsys.readouterr().err
