"""Loading config files: strict types, errors that name key path + line + fix, inheritance, durations."""

from __future__ import annotations

import math
import textwrap
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from doc_scraper.config import schema
from doc_scraper.config.durations import format_duration, parse_duration
from doc_scraper.config.load import (
    MAX_CONFIG_BYTES,
    check_config,
    closest_key,
    config_from_dict,
    load_config,
)
from doc_scraper.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

MINIMAL_SITE = """\
sites:
  docs:
    start_urls: [https://docs.example.com/guide/]
    allowed_domain: docs.example.com
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_error(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text))
    return info.value


def site(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"start_urls": ["https://docs.example.com/"], "allowed_domain": "docs.example.com"}
    data.update(overrides)
    return data


# ---------------------------------------------------------------- happy path


def test_a_minimal_file_loads_with_schema_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, MINIMAL_SITE))
    docs = config.sites["docs"]
    assert docs.key == "docs"
    assert docs.start_urls == ("https://docs.example.com/guide/",)
    assert docs.allowed_domain == "docs.example.com"
    assert docs.content_selector == "auto"
    assert docs.allowed_path_prefix == "/"
    assert docs.user_agent == schema.DEFAULT_USER_AGENT
    assert config.num_workers == schema.DEFAULT_NUM_WORKERS
    assert config.http_client_settings == schema.HTTPClientSettings()
    assert config.path == str(tmp_path / "config.yaml")
    assert config.warnings == ()


def test_sites_inherit_global_values_they_leave_unset(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
            default_user_agent: global-agent/1.0
            default_delay_per_host: 2s
            skip_images: false
            max_image_size_bytes: 1000
            enable_jsonl_output: false
            jsonl_output_filename: out.jsonl
            max_pages: 50
            enable_incremental: true
            sites:
              inherits:
                start_urls: [https://a.example.com/]
                allowed_domain: a.example.com
              overrides:
                start_urls: [https://b.example.com/]
                allowed_domain: b.example.com
                user_agent: site-agent/2.0
                delay_per_host: 250ms
                skip_images: true
                max_image_size_bytes: 5
                enable_jsonl_output: true
                jsonl_output_filename: b.jsonl
                max_pages: 7
                enable_incremental: false
            """,
        )
    )
    inherits, overrides = config.sites["inherits"], config.sites["overrides"]
    assert (inherits.user_agent, inherits.delay_per_host, inherits.skip_images) == (
        "global-agent/1.0",
        2.0,
        False,
    )
    assert (inherits.max_image_size_bytes, inherits.enable_jsonl_output) == (1000, False)
    assert (inherits.jsonl_output_filename, inherits.max_pages, inherits.enable_incremental) == (
        "out.jsonl",
        50,
        True,
    )
    assert (overrides.user_agent, overrides.delay_per_host, overrides.skip_images) == (
        "site-agent/2.0",
        0.25,
        True,
    )
    assert (overrides.max_image_size_bytes, overrides.enable_jsonl_output) == (5, True)
    assert (overrides.jsonl_output_filename, overrides.max_pages, overrides.enable_incremental) == (
        "b.jsonl",
        7,
        False,
    )


def test_a_key_left_empty_takes_its_default(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "num_workers:\n" + MINIMAL_SITE))
    assert config.num_workers == schema.DEFAULT_NUM_WORKERS


def test_duration_keys_accept_duration_text_and_plain_seconds(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            textwrap.dedent(
                """\
            default_delay_per_host: 1h30m
            initial_retry_delay: 500ms
            max_retry_delay: 90
            global_crawl_timeout: 1d12h
            per_page_timeout: 2.5
            shutdown_grace: 2m
            http_client_settings:
              timeout: 10s
            """
            )
            + MINIMAL_SITE,
        )
    )
    assert config.default_delay_per_host == 5400.0
    assert config.initial_retry_delay == 0.5
    assert config.max_retry_delay == 90.0
    assert config.global_crawl_timeout == 129600.0
    assert config.per_page_timeout == 2.5
    assert config.shutdown_grace == 120.0
    assert config.http_client_settings.timeout == 10.0


def test_max_retries_zero_means_no_retries() -> None:
    config = config_from_dict({"max_retries": 0, "sites": {"docs": site()}})
    assert config.max_retries == 0


