"""Framework detection: one minimal page per generator, carrying that generator's real markup."""

from __future__ import annotations

import pytest

from doc_scraper.models import ExtractOptions
from doc_scraper.worker import parse_page

URL = "https://docs.example.org/guide/page.html"
CONTENT = (
    "The frobnicator reads its settings from a TOML file in the project root. Every key has a "
    "default, so an empty file is valid; the sections below describe each key, the values it "
    "accepts and how the command line overrides it. Unknown keys are reported with their line "
    "number so that typos never go unnoticed."
)
CHROME = "Chrome sidebar entry"


def _page(head: str, body: str) -> bytes:
    body = body.replace("{C}", f"<h1>Frobnicator settings</h1><p>{CONTENT}</p>")
    body = body.replace("{NAV}", f'<nav class="sidebar"><ul><li><a href="/x">{CHROME}</a></li></ul></nav>')
    if not body.startswith("<body"):
        body = f"<body>{body}</body>"
    return f"<!doctype html><html><head><title>Settings</title>{head}</head>{body}</html>".encode()


PAGES: dict[str, tuple[str, str]] = {
    "docusaurus": (
        '<meta name="generator" content="Docusaurus v3.1.0">',
        '<div id="__docusaurus">{NAV}<main><article><nav class="theme-doc-breadcrumbs">Home</nav>'
        '<div class="theme-doc-markdown markdown">{C}</div></article></main></div>',
    ),
    "vitepress": (
        '<meta name="generator" content="VitePress v1.0.0">',
        '<div id="app">{NAV}<div id="VPContent" class="VPContent"><main class="main">'
        '<div class="vp-doc _guide_page"><div>{C}</div></div></main></div></div>',
    ),
    "vuepress": (
        '<meta name="generator" content="VuePress 2.0.0-rc.9">',
        '<div id="app">{NAV}<main class="vp-page"><div vp-content=""><div id="content">{C}</div></div></mai'
        "n></div>",
    ),
    "starlight": (
        '<meta name="generator" content="Astro v4.5.0"><meta name="generator" content="Starlight v0.21.0">'
        '<script type="module" src="/_astro/page.Bx1.js"></script>',
        '{NAV}<main data-pagefind-body=""><div class="content-panel"><div class="sl-markdown-content">{C}'
        "</div></div></main>",
    ),
    "nextra": (
        '<meta name="generator" content="Next.js">',
        '<div class="nextra-nav-container">{NAV}</div><div class="nextra-sidebar-container">menu</div>'
        '<article class="nx-w-full"><main data-pagefind-body="true">{C}</main></article>',
    ),
    "fumadocs": (
        "",
        '<div id="nd-docs-layout">{NAV}<main data-layout-main=""><article id="nd-page">'
        '<div class="prose">{C}</div></article></main></div>',
    ),
    "mintlify": (
        '<link rel="stylesheet" href="https://mintcdn.com/acme/style.css">',
        '{NAV}<div id="content-area"><div class="mdx-content prose" id="content">{C}</div></div>',
    ),
    "fern": (
        '<meta name="generator" content="https://buildwithfern.com">',
        '<div id="fern-docs"><div id="fern-header">{NAV}</div><main class="fern-main"><article>'
        '<div class="fern-prose">{C}</div></article></main></div>',
    ),
    "gitbook": (
        '<meta name="generator" content="GitBook (11.2.0)">',
        '<header data-gb-site-header="">{NAV}</header><main><div class="contents">{C}</div></main>',
    ),
    "mkdocs-material": (
        '<meta name="generator" content="mkdocs-1.5.3, mkdocs-material-9.5.2">',
        '<body data-md-color-scheme="default">{NAV}<div class="md-content" data-md-component="content">'
        '<article class="md-content__inner md-typeset">{C}</article></div></body>',
    ),
    "mkdocs-rtd": (
        '<link rel="stylesheet" href="../css/theme.css"><link rel="stylesheet" href="../css/theme_extra.css'
        '">',
        '<body class="wy-body-for-nav">{NAV}<section class="wy-nav-content-wrap"><div class="wy-nav-content">'
        '<div class="rst-content"><div role="main" class="document">{C}</div></div></div></section></body>',
    ),
    "mkdocs": (
        "",
        '{NAV}<div class="container"><div class="col-md-3">toc</div><div class="col-md-9" role="main">{C}'
        '</div></div><input id="mkdocs-search-query" type="text">',
    ),
    "sphinx-furo": (
        '<link rel="stylesheet" href="_static/styles/furo.css?v=135e06be">',
        '{NAV}<div class="page"><div class="main"><div class="content">'
        '<article role="main" id="furo-main-content">{C}</article></div></div></div>',
    ),
    "sphinx-book": (
        '<script src="_static/scripts/sphinx-book-theme.js?v=efea14e4"></script>'
        '<script src="_static/scripts/pydata-sphinx-theme.js?digest=dfe6"></script>',
        '<div class="sbt-scroll-pixel-helper"></div>{NAV}<main id="main-content" class="bd-main">'
        '<article class="bd-article" role="main">{C}</article></main>',
    ),
    "sphinx-pydata": (
        '<script src="_static/scripts/pydata-sphinx-theme.js?digest=dfe6"></script>',
        '{NAV}<main id="main-content" class="bd-main"><article class="bd-article" role="main">{C}</article>'
        "</main>",
    ),
    "sphinx-rtd": (
        '<link rel="stylesheet" href="_static/css/theme.css"><script src="_static/doctools.js"></script>',
        '<body class="wy-body-for-nav">{NAV}<div class="rst-content"><div role="main" class="document">'
        '<div itemprop="articleBody">{C}</div></div></div></body>',
    ),
    "antora": (
        '<meta name="generator" content="Antora 3.1.7"><link rel="stylesheet" href="../_/css/site.css">',
        '{NAV}<main class="article"><article class="doc">{C}</article></main>',
    ),
    "docsy": (
        '<meta name="generator" content="Hugo 0.121.1">',
        '<div class="td-sidebar">{NAV}</div><main role="main" class="td-main"><div class="td-content">{C}'
        "</div></main>",
    ),
    "hugo-book": (
        '<meta name="generator" content="Hugo 0.121.1">',
        '<aside class="book-menu">{NAV}</aside><div class="book-page"><article class="markdown book-article">'
        "{C}</article></div>",
    ),
    "geekdoc": (
        '<meta name="generator" content="Hugo 0.121.1">',
        '<div class="gdoc-page">{NAV}<article class="gdoc-markdown gdoc-markdown__align--left">{C}</article'
        "></div>",
    ),
    "just-the-docs": (
        '<meta name="generator" content="Jekyll v4.3.2"><link rel="stylesheet" href="/assets/css/just-the-d'
        'ocs-default.css">',
        '<div class="side-bar">{NAV}</div><div class="main" id="top"><div id="main-content-wrap" class="mai'
        'n-content-wrap">'
        '<div id="main-content" class="main-content"><main>{C}</main></div></div></div>',
    ),
    "mdbook": (
        '<script src="book.js"></script>',
        '<nav id="sidebar" class="sidebar">{NAV}</nav><div id="page-wrapper" class="page-wrapper"><div clas'
        's="page">'
        '<div id="menu-bar" class="menu-bar">Menu</div><div id="content" class="content"><main>{C}</main></'
        "div></div></div>",
    ),
    "rustdoc": (
        '<meta name="generator" content="rustdoc"><meta name="rustdoc-vars" data-root-path="../">',
        '<body class="rustdoc mod">{NAV}<main><section id="main-content" class="content">{C}</section></mai'
        "n></body>",
    ),
    "godoc": (
        "",
        '{NAV}<main class="go-Main"><article class="go-Main-article"><div class="Documentation js-documenta'
        'tion">'
        '<div class="Documentation-content js-docContent">{C}</div></div></article></main>',
    ),
    "javadoc": (
        '<meta name="generator" content="javadoc/ClassWriterImpl">',
        '<body class="class-declaration-page"><header role="banner">{NAV}</header><main role="main">{C}</ma'
        "in></body>",
    ),
    "doxygen": (
        '<meta name="generator" content="Doxygen 1.9.8"/>',
        '<div id="top"><div id="titlearea">Project</div></div>{NAV}<div class="header"><div class="headerti'
        'tle">'
        'T</div></div><div class="contents">{C}</div>',
    ),
    "typedoc": (
        '<link rel="stylesheet" href="../assets/style.css">',
        '<div class="container container-main"><div class="col-content">{C}</div><div class="col-sidebar">{'
        "NAV}"
        '</div></div><div class="tsd-generator"><p>Generated using TypeDoc</p></div>',
    ),
    "writerside": (
        "",
        '{NAV}<main class="panel _main"><article class="article" data-shortcut-switcher="inactive" '
        'data-template="article">{C}</article></main>',
    ),
    "readme": (
        '<meta name="readme-deploy" content="5.104.0">',
        '{NAV}<article class="rm-Article"><div data-testid="RDMD" class="rm-Markdown markdown-body">{C}</di'
        "v></article>",
    ),
    "intercom": (
        "",
        '{NAV}<div class="article intercom-force-break"><div class="article_body">{C}</div></div>',
    ),
    "docus": (
        "",
        '<header class="docus-sub-header">{NAV}</header><div class="document-driven-page" data-content-id="'
        '1">{C}</div>',
    ),
    "docbook": (
        '<meta name="generator" content="DocBook XSL Stylesheets Vsnapshot">',
        '<div class="navheader"><table><tr><td>Prev</td><td>Next</td></tr></table></div>'
        '<div class="sect1" id="x">{C}</div><div class="navfooter">footer links</div>',
    ),
    "sphinx": (
        '<script src="_static/documentation_options.js"></script><script src="_static/doctools.js"></script>',
        '<div class="related" role="navigation">{NAV}</div><div class="document"><div class="documentwrappe'
        'r">'
        '<div class="bodywrapper"><div class="body" role="main">{C}</div></div></div>'
        '<div class="sphinxsidebar" role="navigation">Quick search</div></div>',
    ),
}

