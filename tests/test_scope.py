from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.config.schema import Config, SiteConfig
from doc_scraper.errors import ConfigError
from doc_scraper.frontier.scope import SCOPE_REASONS, Scope
from doc_scraper.urls import try_normalize_url


def _scope(**site_kw: object) -> Scope:
    cfg_kw = {k: site_kw.pop(k) for k in list(site_kw) if k.startswith("max_") and k != "max_depth"}
    site = SiteConfig(
        key="docs",
        start_urls=("https://Example.com/docs/",),
        allowed_domain=str(site_kw.pop("allowed_domain", "Example.com")),
        allowed_path_prefix=str(site_kw.pop("allowed_path_prefix", "/docs")),
        **site_kw,  # type: ignore[arg-type]
    )
    return Scope.from_site(site, Config(sites={"docs": site}, **cfg_kw))  # type: ignore[arg-type]


def test_in_scope_urls_pass() -> None:
    scope = _scope()
    assert scope.check("https://example.com/docs/", 0) is None
    assert scope.check("https://example.com/docs", 0) is None
    assert scope.check("http://example.com/docs/guide/intro.html", 5) is None


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ftp://example.com/docs/a", "scheme"),
        ("mailto:a@example.com", "scheme"),
        ("https://other.com/docs/a", "domain"),
        ("https://docs.example.com/docs/a", "domain"),
        ("https://example.com/docsearch", "prefix"),
        ("https://example.com/blog/post", "prefix"),
        ("https://example.com/docs/logo.SVG", "resource"),
        ("https://example.com/docs/app.js", "resource"),
        ("https://example.com/docs/manual.pdf", "resource"),
        ("https://example.com/docs/data.json", "resource"),
        ("https://example.com:99999/docs/", "invalid"),
    ],
)
def test_out_of_scope_urls_name_their_reason(url: str, reason: str) -> None:
    assert _scope().check(url, 0) == reason


def test_a_directory_named_like_a_resource_is_not_a_resource() -> None:
    assert _scope().check("https://example.com/docs/api.json/", 0) is None
    assert _scope().check("https://example.com/docs/v1.2", 0) is None


def test_disallowed_patterns_are_searched_in_the_path() -> None:
    scope = _scope(disallowed_path_patterns=(r"/archive/", r"\.bak$"))
    assert scope.check("https://example.com/docs/archive/x", 0) == "pattern"
    assert scope.check("https://example.com/docs/x.bak", 0) == "pattern"
    assert scope.check("https://example.com/docs/archived", 0) is None


def test_a_bad_pattern_raises_config_error_naming_the_key() -> None:
    with pytest.raises(ConfigError, match=r"sites\.docs\.disallowed_path_patterns\[1\]"):
        _scope(disallowed_path_patterns=("ok", "(unclosed"))


def test_max_depth_is_exclusive_and_zero_means_unlimited() -> None:
    one = _scope(max_depth=1)
    assert one.check("https://example.com/docs/", 0) is None
    assert one.check("https://example.com/docs/a", 1) == "depth"
    three = _scope(max_depth=3)
    assert three.check("https://example.com/docs/a", 2) is None
    assert three.check("https://example.com/docs/a", 3) == "depth"
    assert _scope(max_depth=0).check("https://example.com/docs/a", 1000) is None


def test_url_length_path_depth_and_repetition_traps() -> None:
    scope = _scope(max_url_length=60, max_path_depth=4, max_segment_repeats=2)
    assert scope.check("https://example.com/docs/" + "x" * 50, 0) == "url_length"
    assert scope.check("https://example.com/docs/a/b/c/d", 0) == "path_depth"
    assert scope.check("https://example.com/docs/a/b/c", 0) is None
    assert scope.check("https://example.com/docs/a/a/a", 0) == "repetition"
    assert scope.check("https://example.com/docs/a/b/a", 0) is None


def test_check_target_ignores_depth_for_redirects() -> None:
    scope = _scope(max_depth=1)
    assert scope.check_target("https://example.com/docs/a") is None
    assert scope.check_target("https://evil.example/docs/a") == "domain"


def test_the_domain_check_ignores_the_port() -> None:
    scope = _scope(allowed_domain="127.0.0.1", allowed_path_prefix="/")
    assert scope.check("http://127.0.0.1:8123/x", 0) is None
    assert scope.check("http://127.0.0.2:8123/x", 0) == "domain"


def test_relpath_uses_the_site_prefix() -> None:
    assert _scope().relpath("https://example.com/docs/a/b.html") == "a/b.md"
    assert _scope().relpath("https://example.com/blog/") is None


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=50), st.integers(min_value=0, max_value=5))
def test_scope_is_stable_under_normalisation(tail: str, depth: int) -> None:
    scope = _scope(max_depth=3)
    url = try_normalize_url("https://example.com/docs/" + tail)
    if url is None:
        return
    reason = scope.check(url, depth)
    assert reason is None or reason in SCOPE_REASONS
    assert scope.check(try_normalize_url(url) or "", depth) == reason