def test_path_prefix_gets_a_leading_slash_and_empty_means_root() -> None:
    config = config_from_dict(
        {"sites": {"a": site(allowed_path_prefix="docs/"), "b": site(allowed_path_prefix="")}}
    )
    assert config.sites["a"].allowed_path_prefix == "/docs/"
    assert config.sites["b"].allowed_path_prefix == "/"


def test_domain_is_compared_case_insensitively_and_stored_lowercase() -> None:
    config = config_from_dict(
        {"sites": {"docs": site(start_urls=["https://Docs.Example.com/"], allowed_domain="DOCS.example.com")}}
    )
    assert config.sites["docs"].allowed_domain == "docs.example.com"


def test_missing_allowed_domain_is_taken_from_start_urls_with_a_warning() -> None:
    config = config_from_dict(
        {"sites": {"docs": {"start_urls": ["https://docs.example.com/a", "https://docs.example.com/b"]}}}
    )
    assert config.sites["docs"].allowed_domain == "docs.example.com"
    assert any("allowed_domain not set" in warning for warning in config.warnings)


def test_content_selector_auto_is_case_insensitive() -> None:
    config = config_from_dict({"sites": {"docs": site(content_selector="AUTO")}})
    assert config.sites["docs"].content_selector == "auto"


def test_start_url_outside_the_path_prefix_is_a_warning() -> None:
    config = config_from_dict(
        {"sites": {"docs": site(start_urls=["https://docs.example.com/blog/"], allowed_path_prefix="/docs/")}}
    )
    assert any("outside allowed_path_prefix" in warning for warning in config.warnings)


def test_loopback_start_urls_with_a_port_are_accepted() -> None:
    config = config_from_dict(
        {"sites": {"local": site(start_urls=["http://127.0.0.1:8123/"], allowed_domain="127.0.0.1")}}
    )
    assert config.sites["local"].allowed_domain == "127.0.0.1"


def test_yaml_merge_keys_share_settings_between_sites(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """\
            sites:
              a: &base
                start_urls: [https://docs.example.com/]
                allowed_domain: docs.example.com
                max_depth: 4
              b:
                <<: *base
                max_depth: 2
            """,
        )
    )
    assert (config.sites["a"].max_depth, config.sites["b"].max_depth) == (4, 2)


# ---------------------------------------------------------------- errors name key, line and fix


def test_the_documented_example_error_reads_as_promised(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        """\
        sites:
          mkdocs:
            start_urls: [https://docs.example.com/]
            allowed_domain: docs.example.com
            max_depth: two
        """,
    )
    assert (
        str(error)
        == 'sites.mkdocs.max_depth (line 5): expected an integer >= 0, got "two"; set e.g. max_depth: 3'
    )
    assert (error.key, error.line) == ("sites.mkdocs.max_depth", 5)


def test_unknown_global_key_suggests_the_closest_valid_key(tmp_path: Path) -> None:
    error = load_error(tmp_path, "num_worker: 4\n" + MINIMAL_SITE)
    assert (error.key, error.line) == ("num_worker", 1)
    assert "did you mean `num_workers`?" in str(error)


def test_unknown_site_key_suggests_the_closest_valid_key(tmp_path: Path) -> None:
    error = load_error(tmp_path, MINIMAL_SITE + "    max_dept: 3\n")
    assert (error.key, error.line) == ("sites.docs.max_dept", 5)
    assert "did you mean `max_depth`?" in str(error)


def test_unknown_nested_http_key_suggests_from_an_abbreviation(tmp_path: Path) -> None:
    error = load_error(tmp_path, "http_client_settings:\n  max_idle: 3\n" + MINIMAL_SITE)
    assert (error.key, error.line) == ("http_client_settings.max_idle", 2)
    assert "max_idle_conns_per_host" in str(error)


def test_global_key_inside_a_site_says_where_it_belongs(tmp_path: Path) -> None:
    error = load_error(tmp_path, MINIMAL_SITE + "    num_workers: 3\n")
    assert "global key: move it to the top level" in str(error)


def test_site_key_at_the_top_level_says_where_it_belongs(tmp_path: Path) -> None:
    error = load_error(tmp_path, "max_depth: 3\n" + MINIMAL_SITE)
    assert (error.key, error.line) == ("max_depth", 1)
    assert "per-site key: move it under sites.<key>" in str(error)


