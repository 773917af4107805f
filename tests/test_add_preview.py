"""The ``add`` preview: the crawl's own extraction plus quality numbers for the chosen selector."""

from __future__ import annotations

from pathlib import Path

from doc_scraper.discover.preview import count_fenced_blocks, count_headings, preview_page

SITE_PAGE = Path(__file__).parent / "fixtures" / "add" / "site" / "docs" / "index.html"

LEAKY = b"""<!DOCTYPE html><html><head><meta name="generator" content="Sphinx 7.2.6"><title>T</title></head>
<body><div class="document"><div class="body" role="main"><h1>Title</h1>
<div class="page-sidebar-links"><a href="/a">A</a> <a href="/b">B</a></div>
<p>Enough prose for the region to count: this paragraph talks about the library at length so that the
extractor accepts the region as real content rather than a stub of a page without any text in it.</p>
<aside class="footnote brackets" role="note"><p>[1] A footnote is content, not navigation.</p></aside>
<pre>x = 1</pre></div></div>
<pre>outside the region</pre></body></html>"""


def test_the_fixture_page_keeps_its_code_and_headings_and_leaks_no_navigation() -> None:
    preview = preview_page(SITE_PAGE.read_bytes(), "http://127.0.0.1:1/docs/")
    assert preview.error == ""
    assert preview.detection.framework == "sphinx"
    assert preview.detection.selector == "div.body"
    assert preview.code_blocks_total == 2
    assert preview.code_blocks_kept == 2
    assert preview.headings == 4  # h1, two h2, one h3
    assert preview.nav_leak == 0
    assert 0.5 < preview.page_text_ratio < 1.0  # sidebar, related bar and footer stay out
    assert preview.chars == len(preview.markdown)
    assert preview.markdown.startswith("# Widgets")


def test_navigation_left_inside_the_region_is_counted_but_footnotes_are_not() -> None:
    preview = preview_page(LEAKY, "http://127.0.0.1:1/docs/")
    assert preview.nav_leak == 1
    assert preview.code_blocks_total == 2
    assert preview.code_blocks_kept == 1  # the <pre> outside the region is not in the Markdown


def test_a_selector_that_matches_nothing_is_reported_as_an_error() -> None:
    preview = preview_page(SITE_PAGE.read_bytes(), "http://127.0.0.1:1/docs/", content_selector="div.nope")
    assert "div.nope" in preview.error
    assert preview.chars == 0


def test_fenced_blocks_are_counted_only_when_closed_by_a_matching_fence() -> None:
    text = "```py\na\n```\n\n~~~~\nb\n```\nstill b\n~~~~\n\n````\nc\n```\n````\n```\nunclosed"
    assert count_fenced_blocks(text) == 3


def test_headings_inside_code_blocks_are_not_counted() -> None:
    assert count_headings("# A\n\n```\n# not a heading\n```\n## B\n##### too deep\n#nospace") == 2
