"""The ``run`` task spec: strict validation with messages naming the field, and the argv it stands for."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.errors import ConfigError
from doc_scraper.taskspec import check_interval, parse_task_spec


def test_a_minimal_crawl_task_becomes_the_crawl_command_line() -> None:
    spec = parse_task_spec('{"command": "crawl", "site": "py"}')
    assert spec.argv() == ["crawl", "-config", "config.yaml", "-site", "py", "-loglevel", "info"]


def test_every_crawl_field_maps_to_its_flag() -> None:
    spec = parse_task_spec(
        json.dumps(
            {
                "command": "crawl",
                "config": "other.yaml",
                "sites": ["a", "b"],
                "resume": True,
                "incremental": True,
                "loglevel": "debug",
                "json_logs": True,
            }
        )
    )
    assert spec.argv() == [
        "crawl", "-config", "other.yaml", "-sites", "a,b", "-resume", "-incremental",
        "-loglevel", "debug", "-json",
    ]  # fmt: skip


def test_a_watch_task_carries_its_interval_and_defaults_to_24h() -> None:
    assert parse_task_spec('{"command": "watch", "all_sites": true}').argv() == [
        "watch", "-config", "config.yaml", "-all-sites", "-interval", "24h", "-loglevel", "info",
    ]  # fmt: skip
    spec = parse_task_spec('{"command": "watch", "site": "a", "interval": "1d12h"}')
    assert "-interval" in spec.argv()
    assert spec.argv()[spec.argv().index("-interval") + 1] == "1d12h"


def test_false_booleans_add_no_flags() -> None:
    spec = parse_task_spec(
        '{"command": "crawl", "site": "a", "resume": false, "full": false, "json_logs": false}'
    )
    assert spec.argv() == ["crawl", "-config", "config.yaml", "-site", "a", "-loglevel", "info"]


@pytest.mark.parametrize(
    ("task", "field", "words"),
    [
        ("", "task", "no JSON on stdin"),
        ("[1]", "task", "expected one JSON object"),
        ("{", "task", "invalid JSON at line 1"),
        ('{"command": "crawl", "site": "a"} {"command": "crawl"}', "task", "only one JSON object"),
        ('{"command": "crawl", "site": "a", "site": "b"}', "site", "given twice"),
        ('{"command": "crawl", "site": "a", "verbose": true}', "verbose", "unknown field"),
        (
            '{"command": "crawl", "site": "a", "incremantal": true}',
            "incremantal",
            'did you mean "incremental"',
        ),
        ('{"command": "crawl", "site": "a", "pprof": ":6060"}', "pprof", "not supported"),
        ('{"site": "a"}', "command", "required"),
        ('{"command": "serve", "site": "a"}', "command", '"crawl" or "watch"'),
        ('{"command": "crawl"}', "site", "exactly one of"),
        ('{"command": "crawl", "site": "a", "sites": ["b"]}', "sites", "only one of site, sites"),
        ('{"command": "crawl", "site": "a", "all_sites": true}', "all_sites", "only one of"),
        ('{"command": "crawl", "all_sites": false}', "all_sites", "only true"),
        ('{"command": "crawl", "site": 3}', "site", "must be a string, got a number"),
        ('{"command": "crawl", "site": ""}', "site", "must not be empty"),
        ('{"command": "crawl", "sites": []}', "sites", "at least one"),
        ('{"command": "crawl", "sites": "a,b"}', "sites", "array of strings"),
        ('{"command": "crawl", "sites": ["a", 2]}', "sites", "array of strings"),
        ('{"command": "crawl", "sites": ["a", "a"]}', "sites", "more than once"),
        ('{"command": "crawl", "sites": ["a,b"]}', "sites[0]", "comma"),
        ('{"command": "crawl", "site": "a", "resume": "yes"}', "resume", "must be a boolean"),
        ('{"command": "crawl", "site": "a", "resume": 1}', "resume", "must be a boolean, got a number"),
        ('{"command": "crawl", "site": "a", "incremental": true, "full": true}', "full", "incremental"),
        ('{"command": "crawl", "site": "a", "interval": "1h"}', "interval", "only for watch"),
        ('{"command": "watch", "site": "a", "incremental": true}', "incremental", "only for crawl"),
        ('{"command": "watch", "site": "a", "full": false}', "full", "only for crawl"),
        ('{"command": "watch", "site": "a", "resume": true}', "resume", "only for crawl"),
        ('{"command": "watch", "site": "a", "interval": "0s"}', "interval", "positive"),
        ('{"command": "watch", "site": "a", "interval": "-1h"}', "interval", "negative"),
        ('{"command": "watch", "site": "a", "interval": "soon"}', "interval", "not a duration"),
        ('{"command": "watch", "site": "a", "interval": 3600}', "interval", "must be a string"),
        ('{"command": "crawl", "site": "a", "loglevel": "loud"}', "loglevel", "must be one of"),
        ('{"command": "crawl", "site": "a", "json_logs": null}', "json_logs", "got null"),
        ('{"command": "crawl", "site": "a", "x": NaN}', "task", "NaN"),
    ],
)
def test_invalid_tasks_are_rejected_with_a_message_naming_the_field(
    task: str, field: str, words: str
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_task_spec(task)
    assert info.value.key == field
    assert str(info.value).startswith(field + ": ")
    assert words in str(info.value)


def test_a_utf8_bom_and_surrounding_whitespace_are_accepted() -> None:
    assert parse_task_spec(b'\xef\xbb\xbf  {"command": "crawl", "site": "a"}\n').site == "a"


def test_bytes_that_are_not_utf8_are_rejected() -> None:
    with pytest.raises(ConfigError, match="not UTF-8"):
        parse_task_spec(b'{"command": "\xff"}')


@pytest.mark.parametrize(("text", "seconds"), [("30m", 1800), ("7d", 604800), ("1d12h", 129600), ("90", 90)])
def test_intervals_in_every_accepted_form_parse_to_seconds(text: str, seconds: float) -> None:
    assert check_interval(text) == seconds


@pytest.mark.parametrize("text", ["0", "0s", "-5m", "", "abc", "5 parsecs", "1h1h"])
def test_zero_negative_and_garbage_intervals_are_rejected_naming_the_flag(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^-interval: "):
        check_interval(text)


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=60))
def test_arbitrary_text_is_either_a_task_or_a_config_error(text: str) -> None:
    with contextlib.suppress(ConfigError):
        parse_task_spec(text)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["command", "site", "sites", "all_sites", "resume", "full", "interval", "bogus"]),
        st.one_of(
            st.none(), st.booleans(), st.integers(), st.text(max_size=5), st.lists(st.text(max_size=3))
        ),
        max_size=5,
    )
)
def test_arbitrary_objects_never_crash_the_validator(data: dict[str, object]) -> None:
    try:
        spec = parse_task_spec(json.dumps(data))
    except ConfigError:
        return
    assert spec.command in ("crawl", "watch")
    assert sum([spec.site is not None, bool(spec.sites), spec.all_sites]) == 1