def test_default_user_agent_inside_a_site_points_to_user_agent() -> None:
    with pytest.raises(ConfigError, match="spelled `user_agent`"):
        config_from_dict({"sites": {"docs": site(default_user_agent="x")}})


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("num_workers", True, "expected an integer >= 1, got true"),
        ("num_workers", "4", 'expected an integer >= 1, got "4"'),
        ("num_workers", 2.5, "expected an integer >= 1, got 2.5"),
        ("num_workers", 0, "expected an integer >= 1, got 0"),
        ("max_requests", 0, "expected an integer >= 1, got 0"),
        ("max_requests_per_host", -1, "expected an integer >= 1, got -1"),
        ("max_retries", -1, "expected an integer >= 0, got -1"),
        ("max_image_size_bytes", -5, "expected an integer >= 0, got -5"),
        ("delay_jitter", 1.5, "expected a number between 0 and 1, got 1.5"),
        ("delay_jitter", "half", 'expected a number between 0 and 1, got "half"'),
        ("skip_images", "yes please", 'expected true or false, got "yes please"'),
        ("skip_images", 1, "expected true or false, got 1"),
        ("output_base_dir", 5, "expected a string, got 5"),
        ("default_user_agent", "", "must not be empty"),
        ("log_format", "xml", 'expected text or json, got "xml"'),
        ("jsonl_output_filename", "out/pages.jsonl", "expected a plain file name"),
        ("default_delay_per_host", "soon", '"soon" is not a duration'),
        ("default_delay_per_host", "-5s", "must not be negative"),
        ("default_delay_per_host", True, "expected a duration"),
        ("global_crawl_timeout", -1, "must not be negative"),
        ("http_client_settings", "fast", "expected a mapping"),
    ],
)
def test_wrong_global_values_are_errors_naming_the_key(key: str, value: Any, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict({key: value, "sites": {"docs": site()}})
    assert info.value.key == key
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("key", "value", "error_key", "expected"),
    [
        ("max_depth", -1, "sites.docs.max_depth", "expected an integer >= 0, got -1; set e.g. max_depth: 3"),
        ("respect_nofollow", "no", "sites.docs.respect_nofollow", 'expected true or false, got "no"'),
        ("start_urls", "https://docs.example.com/", "sites.docs.start_urls", "expected a list of strings"),
        ("start_urls", [], "sites.docs.start_urls", "must list at least one URL"),
        (
            "start_urls",
            ["ftp://docs.example.com/"],
            "sites.docs.start_urls[0]",
            "expected an absolute http(s) URL",
        ),
        ("start_urls", ["/relative"], "sites.docs.start_urls[0]", "expected an absolute http(s) URL"),
        (
            "start_urls",
            ["https://other.example.com/"],
            "sites.docs.start_urls[0]",
            'not allowed_domain "docs.example.com"',
        ),
        (
            "link_extraction_selectors",
            ["nav", 3],
            "sites.docs.link_extraction_selectors[1]",
            "expected a non-empty string",
        ),
        ("allowed_domain", "https://docs.example.com/", "sites.docs.allowed_domain", "not a URL"),
        ("allowed_domain", "docs.example.com:8080", "sites.docs.allowed_domain", "without a port"),
        ("allowed_domain", "bad domain", "sites.docs.allowed_domain", "not a valid hostname"),
        (
            "allowed_image_domains",
            ["*.ok.com", "not ok"],
            "sites.docs.allowed_image_domains[1]",
            "not a valid hostname",
        ),
        ("delay_per_host", "1x", "sites.docs.delay_per_host", "is not a duration"),
        ("content_selector", "", "sites.docs.content_selector", "must not be empty"),
    ],
)
def test_wrong_site_values_are_errors_naming_the_key_path(
    key: str, value: Any, error_key: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict({"sites": {"docs": site(**{key: value})}})
    assert info.value.key == error_key
    assert expected in str(info.value)


def test_invalid_regex_names_the_pattern_its_index_and_line(tmp_path: Path) -> None:
    error = load_error(
        tmp_path,
        MINIMAL_SITE + '    disallowed_path_patterns:\n      - ^/ok/\n      - "(unclosed"\n',
    )
    assert (error.key, error.line) == ("sites.docs.disallowed_path_patterns[1]", 7)
    assert 'invalid regular expression "(unclosed"' in str(error)


def test_missing_start_urls_is_an_error_at_the_site_line(tmp_path: Path) -> None:
    error = load_error(tmp_path, "sites:\n  docs:\n    allowed_domain: docs.example.com\n")
    assert (error.key, error.line) == ("sites.docs", 2)
    assert "missing required key start_urls" in str(error)


def test_missing_allowed_domain_with_mixed_hosts_is_an_error() -> None:
    with pytest.raises(ConfigError, match="missing required key allowed_domain"):
        config_from_dict(
            {"sites": {"docs": {"start_urls": ["https://a.example.com/", "https://b.example.com/"]}}}
        )


@pytest.mark.parametrize("key", ["my docs", "-docs", "docs/v2", "_hidden", ""])
def test_site_keys_that_cannot_be_folder_names_are_errors(key: str) -> None:
    with pytest.raises(ConfigError, match="folder name"):
        config_from_dict({"sites": {key: site()}})


def test_numeric_site_key_must_be_quoted(tmp_path: Path) -> None:
    error = load_error(tmp_path, "sites:\n  3.10:\n    start_urls: [https://docs.example.com/]\n")
    assert "quote it" in str(error)


def test_site_value_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="expected a mapping of site settings"):
        config_from_dict({"sites": {"docs": ["https://docs.example.com/"]}})


