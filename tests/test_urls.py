from __future__ import annotations

import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.urls import (
    normalize_url,
    origin,
    path_segments_match_prefix,
    relative_link,
    same_host,
    try_normalize_url,
    url_matches_domain,
    url_to_relpath,
)

# --- normalize_url ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTP://Example.COM/Docs/", "http://example.com/Docs/"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("http://example.com", "http://example.com/"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/a/b/..", "http://example.com/a/"),
        ("http://example.com/../../x", "http://example.com/x"),
        ("http://example.com/a#section", "http://example.com/a"),
        ("http://example.com/a?x=1&y=2", "http://example.com/a"),
        ("http://example.com/%7euser/%2e%2e/x", "http://example.com/x"),
        ("http://example.com/a%2fb", "http://example.com/a%2Fb"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://example.com/ü", "http://example.com/%C3%BC"),
        ("http://example.com/100%", "http://example.com/100%25"),
        ("http://user:secret@example.com/a", "http://example.com/a"),
        ("http://[::1]:8080/a", "http://[::1]:8080/a"),
        ("http://EXAMPLE.com./a", "http://example.com/a"),
        ("  http://example.com/a  ", "http://example.com/a"),
    ],
)
def test_normalize_url_produces_the_canonical_spelling(raw: str, expected: str) -> None:
    assert normalize_url(raw) == expected


def test_normalize_url_keeps_the_trailing_slash() -> None:
    assert normalize_url("http://example.com/a/") == "http://example.com/a/"
    assert normalize_url("http://example.com/a") == "http://example.com/a"


def test_normalize_url_keeps_only_named_query_parameters_sorted() -> None:
    url = "http://example.com/p?z=1&utm_source=x&version=2&a=b&version=1"
    assert normalize_url(url, ("version", "a")) == "http://example.com/p?a=b&version=1&version=2"


def test_normalize_url_gives_idna_for_unicode_hosts() -> None:
    assert normalize_url("http://Bücher.example/a") == "http://xn--bcher-kva.example/a"


def test_normalize_url_leaves_other_schemes_but_drops_the_fragment() -> None:
    assert normalize_url("mailto:someone@example.com#x") == "mailto:someone@example.com"


def test_normalize_url_raises_value_error_for_a_bad_port() -> None:
    with pytest.raises(ValueError):
        normalize_url("http://example.com:99999/")
    assert try_normalize_url("http://example.com:abc/") is None


_segment = st.text(
    alphabet=st.characters(codec="utf-8") | st.sampled_from(list("%./?#;=&")),
    max_size=12,
)
_hosts = st.sampled_from(["example.com", "EXAMPLE.com", "Bücher.de", "127.0.0.1", "[::1]", "a.b.c."])
_ports = st.sampled_from(["", ":80", ":443", ":8080"])


@st.composite
def _urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP"]))
    path = "/".join(draw(st.lists(_segment, max_size=6)))
    query = draw(st.sampled_from(["", "?v=1", "?b=2&a=1&v=x y", "?v=%41%zz"]))
    frag = draw(st.sampled_from(["", "#frag", "#"]))
    return f"{scheme}://{draw(_hosts)}{draw(_ports)}/{path}{query}{frag}"


@settings(max_examples=150, deadline=None)
@given(_urls(), st.sampled_from([(), ("v",), ("a", "b", "v")]))
def test_normalize_url_is_idempotent(url: str, keep: tuple[str, ...]) -> None:
    once = try_normalize_url(url, keep)
    if once is None:
        return
    assert normalize_url(once, keep) == once
    assert "#" not in once


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=40))
def test_normalize_url_is_idempotent_on_arbitrary_paths(tail: str) -> None:
    once = try_normalize_url("http://example.com/" + tail)
    if once is None:
        return
    assert normalize_url(once) == once


# --- hosts, origins, prefixes ------------------------------------------------------


def test_same_host_compares_host_and_effective_port() -> None:
    assert same_host("http://Example.com/a", "http://example.com:80/b")
    assert not same_host("http://example.com/", "https://example.com/")
    assert not same_host("http://example.com/", "http://docs.example.com/")


def test_origin_shows_the_port_only_when_not_default() -> None:
    assert origin("HTTPS://Example.com:443/a/b?x#y") == "https://example.com"
    assert origin("http://example.com:8080/a") == "http://example.com:8080"
    assert origin("http://[::1]:81/") == "http://[::1]:81"


def test_url_matches_domain_compares_host_names_and_ignores_the_port() -> None:
    assert url_matches_domain("http://Example.com/a", "example.com")
    assert url_matches_domain("http://example.com:8080/a", "example.com")
    assert url_matches_domain("http://127.0.0.1:8080/a", "127.0.0.1")
    assert url_matches_domain("http://example.com./a", "Example.com")
    assert not url_matches_domain("http://sub.example.com/a", "example.com")
    assert not url_matches_domain("http://example.com.evil/a", "example.com")
    assert not url_matches_domain("http://[bad/", "example.com")


@pytest.mark.parametrize(
    ("path", "prefix", "expected"),
    [
        ("/docs", "/docs", True),
        ("/docs/", "/docs", True),
        ("/docs/x/y", "/docs", True),
        ("/docsearch", "/docs", False),
        ("/docs", "/docs/", True),
        ("/other", "/docs/", False),
        ("/anything", "/", True),
        ("/anything", "", True),
    ],
)
def test_path_prefix_matches_whole_segments(path: str, prefix: str, expected: bool) -> None:
    assert path_segments_match_prefix(path, prefix) is expected


