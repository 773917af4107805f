"""Links for the frontier: absolute, fragment-free, de-duplicated, nofollow, <base href>, canonical."""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.errors import ExtractError
from doc_scraper.extract.links import Resolver
from doc_scraper.models import ExtractOptions
from doc_scraper.worker import parse_page

URL = "https://docs.example.org/guide/intro/page.html"


def _page(body: str, head: str = "") -> bytes:
    return f"<html><head><title>t</title>{head}</head><body>{body}</body></html>".encode()


def test_links_are_absolute_without_fragment_and_deduplicated_in_order() -> None:
    body = (
        '<a href="b.html#x">b</a><a href="../up.html">up</a><a href="/root">r</a><a href="b.html">again</a>'
        '<a href="https://other.org/p?q=1#frag">o</a><a href="#local">l</a><a href="//cdn.example.net/x">c<'
        "/a>"
    )
    page = parse_page(_page(body), URL, ExtractOptions())
    assert page.links == (
        "https://docs.example.org/guide/intro/b.html",
        "https://docs.example.org/guide/up.html",
        "https://docs.example.org/root",
        "https://other.org/p?q=1",
        URL,
        "https://cdn.example.net/x",
    )


def test_non_http_schemes_are_skipped() -> None:
    body = (
        '<a href="mailto:a@b.c">m</a><a href="javascript:void(0)">j</a><a href="ftp://x/y">f</a><a>none</a>'
    )
    assert parse_page(_page(body), URL, ExtractOptions()).links == ()


def test_nofollow_links_are_skipped_only_when_asked() -> None:
    body = '<a rel="nofollow noopener" href="/secret">s</a><a href="/open">o</a>'
    assert parse_page(_page(body), URL, ExtractOptions(respect_nofollow=True)).links == (
        "https://docs.example.org/open",
    )
    assert len(parse_page(_page(body), URL, ExtractOptions()).links) == 2


def test_base_href_is_used_to_resolve_links_and_markdown() -> None:
    body = '<h1>T</h1><p>See <a href="ref/api.html#f">the API</a>.</p>'
    page = parse_page(_page(body, '<base href="https://cdn.example.org/v2/">'), URL, ExtractOptions())
    assert page.links == ("https://cdn.example.org/v2/ref/api.html",)
    assert "[the API](https://cdn.example.org/v2/ref/api.html#f)" in page.markdown


def test_link_selectors_limit_where_links_are_taken_from() -> None:
    body = '<nav><a href="/nav-only">n</a></nav><main><a href="/in-main">m</a></main>'
    page = parse_page(_page(body), URL, ExtractOptions(link_selectors=("main",)))
    assert page.links == ("https://docs.example.org/in-main",)


def test_canonical_and_noindex_are_read_from_head() -> None:
    head = '<link rel="canonical" href="/guide/intro/"><meta name="robots" content="noindex, follow">'
    page = parse_page(_page("<p>x</p>", head), URL, ExtractOptions())
    assert page.canonical == "https://docs.example.org/guide/intro/"
    assert page.noindex


def test_meta_refresh_target_is_a_link() -> None:
    head = '<meta http-equiv="refresh" content="0; url=../new/page.html">'
    page = parse_page(_page("Redirecting...", head), URL, ExtractOptions())
    assert "https://docs.example.org/guide/new/page.html" in page.links
    assert not page.needs_javascript


def test_markdown_links_are_absolute_and_same_page_fragments_stay() -> None:
    body = '<h1>T</h1><p><a href="#sec">here</a> and <a href="other.html#sec">there</a></p>'
    md = parse_page(_page(body), URL, ExtractOptions()).markdown
    assert "[here](#sec)" in md
    assert "[there](https://docs.example.org/guide/intro/other.html#sec)" in md


# Empty segments ("a//b") are left out: urljoin collapses them, RFC 3986 (and the resolver) keep them.
_segment = st.sampled_from(["a", "b.html", "..", ".", "x y", "c%20d", "?q=1", "#f", "d;p", "e?x=/./y"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_segment, max_size=5), st.sampled_from(["", "/", "//h2/", "https://o.org/"]))
def test_resolver_agrees_with_urljoin_on_relative_references(parts: list[str], prefix: str) -> None:
    href = prefix + "/".join(parts)
    base = "https://docs.example.org/a/b/c.html?z=1"
    expected = urljoin(base, href) if href else base
    got = Resolver(base).absolute(href)
    assert got == expected


def test_invalid_link_selector_is_an_extract_error_naming_it() -> None:
    with pytest.raises(ExtractError, match="link_selectors"):
        parse_page(_page("<a href='/x'>x</a>"), URL, ExtractOptions(link_selectors=("a[",)))
