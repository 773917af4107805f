"""config.example.yaml documents exactly the keys of config/schema.py, with their defaults, and loads."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import yaml

from doc_scraper.config.load import load_config
from doc_scraper.config.schema import Config, HTTPClientSettings, SiteConfig

EXAMPLE = Path(__file__).resolve().parent.parent / "config.example.yaml"
NOT_IN_YAML = {"sites", "path", "warnings", "key"}  # set by the loader, not by the user


def field_names(cls: type) -> set[str]:
    return {field.name for field in dataclasses.fields(cls)} - NOT_IN_YAML


def example_data() -> dict[str, object]:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_the_example_config_loads_without_warnings() -> None:
    config = load_config(EXAMPLE)
    assert list(config.sites) == ["python_docs"]
    python = config.sites["python_docs"]
    assert python.start_urls == ("https://docs.python.org/3/",)
    assert python.allowed_domain == "docs.python.org"
    assert python.allowed_path_prefix == "/3/"
    assert config.warnings == ()


def test_every_global_key_is_documented_and_no_stale_key_remains() -> None:
    assert set(example_data()) - {"sites"} == field_names(Config)


def test_every_http_client_key_is_documented_and_no_stale_key_remains() -> None:
    http = example_data()["http_client_settings"]
    assert isinstance(http, dict)
    assert set(http) == field_names(HTTPClientSettings)


def test_every_site_key_is_documented_and_no_stale_key_remains() -> None:
    sites = example_data()["sites"]
    assert isinstance(sites, dict)
    for site in sites.values():
        assert set(site) == field_names(SiteConfig)


def test_every_key_has_a_comment_line_above_it() -> None:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"^\s*([a-z_]+):", line)
        if match and match.group(1) not in {"sites", "python_docs"}:
            assert lines[index - 1].strip().startswith("#"), f"no comment above {match.group(1)}"


def test_the_example_global_values_are_the_schema_defaults() -> None:
    config = load_config(EXAMPLE)
    defaults = Config(sites={})
    for name in field_names(Config):
        assert getattr(config, name) == getattr(defaults, name), name