# --- url_to_relpath ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "prefix", "expected"),
    [
        ("http://example.com/", "/", "index.md"),
        ("http://example.com/docs/", "/docs", "index.md"),
        ("http://example.com/docs", "/docs/", "index.md"),
        ("http://example.com/docs/a/b.html", "/docs", "a/b.md"),
        ("http://example.com/docs/a/b/", "/docs", "a/b/index.md"),
        ("http://example.com/docs/a/b", "/docs", "a/b/index.md"),
        ("http://example.com/api/v1.2", "/", "api/v1.2/index.md"),
        ("http://example.com/a/Intro.HTM", "/", "a/Intro.md"),
        ("http://example.com/a%3Cb%3E/c", "/", "a_b_/c/index.md"),
        ("http://example.com/a/%2e%2e/%2E%2E/etc/passwd", "/", "a/untitled/untitled/etc/passwd/index.md"),
        ("http://example.com/a/..%2f..%2fx", "/", "a/.._.._x/index.md"),
        ("http://example.com/con/x", "/", "_con/x/index.md"),
        ("http://example.com/a%00b/", "/", "a_b/index.md"),
    ],
)
def test_url_to_relpath_maps_like_the_reference(url: str, prefix: str, expected: str) -> None:
    assert url_to_relpath(url, "example.com", prefix) == expected


def test_url_to_relpath_refuses_urls_outside_the_site() -> None:
    assert url_to_relpath("http://other.com/docs/a", "example.com", "/docs") is None
    assert url_to_relpath("http://example.com/docsearch", "example.com", "/docs") is None
    assert url_to_relpath("ftp://example.com/docs/a", "example.com", "/docs") is None


def test_url_to_relpath_gives_each_kept_query_its_own_file() -> None:
    a = url_to_relpath("http://example.com/p.html?v=1", "example.com", "/")
    b = url_to_relpath("http://example.com/p.html?v=2", "example.com", "/")
    plain = url_to_relpath("http://example.com/p.html", "example.com", "/")
    assert a is not None
    assert b is not None
    assert len({a, b, plain}) == 3
    assert a.startswith("p-q")
    assert a.endswith(".md")


def test_url_to_relpath_cuts_long_segments_on_a_utf8_boundary_and_keeps_them_apart() -> None:
    long_a = "é" * 80 + "a"
    long_b = "é" * 80 + "b"
    a = url_to_relpath(f"http://example.com/{long_a}/x", "example.com", "/")
    b = url_to_relpath(f"http://example.com/{long_b}/x", "example.com", "/")
    assert a is not None
    assert b is not None
    assert a != b
    assert all(len(part.encode("utf-8")) <= 100 for part in a.split("/"))


def _inside_site(relpath: str) -> bool:
    parts = relpath.split("/")
    return (
        not relpath.startswith("/")
        and "\\" not in relpath
        and "\x00" not in relpath
        and all(p not in ("", ".", "..") for p in parts)
        and posixpath.normpath(relpath) == relpath
        and all(len(p.encode("utf-8")) <= 100 for p in parts)
        and relpath.endswith(".md")
    )


_tricky_segment = st.sampled_from(
    [
        "..",
        ".",
        "...",
        "%2e%2e",
        "%2E.",
        ".%2e",
        "%2e",
        "a",
        "b.html",
        "..html",
        "%2f..",
        "..%5c..",
        "\\..",
        "%00",
        "con",
        "x%2Fy",
        " ",
        "%20..",
        "index.html",
        "é" * 60,
        "%FF%FE",
        "a:b",
        "*?",
    ]
)
_tricky_tail = st.lists(_tricky_segment | st.text(max_size=8), max_size=8).map("/".join)


@settings(max_examples=200, deadline=None)
@given(_tricky_tail | st.text(max_size=60), st.sampled_from(["", "?v=1"]))
def test_url_to_relpath_never_leaves_the_site_folder(tail: str, query: str) -> None:
    for url in ("http://example.com/" + tail + query, try_normalize_url("http://example.com/" + tail)):
        if url is None:
            continue
        rel = url_to_relpath(url, "example.com", "/")
        if rel is not None:
            assert _inside_site(rel), rel


_safe_segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=8).filter(
    lambda s: s != "index"
)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(_safe_segment, min_size=0, max_size=4), st.booleans()),
        min_size=2,
        max_size=8,
    )
)
def test_url_to_relpath_is_injective_over_distinct_pages(pages: list[tuple[list[str], bool]]) -> None:
    # Distinct pages: the same segments either as a directory page or as "<last>.html".
    # Known collisions are excluded by construction: trailing-slash variants (the same page),
    # a.html vs a.htm, /x/ vs /x/index.html, and characters the sanitiser replaces.
    urls: dict[str, tuple[tuple[str, ...], bool]] = {}
    for segments, as_file in pages:
        as_file = as_file and bool(segments)
        path = "/".join(segments) + (".html" if as_file else "/")
        urls["http://example.com/" + path] = (tuple(segments), as_file)
    mapped: dict[str, tuple[tuple[str, ...], bool]] = {}
    for url, key in urls.items():
        rel = url_to_relpath(url, "example.com", "/")
        assert rel is not None
        assert mapped.setdefault(rel, key) == key, (rel, url)


# --- relative_link -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("src", "dst", "fragment", "expected"),
    [
        ("index.md", "a/b.md", "", "a/b.md"),
        ("a/b/index.md", "a/c.md", "x", "../c.md#x"),
        ("a/b.md", "a/b.md", "top", "#top"),
        ("a/b.md", "a/b.md", "", "b.md"),
        ("a/x.md", "index.md", "#sec", "../index.md#sec"),
    ],
)
def test_relative_link_joins_posix_path_and_fragment(
    src: str, dst: str, fragment: str, expected: str
) -> None:
    assert relative_link(src, dst, fragment) == expected
