"""The generic content region: main text, code and tables kept; navigation and widgets dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING

import lxml.etree
import lxml.html
import pytest

from doc_scraper.extract.generic import generic_region
from doc_scraper.models import ExtractOptions
from doc_scraper.worker import parse_page

if TYPE_CHECKING:
    from lxml.etree import _Element as HtmlElement

PARSER = lxml.etree.HTMLParser(remove_comments=True)

INTRO = (
    "The frobnicator reads its settings from a TOML file in the project root. Every key has a "
    "default, so an empty file is valid; the sections below describe each key, the values it "
    "accepts and how the command line overrides it."
)
DETAIL = (
    "Unknown keys are reported with their line number so that typos never go unnoticed, and a "
    "value of the wrong type stops the program before it touches any file on disk."
)
CODE = 'import frob\n\nconfig = frob.load("frob.toml")\nprint(config.workers)  # 4'
CONTENT = f"""
<h1>Frobnicator settings</h1>
<p>{INTRO}</p>
<h2>Loading the file</h2>
<p>{DETAIL}</p>
<pre><code class="language-python">{CODE}</code></pre>
<table><thead><tr><th>Key</th><th>Default</th></tr></thead>
<tbody><tr><td>workers</td><td>4</td></tr><tr><td>timeout_s</td><td>30</td></tr></tbody></table>
<p>The <a href="/cli">command line</a> wins over the file for every key it names.</p>
"""


def _sidebar(cls: str, tag: str = "div") -> str:
    items = "".join(f'<li><a href="/docs/topic-{i}">Sidebar topic number {i}</a></li>' for i in range(30))
    return f'<{tag} class="{cls}"><ul>{items}</ul></{tag}>'


def _footer(cls: str, tag: str = "div") -> str:
    cols = "".join(f'<li><a href="/f/{i}">Footer link {i}</a></li>' for i in range(8))
    return (
        f'<{tag} class="{cls}"><ul>{cols}</ul><p>© 2026 Frob Project. Content licensed under CC BY 4.0, '
        "code under the MIT license. Built by the community.</p></" + tag + ">"
    )


COOKIE = (
    '<div class="{cls}"><p>We use cookies to improve your experience and analyse traffic. By browsing '
    'on you accept our use of cookies. <a href="/privacy">Privacy policy</a></p><button>Accept</button></div>'
)


def _doc(html: str, kind: str = "etree") -> HtmlElement:
    if kind == "etree":
        return lxml.etree.fromstring(html, PARSER)
    return lxml.html.document_fromstring(html)


def _text(el: HtmlElement | None) -> str:
    assert el is not None
    return " ".join(" ".join(el.itertext()).split())


def _assert_content(text: str) -> None:
    assert "Frobnicator settings" in text
    assert INTRO in text
    assert DETAIL in text
    assert 'config = frob.load("frob.toml")' in text
    assert "timeout_s" in text
    assert "wins over the file" in text


@pytest.mark.parametrize("kind", ["etree", "lxml.html"])
def test_semantic_page_keeps_text_code_and_table_and_drops_chrome(kind: str) -> None:
    page = (
        f"<html><head><title>Settings</title></head><body>{COOKIE.format(cls='cookie-banner')}"
        f'<header><nav><a href="/">Frob</a><a href="/docs">Docs</a><a href="/blog">Blog</a></nav></header>'
        f'<div class="layout">{_sidebar("sidebar", "aside")}<main><article>{CONTENT}</article></main></div>'
        f"{_footer('site-footer', 'footer')}</body></html>"
    )
    region = generic_region(_doc(page, kind))
    text = _text(region)
    _assert_content(text)
    assert region is not None and region.find(".//pre") is not None and region.find(".//table") is not None
    for chrome in ("Sidebar topic", "Footer link", "© 2026", "We use cookies", "Blog"):
        assert chrome not in text


def test_hashed_class_names_leave_density_to_find_the_content() -> None:
    page = (
        "<html><body>"
        f"{COOKIE.format(cls='css-k2j3')}"
        '<div class="css-a1b2"><a href="/">Frob</a><a href="/docs">Docs</a><a href="/blog">Blog</a></div>'
        f'<div class="css-c3d4">{_sidebar("css-e5f6")}<div class="css-g7h8">{CONTENT}</div></div>'
        f"{_footer('css-i9j0')}</body></html>"
    )
    text = _text(generic_region(_doc(page)))
    _assert_content(text)
    for chrome in ("Sidebar topic", "Footer link", "© 2026", "We use cookies"):
        assert chrome not in text


def test_table_layout_page_yields_the_content_cell() -> None:
    page = (
        '<html><body><table width="100%"><tr><td colspan="2">'
        '<a href="/">Home</a> | <a href="/x">Index</a></td></tr>'
        f'<tr><td width="200">{_sidebar("m")}</td><td>{CONTENT}</td></tr>'
        f'<tr><td colspan="2">{_footer("f")}</td></tr></table></body></html>'
    )
    text = _text(generic_region(_doc(page)))
    _assert_content(text)
    assert "Sidebar topic" not in text
    assert "Footer link" not in text


def test_comments_related_posts_and_breadcrumbs_inside_the_article_are_dropped() -> None:
    comments = "".join(
        f'<div class="x{i}"><span>user{i}</span><span>{i} months ago</span><p>I tried this on my laptop and '
        f"it worked after I restarted the daemon twice, thanks a lot for the write-up number {i}.</p>"
        '<a href="#reply">Reply</a></div>'
        for i in range(4)
    )
    related = "".join(
        f'<li class="teaser"><a href="/blog/{i}">Post {i}</a> A short blurb about post {i}.</li>'
        for i in range(4)
    )
    page = (
        '<html><body><div class="wrap"><div class="crumbs-x">'
        '<a href="/">Home</a> / <a href="/docs">Docs</a> / '
        f'<a href="/docs/cfg">Config</a></div>{CONTENT}<ul class="more">{related}</ul>'
        f'<div class="talk"><h2>4 Comments</h2>{comments}</div></div></body></html>'
    )
    text = _text(generic_region(_doc(page)))
    _assert_content(text)
    for chrome in ("months ago", "I tried this", "A short blurb", "Home / Docs"):
        assert chrome not in text


def test_highlighter_spans_named_like_widgets_keep_their_code() -> None:
    code = (
        '<pre><code class="hljs"><span class="hljs-comment">// share the config</span>\n'
        '<span class="hljs-keyword">const</span> cfg = load(); '
        '<span class="hidden-x comment">// ok</span></code></pre>'
    )
    content = f"<h1>Title</h1><p>{INTRO}</p>{code}"
    page = f"<html><body>{_sidebar('sidebar')}<div class='c'>{content}</div></body></html>"
    text = _text(generic_region(_doc(page)))
    assert "// share the config" in text
    assert "// ok" in text
    assert "Sidebar topic" not in text


def test_a_docs_section_whose_id_is_its_heading_slug_is_not_taken_for_a_widget() -> None:
    section = f'<section id="comments"><h2>Comments</h2><p>{DETAIL}</p></section>'
    page = f"<html><body>{_sidebar('sidebar')}<main>{CONTENT}{section}</main></body></html>"
    text = _text(generic_region(_doc(page)))
    _assert_content(text)
    assert text.count(DETAIL) == 2


def test_an_article_header_with_the_title_is_kept() -> None:
    page = (
        f"<html><body>{_sidebar('nav-x', 'nav')}<article><header><h1>Frobnicator settings</h1>"
        f"<p>Updated in May</p></header><p>{INTRO}</p><p>{DETAIL}</p></article></body></html>"
    )
    text = _text(generic_region(_doc(page)))
    assert "Frobnicator settings" in text
    assert INTRO in text


def test_a_page_of_links_only_has_no_generic_region() -> None:
    page = f"<html><body>{_sidebar('a')}{_sidebar('b')}</body></html>"
    assert generic_region(_doc(page)) is None


def test_the_worker_turns_the_generic_region_into_fenced_code_and_a_gfm_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import doc_scraper.extract.region as region

    monkeypatch.setattr(region, "readability_region", generic_region)
    page = (
        f"<!doctype html><html><head><title>Settings | Frob</title></head><body>"
        f'<div class="top"><a href="/">Frob</a><a href="/docs">Docs</a></div>'
        f'<div class="row">{_sidebar("left")}<div class="doc-body">{CONTENT}</div></div>{_footer("bottom")}'
        "</body></html>"
    )
    parsed = parse_page(page.encode(), "https://frob.example.org/docs/settings.html", ExtractOptions())
    assert parsed.detection.selector == ""  # no framework: the fallback chose the region
    md = parsed.markdown
    assert "```python\n" + CODE + "\n```" in md
    assert "| workers | 4 |" in md
    assert parsed.title == "Frobnicator settings"
    assert "Sidebar topic" not in md
    assert "Footer link" not in md


def test_a_lone_code_block_is_widened_to_the_text_around_it() -> None:
    art = "\n".join("#" * 60 for _ in range(12))
    page = (
        f"<html><body>{_sidebar('s')}<div class='doc'><div class='block'><div class='inner'><pre>{art}</pre>"
        "</div></div><p>Frob is a <a href='/a'>small</a> tool; see <a href='/b'>the guide</a> and "
        "<a href='/c'>the reference</a> for details.</p></div></body></html>"
    )
    text = _text(generic_region(_doc(page)))
    assert "#" * 60 in text
    assert "Frob is a small tool" in text


def test_an_index_page_keeps_its_links_as_content() -> None:
    entries = "".join(f'<li><a href="/api/{i}">frob_function_{i}</a></li>' for i in range(40))
    page = (
        f"<html><body><nav class='side'>{_sidebar('s')}</nav><div class='body'><h1>Index</h1>"
        f"<ul class='index'>{entries}</ul></div></body></html>"
    )
    text = _text(generic_region(_doc(page)))
    assert "frob_function_0" in text
    assert "frob_function_39" in text
    assert "Sidebar topic" not in text