SHELLS: dict[str, str] = {
    "docsify": '<div id="app">Loading...</div><script>window.$docsify = {name: "x"}</script>'
    '<script src="//cdn.jsdelivr.net/npm/docsify@4"></script>',
    "swagger-ui": '<div id="swagger-ui"></div><script src="./swagger-ui-bundle.js"></script>'
    '<script src="./swagger-initializer.js"></script>',
    "redoc": '<redoc spec-url="openapi.yaml"></redoc><script src="https://cdn.redoc.ly/redoc/latest/bundles/'
    'redoc.standalone.js"></script>',
    "scalar": '<script id="api-reference" data-url="/openapi.json"></script>'
    '<script src="https://cdn.jsdelivr.net/npm/@scalar/api-reference"></script>',
    "document360": "<d360-article-content></d360-article-content>",
    "js-shell": '<div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>'
    '<script src="/static/js/main.4f1c.js"></script>',
}


def test_every_listed_framework_has_a_signature_page() -> None:
    from doc_scraper.extract.profiles import PROFILES

    assert {p.id for p in PROFILES} == set(PAGES)
    assert len(PAGES) >= 33


@pytest.mark.parametrize("framework", sorted(PAGES))
def test_signature_page_is_detected_and_its_content_kept(framework: str) -> None:
    head, body = PAGES[framework]
    page = parse_page(_page(head, body), URL, ExtractOptions())
    assert page.detection.framework == framework
    assert page.detection.confidence in ("high", "medium")
    assert page.detection.selector
    assert CONTENT in " ".join(page.markdown.split())
    assert CHROME not in page.markdown
    assert page.title == "Frobnicator settings"
    assert not page.needs_javascript


