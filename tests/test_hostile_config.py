"""Broken configs through the CLI: one clear error naming the key (and line), exit code 1, no traceback."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from doc_scraper import cli
from doc_scraper.config.schema import Config, HTTPClientSettings, SiteConfig

FIXTURES = Path(__file__).parent / "fixtures" / "hostile" / "configs"

SITE = """  demo:
    start_urls: ["http://127.0.0.1:9/docs/"]
    allowed_domain: 127.0.0.1
"""


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def _wrong(value: object) -> str:
    """A YAML value of the wrong type for a field whose default is ``value``."""
    if isinstance(value, bool):
        return "[yes, no]"
    if isinstance(value, int | float):
        return "lots"
    if isinstance(value, tuple):
        return "{a: 1}"
    return "[1, 2]"


def _fields(cls: type, skip: set[str]) -> list[tuple[str, object]]:
    out = []
    for f in dataclasses.fields(cls):
        if f.name in skip:
            continue
        default = f.default if f.default is not dataclasses.MISSING else ()
        out.append((f.name, default))
    return out


GLOBAL_FIELDS = _fields(Config, {"sites", "path", "warnings", "http_client_settings"})
SITE_FIELDS = _fields(SiteConfig, {"key"})
HTTP_FIELDS = _fields(HTTPClientSettings, set())


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def assert_one_clear_error(code: int, out: str, *names: str) -> None:
    assert code == 1, out
    assert "Traceback" not in out
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out
    for name in names:
        assert name in out, (name, out)


@pytest.mark.parametrize(("key", "default"), GLOBAL_FIELDS, ids=[k for k, _ in GLOBAL_FIELDS])
def test_every_global_key_with_a_wrong_type_is_one_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, default: object
) -> None:
    path = write(tmp_path, f"{key}: {_wrong(default)}\nsites:\n{SITE}")
    code, out = run_cli(capsys, "crawl", "-config", path, "-all-sites")
    assert_one_clear_error(code, out, key, "line 1")


@pytest.mark.parametrize(("key", "default"), SITE_FIELDS, ids=[k for k, _ in SITE_FIELDS])
def test_every_site_key_with_a_wrong_type_is_one_error_naming_its_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, default: object
) -> None:
    path = write(tmp_path, f"sites:\n{SITE}    {key}: {_wrong(default)}\n")
    code, out = run_cli(capsys, "crawl", "-config", path, "-all-sites")
    assert_one_clear_error(code, out, f"sites.demo.{key}", "line 5")


@pytest.mark.parametrize(("key", "default"), HTTP_FIELDS, ids=[k for k, _ in HTTP_FIELDS])
def test_every_http_client_key_with_a_wrong_type_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, default: object
) -> None:
    path = write(tmp_path, f"http_client_settings:\n  {key}: {_wrong(default)}\nsites:\n{SITE}")
    code, out = run_cli(capsys, "crawl", "-config", path, "-all-sites")
    assert_one_clear_error(code, out, f"http_client_settings.{key}", "line 2")


BROKEN = sorted(FIXTURES.glob("*.yaml"))


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_each_broken_config_of_the_corpus_gets_its_expected_error(
    capsys: pytest.CaptureFixture[str], path: Path
) -> None:
    expected = [
        line.removeprefix("# expect:").strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("# expect:")
    ]
    assert expected, f"{path.name} needs a '# expect: text' line"
    code, out = run_cli(capsys, "crawl", "-config", str(path), "-all-sites")
    assert_one_clear_error(code, out, *expected)


def test_a_10_mb_config_is_refused_quickly_with_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("w", encoding="utf-8") as fh:
        fh.write("sites:\n" + SITE)
        line = "# " + "x" * 1100 + "\n"
        fh.write(line * (10 * 1024))
    assert path.stat().st_size > 10 * 1024 * 1024
    code, out = run_cli(capsys, "crawl", "-config", str(path), "-all-sites")
    assert_one_clear_error(code, out, str(path))


def test_validate_lists_several_errors_but_still_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, f"max_retries: lots\nsites:\n{SITE}    max_depth: deep\n    bogus_key: 1\n")
    code, out = run_cli(capsys, "config", "validate", "-config", path)
    assert code == 1
    assert "Traceback" not in out
    for name in ("max_retries", "sites.demo.max_depth", "bogus_key"):
        assert name in out


@pytest.mark.parametrize(
    "argv",
    [
        ["crawl", "-config"],
        ["crawl", "--no-such-flag"],
        ["no-such-command"],
        ["crawl", "-config", "c.yaml", "-site"],
    ],
)
def test_bad_command_lines_are_usage_errors_with_exit_2(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out = run_cli(capsys, *argv)
    assert code == 2
    assert "Traceback" not in out
    assert "error:" in out