@pytest.mark.parametrize("text", ["sites: {}\n", "sites:\n", "num_workers: 2\n"])
def test_no_sites_is_an_error(tmp_path: Path, text: str) -> None:
    error = load_error(tmp_path, text)
    assert "no sites configured" in str(error)
    assert "doc-scraper add URL" in str(error)


def test_sites_as_a_list_is_an_error(tmp_path: Path) -> None:
    error = load_error(tmp_path, "sites:\n  - start_urls: [https://docs.example.com/]\n")
    assert (error.key, error.line) == ("sites", 1)
    assert "expected a mapping from site key to settings, got a list" in str(error)


def test_initial_retry_delay_longer_than_the_maximum_is_an_error() -> None:
    with pytest.raises(ConfigError, match="longer than max_retry_delay"):
        config_from_dict({"initial_retry_delay": "1m", "max_retry_delay": "30s", "sites": {"docs": site()}})


def test_zero_http_timeout_is_an_error() -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict({"http_client_settings": {"timeout": 0}, "sites": {"docs": site()}})
    assert info.value.key == "http_client_settings.timeout"


def test_duplicate_keys_are_an_error_naming_both_lines(tmp_path: Path) -> None:
    error = load_error(tmp_path, "num_workers: 2\nnum_workers: 3\n" + MINIMAL_SITE)
    assert (error.key, error.line) == ("num_workers", 2)
    assert "first set at line 1" in str(error)