def test_generator_token_gives_high_confidence_and_source_generator() -> None:
    page = parse_page(_page(*PAGES["docusaurus"]), URL, ExtractOptions())
    assert (page.detection.confidence, page.detection.source) == ("high", "generator")
    assert page.detection.generator == "docusaurus v3.1.0"


def test_dom_only_signature_gives_medium_confidence() -> None:
    page = parse_page(_page(*PAGES["fumadocs"]), URL, ExtractOptions())
    assert (page.detection.confidence, page.detection.source) == ("medium", "dom")


def test_asset_veto_keeps_sphinx_rtd_pages_away_from_mkdocs_rtd() -> None:
    page = parse_page(_page(*PAGES["sphinx-rtd"]), URL, ExtractOptions())
    assert page.detection.framework == "sphinx-rtd"


@pytest.mark.parametrize("shell", sorted(SHELLS))
def test_client_rendered_shell_is_reported_not_converted(shell: str) -> None:
    page = parse_page(_page("", SHELLS[shell]), URL, ExtractOptions())
    assert page.needs_javascript
    assert page.markdown == ""
    assert page.detection.framework == shell
    assert page.detection.confidence == "js-rendered"


def test_short_static_page_without_scripts_is_not_a_shell() -> None:
    page = parse_page(b"<html><body><p>Moved to the new site.</p></body></html>", URL, ExtractOptions())
    assert not page.needs_javascript
    assert "Moved to the new site." in page.markdown
    assert page.detection.framework == "unknown"


