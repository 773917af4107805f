"""`doc-scraper config validate|list` and `doc-scraper version`, run through cli.main."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING

import pytest

from doc_scraper import __version__, cli

if TYPE_CHECKING:
    from pathlib import Path

GOOD = """\
sites:
  python_docs:
    start_urls: [https://docs.python.org/3/]
    allowed_domain: docs.python.org
    allowed_path_prefix: /3/
  rust_book:
    start_urls: [https://doc.rust-lang.org/book/, https://doc.rust-lang.org/book/ch01-00-getting-started.html]
    allowed_domain: doc.rust-lang.org
    allowed_path_prefix: /book/
"""

ONE_BAD = """\
sites:
  good:
    start_urls: [https://a.example.com/]
    allowed_domain: a.example.com
  broken:
    start_urls: [https://b.example.com/]
    allowed_domain: b.example.com
    max_depth: two
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(path)


def test_validate_reports_a_valid_file_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD)
    assert cli.main(["config", "validate", "-config", path]) == 0
    out = capsys.readouterr().out
    assert f"config: {path}" in out
    assert "ok    python_docs  docs.python.org/3/, 1 start URL" in out
    assert "rust_book" in out
    assert "2 start URLs" in out
    assert out.rstrip().endswith("valid: 2 sites")


def test_validate_json_shape_for_a_valid_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, GOOD)
    assert cli.main(["config", "validate", "--config", path, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {
        "config_path": path,
        "valid": True,
        "site_count": 2,
        "warnings": [],
        "errors": [],
        "sites": [{"key": "python_docs", "valid": True}, {"key": "rust_book", "valid": True}],
    }


def test_validate_lists_each_error_under_its_site_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, ONE_BAD)
    assert cli.main(["config", "validate", "-config", path]) == 1
    out = capsys.readouterr().out
    assert "ok    good" in out
    assert "FAIL  broken" in out
    assert (
        'sites.broken.max_depth (line 8): expected an integer >= 0, got "two"; set e.g. max_depth: 3' in out
    )
    assert out.rstrip().endswith("invalid: 1 error")


def test_validate_json_marks_the_failing_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, ONE_BAD)
    assert cli.main(["config", "validate", "-config", path, "-json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["site_count"] == 2
    sites = {site["key"]: site for site in report["sites"]}
    assert sites["good"] == {"key": "good", "valid": True}
    assert sites["broken"]["valid"] is False
    assert sites["broken"]["error"].startswith("sites.broken.max_depth (line 8):")


def test_validate_one_site_ignores_errors_in_other_sites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, ONE_BAD)
    assert cli.main(["config", "validate", "-config", path, "-site", "good", "-json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [site["key"] for site in report["sites"]] == ["good"]
    assert report["valid"] is True


def test_validate_unknown_site_lists_the_available_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD)
    assert cli.main(["config", "validate", "-config", path, "-site", "pyton_docs"]) == 1
    err = capsys.readouterr().err
    assert "error: site 'pyton_docs' not found" in err
    assert "available sites: python_docs, rust_book" in err


def test_validate_unknown_site_in_json_is_an_error_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, GOOD)
    assert cli.main(["config", "validate", "-config", path, "-site", "nope", "-json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert "available sites: python_docs, rust_book" in report["errors"][0]


def test_validate_shows_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "sites:\n  docs:\n    start_urls: [https://docs.example.com/]\n")
    assert cli.main(["config", "validate", "-config", path, "-json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "allowed_domain not set" in report["sites"][0]["warnings"][0]
    assert cli.main(["config", "validate", "-config", path]) == 0
    assert "warning: sites.docs: allowed_domain not set" in capsys.readouterr().out


def test_validate_a_missing_file_explains_how_to_create_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.yaml")
    assert cli.main(["config", "validate", "-config", missing, "-json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["site_count"] == 0
    assert "doc-scraper add URL" in report["errors"][0]


def test_validate_a_yaml_syntax_error_prints_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, "sites: [unclosed\n")
    assert cli.main(["config", "validate", "-config", path]) == 1
    captured = capsys.readouterr()
    assert "YAML syntax error at line" in captured.out
    assert "Traceback" not in captured.out + captured.err


def test_list_prints_one_line_per_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, GOOD)
    assert cli.main(["config", "list", "-config", path]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].split() == ["python_docs", "docs.python.org", "/3/", "(1", "start", "URL)"]
    assert lines[1].split()[:3] == ["rust_book", "doc.rust-lang.org", "/book/"]


def test_list_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, GOOD)
    assert cli.main(["config", "list", "-config", path, "-json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "config_path": path,
        "count": 2,
        "sites": [
            {"key": "python_docs", "domain": "docs.python.org", "start_urls_count": 1, "path_prefix": "/3/"},
            {
                "key": "rust_book",
                "domain": "doc.rust-lang.org",
                "start_urls_count": 2,
                "path_prefix": "/book/",
            },
        ],
    }


def test_list_shows_valid_sites_and_reports_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, ONE_BAD)
    assert cli.main(["config", "list", "-config", path, "-json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [site["key"] for site in report["sites"]] == ["good"]
    assert report["errors"][0].startswith("sites.broken.max_depth")


def test_list_of_a_missing_file_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config", "list", "-config", str(tmp_path / "none.yaml")]) == 1
    assert "error: config file" in capsys.readouterr().err


def test_config_without_an_action_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config"]) == 1
    err = capsys.readouterr().err
    assert "validate" in err
    assert "list" in err


def test_config_help_prints_usage_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["config", "-h"])
    assert info.value.code == 0
    assert "usage: doc-scraper config" in capsys.readouterr().out


def test_unknown_config_action_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["config", "check"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["version"]) == 0
    assert capsys.readouterr().out == f"doc-scraper {__version__}\n"


def test_version_flag_is_the_version_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out == f"doc-scraper {__version__}\n"


def test_version_with_arguments_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["version", "extra"]) == 2
    assert "version takes no arguments" in capsys.readouterr().err
