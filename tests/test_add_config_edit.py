"""Splicing a site into config.yaml: only the entry is added, every other byte survives."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.config.load import load_config
from doc_scraper.discover.config_edit import add_site_to_file, render_entry, splice_site
from doc_scraper.errors import ConfigError

FIXTURE = Path(__file__).parent / "fixtures" / "add" / "config_with_comments.yaml"
ENTRY = {
    "start_urls": ["https://new.example.com/en/latest/"],
    "allowed_domain": "new.example.com",
    "allowed_path_prefix": "/en/latest/",
    "content_selector": "div.body",
    "max_depth": 4,
    "disallowed_path_patterns": ["^/en/latest/fr/", "^/en/latest/3\\.10/"],
}


def _without_block(new: str, old: str) -> str:
    """Remove the inserted lines from ``new``: what is left must equal ``old``."""
    new_lines = new.splitlines(keepends=True)
    old_lines = old.splitlines(keepends=True)
    start = next(
        i
        for i, (a, b) in enumerate(zip(new_lines, old_lines + [""] * len(new_lines), strict=False))
        if a != b
    )
    extra = len(new_lines) - len(old_lines)
    return "".join(new_lines[:start] + new_lines[start + extra :])


def test_the_entry_goes_after_the_last_site_and_nothing_else_changes() -> None:
    old = FIXTURE.read_text()
    result = splice_site(old, "new_docs", ENTRY, comment="added by a test")
    assert _without_block(result.text, old) == old
    lines = result.text.splitlines()
    assert lines[result.first_line - 1] == "    # added by a test"
    assert lines[result.first_line] == "    new_docs:"
    assert lines[result.first_line + 1] == "        start_urls:"
    assert lines[result.first_line + 2] == "            - https://new.example.com/en/latest/"
    # inserted after beta_docs' last key, before its commented-out lines and the later globals
    assert lines[result.first_line - 2] == "        max_depth: 3"
    assert result.text.index("new_docs:") < result.text.index("# trailing comment after the sites")


def test_the_spliced_file_parses_to_the_old_data_plus_the_new_site() -> None:
    old = FIXTURE.read_text()
    new = yaml.safe_load(splice_site(old, "new_docs", ENTRY).text)
    expected = yaml.safe_load(old)
    expected["sites"]["new_docs"] = ENTRY
    assert new == expected


def test_writing_to_a_file_keeps_its_bytes_its_mode_and_validates(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(FIXTURE.read_bytes())
    path.chmod(0o600)
    result = add_site_to_file(path, "new_docs", ENTRY, comment="c")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _without_block(path.read_text(), FIXTURE.read_text()) == FIXTURE.read_text()
    assert path.read_text() == result.text
    config = load_config(path)
    assert config.sites["new_docs"].allowed_path_prefix == "/en/latest/"
    assert config.sites["alpha_docs"].allowed_domain == "alpha.example.com"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml"]  # no temp file left


def test_an_entry_that_would_not_validate_leaves_the_file_untouched(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(FIXTURE.read_bytes())
    bad = dict(ENTRY, disallowed_path_patterns=["^/docs/(unclosed"])
    with pytest.raises(ConfigError, match="would not be valid after adding 'new_docs'"):
        add_site_to_file(path, "new_docs", bad)
    assert path.read_bytes() == FIXTURE.read_bytes()


def test_an_existing_key_is_refused_with_its_line() -> None:
    with pytest.raises(ConfigError, match=r"site 'beta_docs' already exists .*line 19"):
        splice_site(FIXTURE.read_text(), "beta_docs", ENTRY)


def test_flow_style_sites_are_refused_rather_than_reformatted() -> None:
    with pytest.raises(ConfigError, match="flow style"):
        splice_site("sites: {a: {start_urls: [x], allowed_domain: y}}\n", "new_docs", ENTRY)
    with pytest.raises(ConfigError, match="written inline"):
        splice_site("sites: ~\n", "new_docs", ENTRY)


def test_a_config_without_sites_gets_a_sites_block_at_the_end() -> None:
    old = "# globals only\nstate_dir: ./s"  # no trailing newline
    result = splice_site(old, "new_docs", ENTRY)
    assert result.text.startswith(old + "\nsites:\n  new_docs:\n")
    assert yaml.safe_load(result.text)["sites"]["new_docs"] == ENTRY


def test_an_empty_sites_key_gets_the_entry_right_under_it() -> None:
    old = "sites:\n# later\nstate_dir: ./s\n"
    result = splice_site(old, "new_docs", ENTRY)
    assert result.text.startswith("sites:\n  new_docs:\n    start_urls:\n")
    assert result.text.endswith("# later\nstate_dir: ./s\n")


def test_windows_line_endings_are_kept_for_the_new_lines() -> None:
    old = FIXTURE.read_text().replace("\n", "\r\n")
    result = splice_site(old, "new_docs", ENTRY)
    assert "\n" not in result.text.replace("\r\n", "")
    assert _without_block(result.text, old) == old


def test_a_missing_file_is_created_from_the_given_header(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.yaml"
    result = add_site_to_file(path, "new_docs", ENTRY, new_file_text="# header\n")
    assert result.created
    assert path.read_text().startswith("# header\nsites:\n  new_docs:\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o644 & ~_umask()
    assert load_config(path).sites["new_docs"].max_depth == 4


def test_a_block_scalar_as_the_last_value_is_not_split() -> None:
    old = "sites:\n  a:\n    start_urls: [https://a.example.com/]\n    allowed_domain: a.example.com\n"
    old += "    content_selector: >\n      main article\n\n\n# end\n"
    result = splice_site(old, "new_docs", ENTRY)
    assert yaml.safe_load(result.text)["sites"]["a"]["content_selector"] == "main article\n"
    assert _without_block(result.text, old) == old


def test_render_entry_indents_lists_under_their_key() -> None:
    text = render_entry("k", {"start_urls": ["https://x/"], "max_depth": 3}, 2)
    assert text == "  k:\n    start_urls:\n      - https://x/\n    max_depth: 3\n"


_names = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
_values = st.one_of(st.integers(0, 99), st.text(max_size=12), st.lists(st.text(max_size=6), max_size=3))


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 6),
    st.dictionaries(_names, _values, min_size=1, max_size=5),
    st.sampled_from(["", "\n", "\n\n# tail\n", "\nother: 1\n"]),
)
def test_any_entry_spliced_into_any_indentation_round_trips(
    indent: int, entry: dict[str, object], tail: str
) -> None:
    pad = " " * indent
    old = f"# head\nsites:\n{pad}a:\n{pad}{pad}allowed_domain: a.example.com  # c\n{tail}"
    result = splice_site(old, "new_docs", entry)
    parsed = yaml.safe_load(result.text)
    assert parsed["sites"]["new_docs"] == entry
    assert parsed["sites"]["a"] == {"allowed_domain": "a.example.com"}
    assert _without_block(result.text, old) == old


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