def test_missing_file_names_the_path_and_how_to_create_one(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(ConfigError) as info:
        load_config(missing)
    message = str(info.value)
    assert str(missing) in message
    assert "doc-scraper add URL" in message
    assert "config.example.yaml" in message


def test_a_directory_is_not_a_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a file"):
        load_config(tmp_path)


def test_yaml_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    error = load_error(
        tmp_path, "sites:\n  docs:\n    start_urls: [https://a.example.com/\n    max_depth: 2\n"
    )
    message = str(error)
    assert message.startswith(str(tmp_path / "config.yaml") + ": YAML syntax error at line ")
    assert "column" in message
    assert error.line is not None
    assert "Traceback" not in message


def test_tab_indentation_is_a_syntax_error_with_a_line(tmp_path: Path) -> None:
    error = load_error(tmp_path, "sites:\n\tdocs: {}\n")
    assert "YAML syntax error at line 2" in str(error)


def test_a_file_over_the_size_limit_is_refused_without_parsing(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    with open(path, "wb") as handle:
        handle.truncate(MAX_CONFIG_BYTES + 1)  # sparse: no need to write 5 MiB
    with pytest.raises(ConfigError, match="over the 5 MiB limit"):
        load_config(path)


def test_non_utf8_bytes_are_an_error_with_a_line(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"sites:\n  docs: \xff\xfe\n")
    with pytest.raises(ConfigError, match="line 2: not valid UTF-8"):
        load_config(path)


@pytest.mark.parametrize(
    ("text", "got"), [("- a\n- b\n", "a list"), ("just text\n", '"just text"'), ("42\n", "42")]
)
def test_a_non_mapping_top_level_is_an_error(tmp_path: Path, text: str, got: str) -> None:
    error = load_error(tmp_path, text)
    assert f"the top level must be a mapping of settings (key: value), got {got}" in str(error)


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    error = load_error(tmp_path, "# only a comment\n")
    assert "the config is empty" in str(error)


def test_alias_bombs_are_refused(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    for level in range(1, 9):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    error = load_error(tmp_path, "\n".join(lines) + "\n")
    assert "aliases" in str(error)


def test_multiple_documents_are_a_syntax_error(tmp_path: Path) -> None:
    error = load_error(tmp_path, MINIMAL_SITE + "---\n" + MINIMAL_SITE)
    assert "YAML syntax error" in str(error)


def test_check_config_collects_every_error_per_site(tmp_path: Path) -> None:
    check = check_config(
        write(
            tmp_path,
            """\
            num_workers: 0
            sites:
              good:
                start_urls: [https://a.example.com/]
                allowed_domain: a.example.com
              bad:
                start_urls: [https://b.example.com/]
                allowed_domain: b.example.com
                max_depth: -1
                respect_nofollow: maybe
            """,
        )
    )
    assert not check.valid
    assert check.config is None
    assert [error.key for error in check.errors] == ["num_workers"]
    by_key = {result.key: result for result in check.sites}
    assert by_key["good"].valid
    assert [error.line for error in by_key["bad"].errors] == [9, 10]
    assert len(check.all_errors()) == 3


def test_config_from_dict_errors_have_no_line() -> None:
    with pytest.raises(ConfigError) as info:
        config_from_dict({"sites": {"docs": site(max_depth="two")}})
    assert info.value.line is None
    assert str(info.value).startswith("sites.docs.max_depth: ")


def test_closest_key_returns_none_when_nothing_is_close() -> None:
    assert closest_key("zzzz", ["num_workers", "max_depth"]) is None
    assert closest_key("max_dpeth", ["num_workers", "max_depth"]) == "max_depth"


# ---------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("500ms", 0.5),
        ("45s", 45.0),
        ("2m", 120.0),
        ("1h30m", 5400.0),
        ("1d12h", 129600.0),
        ("7d", 604800.0),
        ("1h 30m", 5400.0),
        ("1H", 3600.0),
        ("1.5s", 1.5),
        ("90", 90.0),
        ("2.5", 2.5),
        (" 10s ", 10.0),
        ("0", 0.0),
        (30, 30.0),
        (0.25, 0.25),
    ],
)
def test_parse_duration_reads_units_and_plain_seconds(text: str | float, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("-5s", "negative"),
        ("-1", "negative"),
        (-3, "negative"),
        ("soon", "not a duration"),
        ("5 minutes", "not a duration"),
        ("1h1h", "repeats the unit"),
        ("10x", "not a duration"),
        ("s", "not a duration"),
        (True, "expected a duration"),
        (math.inf, "finite"),
        (math.nan, "finite"),
    ],
)
def test_parse_duration_rejects_garbage_with_a_clear_message(text: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration(text)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.5, "500ms"),
        (45, "45s"),
        (90, "1m30s"),
        (5400, "1h30m"),
        (129600, "1d12h"),
        (1.5, "1.5s"),
        (-2, "-2s"),
    ],
)
def test_format_duration_writes_compact_text(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@given(st.integers(min_value=0, max_value=10**10))
def test_format_then_parse_round_trips_to_the_millisecond(millis: int) -> None:
    assert parse_duration(format_duration(millis / 1000)) == pytest.approx(millis / 1000)


def test_recursive_aliases_are_refused(tmp_path: Path) -> None:
    error = load_error(tmp_path, "a: &a [*a]\n")
    assert "recursive YAML aliases" in str(error)


def test_absurdly_deep_nesting_is_an_error_not_a_crash(tmp_path: Path) -> None:
    error = load_error(tmp_path, "[" * 20000 + "]" * 20000 + "\n")
    assert "nested too deeply" in str(error)


def test_python_specific_yaml_tags_are_refused(tmp_path: Path) -> None:
    error = load_error(tmp_path, "a: !!python/object/apply:os.system [echo hi]\n")
    assert "could not determine a constructor" in str(error)