def test_document360_with_server_rendered_article_is_not_a_shell() -> None:
    body = f"<d360-article-content><h1>T</h1><p>{CONTENT}</p></d360-article-content>"
    page = parse_page(_page("", body), URL, ExtractOptions())
    assert not page.needs_javascript


def test_unknown_page_falls_back_to_readability() -> None:
    body = (
        f'<div class="menu">{CHROME} one two three</div><div class="post"><h1>Frobnicator settings</h1>'
        f"<p>{CONTENT}</p><p>{CONTENT}</p></div>"
    )
    page = parse_page(_page("", body), URL, ExtractOptions())
    assert page.detection.framework == "unknown"
    assert page.detection.confidence == "fallback"
    assert page.detection.selector == ""
    assert CONTENT in " ".join(page.markdown.split())


def test_detected_region_too_short_is_marked_unvalidated() -> None:
    head, body = PAGES["docusaurus"]
    body = body.replace("{C}", "<p>Short.</p>")
    page = parse_page(_page(head, body), URL, ExtractOptions())
    assert page.detection.framework == "docusaurus"
    assert page.detection.confidence == "unvalidated"
    assert "Short." in page.markdown


def test_detection_is_decided_per_page_not_per_host() -> None:
    first = parse_page(_page(*PAGES["docusaurus"]), URL, ExtractOptions())
    second = parse_page(_page(*PAGES["mkdocs-material"]), URL, ExtractOptions())
    assert (first.detection.framework, second.detection.framework) == ("docusaurus", "mkdocs-material")


def test_short_page_with_an_analytics_script_is_not_a_shell() -> None:
    body = (
        "<p>This guide moved to the new handbook; update your bookmarks.</p>"
        '<script src="https://stats.example.org/a.js"></script>'
    )
    page = parse_page(_page("", body), URL, ExtractOptions())
    assert not page.needs_javascript
    assert "This guide moved" in page.markdown


def test_noscript_asking_for_javascript_marks_a_shell() -> None:
    body = "<noscript>Please enable JavaScript to view the documentation.</noscript><div class='x'></div>"
    page = parse_page(_page("", body), URL, ExtractOptions())
    assert page.needs_javascript
