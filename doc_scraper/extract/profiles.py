"""Docs-framework signatures and selectors: data, not code.

Each ``Profile`` says how to recognise pages of one generator and where their
content lives. ``detect.py`` scores every profile against a page; ``region.py``
tries ``content`` left to right and removes ``exclude`` plus ``CHROME`` inside
the chosen region. Order matters: themes come before the family they belong to,
so a tie goes to the more specific profile.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Profile:
    """How to recognise one docs framework and where its content is."""

    id: str
    content: tuple[str, ...]  # CSS alternatives in priority order
    generator: tuple[str, ...] = ()  # specific tokens in <meta name=generator> (+4)
    generic: tuple[str, ...] = ()  # generic generator tokens, e.g. "hugo" (+1)
    dom: tuple[str, ...] = ()  # CSS selectors (+2 if any matches)
    assets: tuple[str, ...] = ()  # substrings of script[src] / link[href] (+1)
    veto: tuple[str, ...] = ()  # asset substrings that rule the profile out
    exclude: tuple[str, ...] = ()  # chrome inside the content region


@dataclass(frozen=True, slots=True)
class Shell:
    """A client-rendered page whose content needs JavaScript."""

    id: str
    dom: tuple[str, ...] = ()  # any matching element is a hit
    assets: tuple[str, ...] = ()  # substrings of script[src] / link[href]
    inline: tuple[str, ...] = ()  # substrings of inline <script> text
    empty: tuple[str, ...] = ()  # selectors that, when present and empty, make a shell
    needs_both: bool = False  # dom AND assets must both hit


PROFILES: tuple[Profile, ...] = (
    Profile(
        "docusaurus",
        content=("article .theme-doc-markdown", ".theme-doc-markdown", "main article"),
        generator=("docusaurus",),
        dom=("[data-docusaurus]", ".theme-doc-markdown", "html.plugin-docs"),
        assets=("/assets/js/runtime~main.",),
        exclude=(
            "nav.theme-doc-breadcrumbs",
            "div.theme-doc-toc-mobile",
            "footer.theme-doc-footer",
            "span.theme-doc-version-badge",
            "div.theme-doc-version-banner",
            "nav.pagination-nav",
            "div.theme-doc-footer-edit-meta-row",
        ),
    ),
    Profile(
        "vitepress",
        content=(".vp-doc", "main.main", "#VPContent"),
        generator=("vitepress",),
        dom=(".vp-doc", "#VPContent"),
        exclude=(
            ".header-anchor",
            ".VPDocFooter",
            ".edit-link",
            ".prev-next",
            "span.lang",  # the language label over a code block (the language is on the wrapper)
            "div.line-numbers-wrapper",  # the gutter of ```lang:line-numbers, beside the <pre>
        ),
    ),
    Profile(
        "vuepress",
        content=("[vp-content] #content", ".theme-hope-content", "[vp-content]", ".theme-default-content"),
        generator=("vuepress",),
        dom=("[vp-content]", ".theme-default-content", ".theme-hope-content"),
        exclude=(".header-anchor", ".page-meta", ".page-nav", ".vp-page-meta", ".vp-page-nav"),
    ),
    Profile(
        "starlight",
        # The page's h1 sits in its own panel before .sl-markdown-content: take the whole main.
        content=(
            "main[data-pagefind-body]",
            "main[data-pagefind-body] .sl-markdown-content",
            ".sl-markdown-content",
        ),
        generator=("starlight",),
        generic=("astro",),
        dom=(".sl-markdown-content", "starlight-toc", "#starlight__sidebar"),
        assets=("/_astro/",),
        exclude=(
            ".sl-anchor-link",
            "starlight-toc",
            "mobile-starlight-toc",
            ".pagination-links",
            ".meta",
            "figcaption .sr-only",  # Expressive Code's "Terminal window" label
        ),
    ),
    Profile(
        "nextra",
        content=("main[data-pagefind-body='true']", "article main", "article"),
        generic=("next.js",),
        dom=(
            ".nextra-toc",
            ".nextra-sidebar",
            ".nextra-breadcrumb",
            ".nextra-navbar",
            ".nextra-sidebar-container",
            ".nextra-nav-container",
        ),
        exclude=(".nextra-breadcrumb", ".nextra-toc", ".nextra-sidebar-container", ".subheading-anchor"),
    ),
    Profile(
        "fumadocs",
        content=("article#nd-page .prose", "article#nd-page", "main[data-layout-main]"),
        dom=("#nd-page", "#nd-docs-layout"),
        exclude=("#nd-toc", "[data-toc-popover]", ".nd-breadcrumb"),
    ),
    Profile(
        "mintlify",
        content=("#content-area .mdx-content", ".mdx-content", "#content-area"),
        generator=("mintlify",),
        dom=("#content-area",),
        assets=("mintcdn.com", "mintlify"),
        exclude=("#pagination", ".feedback-toolbar", "#page-context-menu", "#header"),
    ),
    Profile(
        "fern",
        content=(".fern-prose", "main.fern-main article"),
        generator=("buildwithfern.com",),
        dom=("#fern-docs", "#fern-header", "#fern-sidebar", "main.fern-main"),
        exclude=(".fern-breadcrumb", ".fern-feedback", ".fern-anchor"),
    ),
    Profile(
        "gitbook",
        content=("main div.contents", "main"),
        generator=("gitbook (",),
        dom=("[data-gb-sections]", "[data-gb-table-of-contents]", "[data-gb-site-header]"),
        exclude=("nav", "[aria-label='Breadcrumb']", "[data-gb-page-footer]"),
    ),
    Profile(
        "mkdocs-material",
        content=("article.md-content__inner", ".md-content article", ".md-content"),
        generator=("mkdocs-material", "material for mkdocs", "zensical"),
        generic=("mkdocs",),
        dom=("[data-md-component]", "[data-md-color-scheme]", ".md-content"),
        exclude=(".md-source-file", ".md-content__button", ".md-feedback", ".md-tags"),
    ),
    Profile(
        "mkdocs-rtd",
        content=("div[role='main'].document", "div.rst-content", ".wy-nav-content"),
        generic=("mkdocs",),
        dom=("body.wy-body-for-nav",),
        assets=("css/theme_extra.css",),
        veto=("_static/",),
        exclude=("div[role='navigation']", ".rst-footer-buttons", ".wy-breadcrumbs"),
    ),
    Profile(
        "mkdocs",
        content=("div.col-md-9[role='main']", "div[role='main']"),
        generator=("mkdocs-",),
        dom=("#mkdocs-search-query", "#mkdocs_search_modal", "div.col-md-9[role='main']"),
    ),
    Profile(
        "sphinx-furo",
        content=("article#furo-main-content", "article[role='main']"),
        dom=("article#furo-main-content", ".sidebar-drawer"),
        assets=("furo.css", "furo.js", "styles/furo"),
        exclude=(".content-icon-container", ".related-pages", ".bottom-of-page", ".toc-drawer"),
    ),
    Profile(
        "sphinx-book",
        content=("article.bd-article", "main.bd-main"),
        dom=(".sbt-scroll-pixel-helper",),
        assets=("sphinx-book-theme.js", "sphinx-book-theme.css", "sphinx-book-theme"),
        exclude=(".prev-next-area", ".header-article", ".bd-sidebar-secondary", ".bd-footer-article"),
    ),
    Profile(
        "sphinx-pydata",
        content=("article.bd-article", "main#main-content"),
        dom=("article.bd-article",),
        assets=("pydata-sphinx-theme.js", "pydata-sphinx-theme.css", "pydata-sphinx-theme"),
        exclude=(
            ".prev-next-area",
            ".bd-header-article",
            ".bd-sidebar-secondary",
            ".bd-footer-article",
            ".bd-breadcrumbs",
        ),
    ),
    Profile(
        "sphinx-rtd",
        content=(".rst-content div[itemprop='articleBody']", ".rst-content", "div[role='main']"),
        dom=("body.wy-body-for-nav", ".rst-content"),
        assets=("_static/",),
        exclude=("div[role='navigation']", ".rst-footer-buttons", ".wy-breadcrumbs"),
    ),
    Profile(
        "antora",
        content=("article.doc",),
        generator=("antora",),
        dom=("article.doc",),
        assets=("_/css/site.css", "_/js/site.js"),
        exclude=(".toolbar", ".breadcrumbs", ".pagination", "aside.toc"),
    ),
    Profile(
        "docsy",
        content=("div.td-content",),
        generic=("hugo",),
        dom=(".td-content", ".td-sidebar"),
        exclude=(".td-page-meta", ".feedback--title", ".td-byline", ".td-toc", ".d-print-none"),
    ),
    Profile(
        "hugo-book",
        content=("article.book-article", "article.markdown"),
        generic=("hugo",),
        dom=("article.book-article", ".book-menu"),
        exclude=(".book-footer", ".book-header"),
    ),
    Profile(
        "geekdoc",
        content=("article.gdoc-markdown",),
        generic=("hugo",),
        dom=("article.gdoc-markdown", ".gdoc-page"),
        exclude=(".gdoc-page__footer", ".gdoc-markdown__link--anchor", ".gdoc-page__anchor", ".gdoc-nav"),
    ),
    Profile(
        "just-the-docs",
        content=("#main-content main", "#main-content"),
        generic=("jekyll",),
        dom=("div#main-content.main-content", ".side-bar"),
        assets=("just-the-docs",),
        exclude=(".breadcrumb-nav", ".anchor-heading", ".site-footer"),
    ),
    Profile(
        "mdbook",
        content=("#mdbook-content main", "#content main", "main"),
        dom=(
            "#mdbook-content",
            "nav#mdbook-sidebar",
            "#mdbook-page-wrapper",
            "#menu-bar.menu-bar",
            "#sidebar.sidebar mdbook-sidebar-scrollbox",
        ),
        assets=("book.js", "mdbook"),
        exclude=(".nav-chapters", ".nav-wrapper", ".mobile-nav-chapters"),
    ),
    Profile(
        "rustdoc",
        content=("#main-content",),
        generator=("rustdoc",),
        dom=("[data-rustdoc-version]", "section#main-content.content", "rustdoc-search"),
        exclude=(
            ".src-line-numbers",
            "rustdoc-toolbar",
            ".sub-heading",
            "#copy-path",
            ".main-heading .out-of-band",
            "a.src",
            "a.anchor",
            ".doc-anchor",
            ".rustdoc-breadcrumbs",
            "summary.hideme",  # "Expand description" toggle of the item's top docs
            "a.tooltip",  # the ⓘ marker of should_panic / ignore examples
        ),
    ),
    Profile(
        "godoc",
        content=(".Documentation-content", "[data-test-id='UnitDetails-content']", "article.go-Main-article"),
        dom=(".Documentation-content", "[data-test-id='UnitDetails-content']"),
        exclude=(".Documentation-toc", ".Documentation-sinceVersion", ".Documentation-idLink"),
    ),
    Profile(
        "javadoc",
        content=("main[role='main']", "main", "div.contentContainer"),
        generator=("javadoc",),
        dom=(
            "body.class-declaration-page",
            "body.package-declaration-page",
            "div.contentContainer",
            "nav.flex-box",
            "div.sub-nav",
        ),
        assets=("script-dir/jquery", "member-search-index.js", "stylesheet.css"),
        exclude=(".sub-nav", ".top-nav", "#navbar-top", ".bottom-nav", ".inheritance-tree"),
    ),
    Profile(
        "doxygen",
        content=("div.contents",),
        generator=("doxygen",),
        dom=("div#nav-path.navpath", "div#titlearea", "div.headertitle"),
        assets=("doxygen.css", "dynsections.js"),
        exclude=("div.navpath", "div.memtitle a.permalink", ".dynheader"),
    ),
    Profile(
        "typedoc",
        content=(".col-content", ".tsd-panel"),
        dom=(".tsd-generator", ".col-content .tsd-panel", ".tsd-page-toolbar"),
        assets=("assets/main.js", "assets/style.css", "assets/navigation.js"),
        exclude=(".tsd-breadcrumb", ".tsd-index-panel", ".tsd-anchor-icon", ".tsd-page-navigation"),
    ),
    Profile(
        "writerside",
        content=("article.article",),
        dom=("article.article[data-template='article']",),
        assets=("/writerside/apidoc/", "writerside"),
        exclude=(".article__bottom", ".article-footer", ".navigation-links"),
    ),
    Profile(
        "readme",
        content=("[data-testid='RDMD']", "div.rm-Markdown.markdown-body", "article.rm-Article"),
        dom=("meta[name='readme-deploy']", "[data-testid='RDMD']", "article.rm-Article"),
        exclude=(".rm-Pagination", ".PageThumbs", ".rm-Guides-footer"),
    ),
    Profile(
        "intercom",
        content=("div.article_body", "div.article.intercom-force-break"),
        dom=("div.article.intercom-force-break",),
        exclude=(".intercom-reaction-picker", ".article__meta"),
    ),
    Profile(
        "docus",
        content=("[data-content-id]", ".document-driven-page"),
        dom=(".docus-sub-header",),
        exclude=(".docs-prev-next", ".docs-toc", ".edit-link"),
    ),
    Profile(
        "docbook",
        content=(
            "#docContent",
            "div.book",
            "div.part",
            "div.chapter",
            "div.sect1",
            "div.refentry",
            "div.article",
            "div.preface",
            "div.appendix",
            "div.reference",
            "div.section",
        ),
        generator=("docbook",),
        dom=("div.navheader", "div.navfooter"),
        exclude=("div.navheader", "div.navfooter", "div.toc"),
    ),
    Profile(
        "sphinx",
        content=("div.body", "article.bd-article", "div[role='main']", "div.document"),
        dom=("div.body", "div.sphinxsidebar", "div.document", "a.headerlink"),
        assets=("_static/documentation_options", "_static/doctools", "searchindex.js"),
        exclude=("div.sphinxsidebar", "div.related", "div.footer"),
    ),
)

PROFILE_BY_ID: dict[str, Profile] = {p.id: p for p in PROFILES}

# Checked before the profiles: pages whose content only exists after JavaScript ran.
SHELLS: tuple[Shell, ...] = (
    Shell("docsify", assets=("docsify.min.js", "docsify@", "/docsify/"), inline=("$docsify",)),
    Shell(
        "swagger-ui",
        dom=("#swagger-ui",),
        assets=("swagger-ui-bundle", "swagger-initializer", "swagger-ui.css", "swagger-ui-standalone"),
        needs_both=True,
    ),
    Shell("redoc", dom=("redoc",), assets=("redoc.standalone.js",)),
    Shell("scalar", dom=("#api-reference[data-url]",), assets=("@scalar/api-reference",)),
    Shell("document360", empty=("d360-article-content", ".d360-article-content")),
)

# Mount points of single-page apps: with scripts and no text, the page is a shell.
SPA_MOUNTS: tuple[str, ...] = ("#root", "#app", "#__next", "#__nuxt", "#___gatsby", "#svelte", "app-root")

# Chrome removed inside any content region, whatever the framework. Give each a tag when it is
# known: a tag-qualified selector is checked on far fewer elements.
CHROME: tuple[str, ...] = (
    "a.headerlink",
    "a.hash-link",
    "a.header-anchor",
    "a.anchor-link",
    "a.permalink",
    "a.edit-on-github",
    "a.heading-anchor",
    "a.anchorjs-link",
    "a.sl-anchor-link",
    "span.sl-anchor-link",
    "nav",
    "div[role='navigation']",
    "ul.breadcrumbs",
    "ol.breadcrumb",
    "div.breadcrumbs",
    "footer",
    "a.edit-this-page",
    "div.edit-this-page",
    "div.theme-edit-this-page",
    "a.theme-edit-this-page",
    "button",
    "div.feedback",
    "div.was-this-helpful",
    "a.skip-link",
    "div.sphinxsidebar",
    "div.related",
    "div.footer",
)
