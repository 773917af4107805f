"""Scope proposals for ``add``: prefix, version/locale handling, exclusions and depth from a sitemap."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.discover.scope import propose_scope, segment_kind


def _urls(host: str, paths: list[str]) -> list[str]:
    return [f"https://{host}{path}" for path in paths]


@pytest.mark.parametrize(
    ("segment", "kind"),
    [
        ("en", "locale"),
        ("pt-BR", "locale"),
        ("zh_Hans", "locale"),
        ("fr", "locale"),
        ("3.11", "version"),
        ("v2", "version"),
        ("1.x", "version"),
        ("latest", "version"),
        ("next", "version"),
        ("docs", "ordinary"),
        ("library", "ordinary"),
        ("xx", "ordinary"),
        ("v2beta", "ordinary"),
    ],
)
def test_segments_are_classified_as_locale_version_or_ordinary(segment: str, kind: str) -> None:
    assert segment_kind(segment) == kind


def test_a_site_at_the_root_keeps_the_root_and_reports_its_sections() -> None:
    paths = ["/index.html", "/about.html"] + [f"/library/m{i}.html" for i in range(30)]
    paths += [f"/c-api/f{i}.html" for i in range(6)]
    scope = propose_scope("https://docs.example.org/index.html", _urls("docs.example.org", paths))
    assert scope.prefix == "/"
    assert scope.disallowed_path_patterns == ()
    assert scope.pages_in_scope == len(paths)
    assert scope.clusters[0] == ("library/", 30)
    assert scope.max_depth == 3  # deepest is 2 levels (library/m0.html), +1
    assert any("library/ 30" in line for line in scope.evidence)


def test_read_the_docs_layout_keeps_locale_and_version_and_names_their_siblings() -> None:
    paths = []
    for locale in ("en", "fr"):
        for version in ("latest", "stable", "2.0"):
            paths += [f"/{locale}/{version}/guide/p{i}.html" for i in range(6)]
    scope = propose_scope("https://proj.readthedocs.io/en/latest/", _urls("proj.readthedocs.io", paths))
    assert scope.prefix == "/en/latest/"
    assert scope.locale == "en"
    assert scope.version == "latest"
    assert scope.pages_in_scope == 6
    joined = "\n".join(scope.evidence)
    assert "other locales in the sitemap stay out: fr" in joined
    assert "other versions in the sitemap stay out: 2.0, stable" in joined


def test_translations_and_versions_nested_under_the_prefix_become_exclusions() -> None:
    paths = [f"/docs/page{i}" for i in range(10)]
    paths += [f"/docs/guide/g{i}" for i in range(5)]
    paths += [f"/docs/next/page{i}" for i in range(10)]
    paths += [f"/docs/fr/page{i}" for i in range(7)]
    scope = propose_scope("https://example.com/docs/intro", _urls("example.com", paths))
    assert scope.prefix == "/docs/"
    assert scope.disallowed_path_patterns == ("^/docs/fr/", "^/docs/next/")
    assert scope.pages_in_scope == 15
    assert re.match(scope.disallowed_path_patterns[0], "/docs/fr/page1")
    assert re.match(scope.disallowed_path_patterns[1], "/docs/next/page3")
    assert not any(re.match(p, "/docs/guide/g1") for p in scope.disallowed_path_patterns)


def test_the_seeds_own_version_directory_is_never_excluded() -> None:
    paths = [f"/docs/2.x/p{i}" for i in range(8)] + [f"/docs/1.x/p{i}" for i in range(8)]
    scope = propose_scope("https://example.com/docs/2.x/p1", _urls("example.com", paths))
    assert scope.prefix == "/docs/2.x/"
    assert scope.disallowed_path_patterns == ()


def test_a_seed_deep_in_a_section_proposes_the_documentation_root() -> None:
    paths = [f"/docs/guide/advanced/a{i}.html" for i in range(6)]
    paths += [f"/docs/api/b{i}.html" for i in range(20)]
    scope = propose_scope("https://example.com/docs/guide/advanced/a1.html", _urls("example.com", paths))
    assert scope.prefix == "/docs/"


def test_a_directory_with_too_few_sitemap_pages_is_not_kept() -> None:
    paths = ["/blog/a.html", "/blog/b.html"] + [f"/p{i}.html" for i in range(40)]
    scope = propose_scope("https://example.com/blog/a.html", _urls("example.com", paths))
    assert scope.prefix == "/"
    assert any("only 2 sitemap pages under /blog/" in line for line in scope.evidence)


def test_without_a_sitemap_the_first_directory_is_kept_and_depth_defaults_to_5() -> None:
    scope = propose_scope("https://example.com/docs/guide/start.html", None)
    assert scope.prefix == "/docs/"
    assert scope.max_depth == 5
    assert scope.sitemap_pages == 0


def test_sitemap_urls_on_the_www_twin_count_and_other_hosts_do_not() -> None:
    urls = _urls("www.example.com", [f"/docs/p{i}" for i in range(6)]) + _urls("cdn.other.net", ["/docs/x"])
    scope = propose_scope("https://example.com/docs/", urls)
    assert scope.sitemap_pages == 6
    assert scope.prefix == "/docs/"


@pytest.mark.parametrize(("depth", "expected"), [(1, 3), (5, 6), (20, 10)])
def test_max_depth_is_the_deepest_sitemap_path_plus_one_within_3_to_10(depth: int, expected: int) -> None:
    deep = "/docs/" + "/".join(f"d{i}" for i in range(depth - 1)) + ("/" if depth > 1 else "") + "page.html"
    paths = [deep] + [f"/docs/p{i}.html" for i in range(5)]
    scope = propose_scope("https://example.com/docs/", _urls("example.com", paths))
    assert scope.max_depth == expected


def test_a_huge_scope_is_warned_about() -> None:
    paths = [f"/docs/p{i}.html" for i in range(10_000)]
    scope = propose_scope("https://example.com/docs/", _urls("example.com", paths))
    assert scope.warnings
    assert "10000 pages in scope" in scope.warnings[0]


_segment = st.sampled_from(["docs", "en", "fr", "latest", "v2", "3.11", "api", "guide", "a b", "%41"])


@settings(max_examples=40, deadline=None)
@given(st.lists(_segment, max_size=5), st.booleans(), st.lists(st.lists(_segment, max_size=4), max_size=30))
def test_the_seed_always_lies_under_the_proposed_prefix(
    seed_dirs: list[str], trailing: bool, sitemap_dirs: list[list[str]]
) -> None:
    seed_path = "/" + "".join(d + "/" for d in seed_dirs) + ("" if trailing else "page.html")
    urls = ["https://example.com/" + "".join(d + "/" for d in dirs) + "x.html" for dirs in sitemap_dirs]
    scope = propose_scope("https://example.com" + seed_path, urls)
    assert scope.prefix.startswith("/")
    assert scope.prefix.endswith("/")
    assert seed_path.startswith(scope.prefix)
    assert 3 <= scope.max_depth <= 10
    for pattern in scope.disallowed_path_patterns:
        assert not re.match(pattern, seed_path)
