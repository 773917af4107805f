"""Markdown fidelity: code blocks, tables, admonitions, definitions, headings, chrome removal."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.convert.dom import CodeBlock
from doc_scraper.convert.markdown import CONVERTERS, fence, html_to_markdown, splice_code
from doc_scraper.models import SECTION_END, SECTION_MARK, ExtractOptions
from doc_scraper.worker import parse_page

URL = "https://docs.example.org/a/page.html"


def convert(body: str, title: str = "Page — Example docs") -> str:
    html = f"<html><head><title>{title}</title></head><body><main>{body}</main></body></html>"
    return parse_page(html.encode(), URL, ExtractOptions(content_selector="main")).markdown


# code blocks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "lang"),
    [
        (
            '<div class="highlight-python3 notranslate"><div class="highlight"><pre>x = 1</pre></div></div>',
            "python",
        ),
        (
            '<div class="highlight-pycon notranslate"><div class="highlight"><pre>x = 1</pre></div></div>',
            "pycon",
        ),
        (
            '<div class="highlight-default notranslate"><div class="highlight"><pre>x = 1</pre></div></div>',
            "python",
        ),
        (
            '<div class="highlight-none notranslate"><div class="highlight"><pre>x = 1</pre></div></div>',
            "text",
        ),
        ('<pre class="prism-code language-bash"><code>x = 1</code></pre>', "bash"),
        ('<pre><code class="language-js">x = 1</code></pre>', "javascript"),
        ('<pre><code class="hljs lang-ruby">x = 1</code></pre>', "ruby"),
        ('<pre data-language="toml"><code>x = 1</code></pre>', "toml"),
        ('<div class="highlight" data-lang="go"><pre>x = 1</pre></div>', "go"),
        ('<div class="language-yaml highlight"><pre><span></span><code>x = 1</code></pre></div>', "yaml"),
        ('<pre class="rust rust-example-rendered"><code>x = 1</code></pre>', "rust"),
        ("<pre>x = 1</pre>", "text"),
    ],
)
def test_fence_language_comes_from_each_class_convention(html: str, lang: str) -> None:
    assert f"```{lang}\nx = 1\n```" in convert(html)


def test_code_text_is_byte_exact_with_markdown_characters_and_indentation() -> None:
    code = "def f(*args, **kw):\n    return a_b * c  # <tag> & `tick`\n\n\tTabbed | pipe"
    html_code = code.replace("&", "&amp;").replace("<", "&lt;")
    md = convert(f'<div class="highlight-python3"><div class="highlight"><pre>{html_code}</pre></div></div>')
    assert f"```python\n{code}\n```" in md


def test_code_containing_backtick_fences_gets_a_longer_fence() -> None:
    md = convert("<pre><code class='language-md'>```js\nx\n```</code></pre>")
    assert "````md\n```js\nx\n```\n````" in md


def test_pygments_table_line_numbers_are_dropped() -> None:
    html = (
        '<div class="highlight-python3"><div class="highlight"><table class="highlighttable"><tr>'
        '<td class="linenos"><div class="linenodiv"><pre>1\n2</pre></div></td>'
        '<td class="code"><div class="highlight"><pre><span></span>x = 1\ny = 2\n</pre></div></td>'
        "</tr></table></div></div>"
    )
    md = convert(html)
    assert "```python\nx = 1\ny = 2\n```" in md
    assert "1\n2" not in md


def test_inline_line_number_spans_are_dropped() -> None:
    html = (
        '<div class="highlight"><pre><span class="linenos">1</span>a\n'
        '<span class="linenos">2</span>b</pre></div>'
    )
    assert "```text\na\nb\n```" in convert(html)


def test_docusaurus_code_lines_and_copy_button() -> None:
    html = (
        '<div class="language-js theme-code-block"><div class="codeBlockContent"><pre class="prism-code lan'
        'guage-js">'
        '<code><span class="token-line">const a = 1;<br></span><span class="token-line"><br></span>'
        '<span class="token-line">a++;<br></span></code></pre><div class="buttonGroup">'
        '<button aria-label="Copy code to clipboard">Copy</button></div></div></div>'
    )
    md = convert(html)
    assert "```javascript\nconst a = 1;\n\na++;\n```" in md
    assert "Copy" not in md


def test_rustdoc_line_number_column_is_dropped() -> None:
    html = (
        '<div class="example-wrap"><pre class="src-line-numbers"><a href="#1">1</a>\n<a href="#2">2</a></pre>'
        '<pre class="rust"><code>let x = 5;\nlet y = x;</code></pre></div>'
    )
    md = convert(html)
    assert md.count("```") == 2
    assert "```rust\nlet x = 5;\nlet y = x;\n```" in md


def test_doxygen_fragment_lines_become_a_code_block() -> None:
    html = '<div class="fragment"><div class="line">int a;</div><div class="line">a++;</div></div>'
    assert "int a;\na++;" in convert(html)


def test_code_block_inside_list_item_and_quote_keeps_its_container() -> None:
    md = convert(
        "<ul><li><p>step</p><pre>run it\n  twice</pre></li></ul><blockquote><pre>q</pre></blockquote>"
    )
    assert "- step\n\n  ```text\n  run it\n    twice\n  ```" in md
    assert "> ```text\n> q\n> ```" in md


def test_doctest_prompts_that_are_part_of_the_source_stay() -> None:
    html = (
        '<div class="highlight-pycon"><div class="highlight"><pre>'
        '<span class="gp">&gt;&gt;&gt; </span>1 + 1\n2</pre></div></div>'
    )
    assert ">>> 1 + 1\n2" in convert(html)


# tables -----------------------------------------------------------------------------------------


def test_table_with_code_links_and_pipes_is_a_gfm_table() -> None:
    html = (
        "<table><thead><tr><th>Name</th><th>Meaning</th></tr></thead><tbody>"
        '<tr><td><code>a|b</code></td><td>see <a href="x.html">x</a></td></tr>'
        "<tr><td>plain</td><td><p>one</p><p>two</p></td></tr></tbody></table>"
    )
    md = convert(html)
    assert "| Name | Meaning |\n| --- | --- |" in md
    assert "| `a\\|b` | see [x](https://docs.example.org/a/x.html) |" in md
    assert "| plain | one <br> two |" in md


def test_table_without_thead_uses_its_first_row_as_header() -> None:
    md = convert("<table><tr><td>A</td><td>B</td></tr><tr><td>1</td><td>2</td></tr></table>")
    assert "| A | B |\n| --- | --- |\n| 1 | 2 |" in md


# admonitions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("html", "title", "text"),
    [
        (
            '<div class="admonition warning"><p class="admonition-title">Warning</p><p>Hot.</p></div>',
            "Warning",
            "Hot.",
        ),
        ('<div class="admonition note"><p>No title here.</p></div>', "Note", "No title here."),
        (
            '<div class="theme-admonition theme-admonition-tip alert alert--success"><div class="admonition'
            'Heading_x">'
            '<span class="admonitionIcon_x"><svg></svg></span>tip</div><div class="admonitionContent_x"><p>'
            "Use.</p>"
            "</div></div>",
            "Tip",
            "Use.",
        ),
        (
            '<div class="custom-block danger"><p class="custom-block-title">DANGER</p><p>Boom.</p></div>',
            "DANGER",
            "Boom.",
        ),
        (
            '<aside class="starlight-aside starlight-aside--caution"><p class="starlight-aside__title">Caut'
            "ion</p>"
            '<section class="starlight-aside__content"><p>Sharp.</p></section></aside>',
            "Caution",
            "Sharp.",
        ),
        (
            '<div class="markdown-alert markdown-alert-important"><p class="markdown-alert-title">Important'
            "</p><p>GH.</p></div>",
            "Important",
            "GH.",
        ),
        (
            '<details class="admonition tip"><summary>Open me</summary><p>Body.</p></details>',
            "Open me",
            "Body.",
        ),
        (
            '<div class="admonition seealso"><p class="admonition-title">See also</p><p>Other.</p></div>',
            "See also",
            "Other.",
        ),
    ],
)
def test_admonitions_become_blockquotes_that_keep_their_kind(html: str, title: str, text: str) -> None:
    md = convert(html)
    assert f"> **{title}**\n>\n> {text}" in md


# definitions, headings, chrome ------------------------------------------------------------------


def test_plain_definition_list_keeps_terms_and_definitions() -> None:
    md = convert("<dl><dt>term</dt><dd>its definition</dd></dl>")
    assert "term\n:   its definition" in md


SPHINX_API = (
    '<section id="task-groups"><h2>Task Groups<a class="headerlink" href="#task-groups" '
    'title="Permalink to this heading">¶</a></h2>'
    '<dl class="py class"><dt class="sig sig-object py" id="asyncio.TaskGroup"><em class="property">'
    '<span class="pre">class</span> </em><span class="sig-prename descclassname"><span class="pre">asyncio.'
    "</span>"
    '</span><span class="sig-name descname"><span class="pre">TaskGroup</span></span>'
    '<a class="headerlink" href="#asyncio.TaskGroup" title="Permalink to this definition">¶</a></dt>'
    "<dd><p>An asynchronous context manager.</p>"
    '<dl class="py method"><dt class="sig sig-object py" id="asyncio.TaskGroup.create_task">'
    '<span class="sig-name descname"><span class="pre">create_task</span></span><span class="sig-paren">(</'
    "span>"
    '<em class="sig-param"><span class="n">coro</span></em><span class="sig-paren">)</span>'
    '<a class="headerlink" href="#asyncio.TaskGroup.create_task">¶</a></dt><dd><p>Create a task.</p></dd></'
    "dl>"
    "</dd></dl></section>"
)


def test_sphinx_api_signatures_stay_readable_and_permalinks_go() -> None:
    md = convert(SPHINX_API)
    assert "## Task Groups\n\n`class asyncio.TaskGroup`\n\nAn asynchronous context manager." in md
    assert "`create_task(coro)`\n\nCreate a task." in md
    assert "¶" not in md
    assert "Permalink" not in md


def test_headings_keep_their_level_and_lose_anchor_links() -> None:
    html = (
        '<h1 id="t">Title<a class="headerlink" href="#t">¶</a></h1><h3><a class="hash-link" href="#s">#</a>'
        "Sub</h3>"
        '<h4><a class="toc-backref" href="#id1">Backref text</a></h4><h5>Five</h5>'
    )
    md = convert(html)
    assert "# Title\n\n### Sub\n\n#### Backref text\n\n##### Five" in md


def test_common_chrome_inside_the_region_is_removed() -> None:
    html = (
        '<nav class="breadcrumbs">Home › Guide</nav><p>Body text.</p><a class="edit-on-github" href="x">Edi'
        "t on GitHub</a>"
        "<footer>Was this page helpful?</footer><button>Copy</button>"
    )
    md = convert(html)
    assert md.strip() == "Body text."


def test_identifiers_are_not_escaped() -> None:
    md = convert("<p>Call snake_case_name with *args and __init__.</p>")
    assert "Call snake_case_name with *args and __init__." in md


def test_images_are_absolute_with_alt_text() -> None:
    md = convert(
        '<p><img src="../img/a.png" alt="Diagram"><img src="data:image/png;base64,AAA" alt="inline"></p>'
    )
    assert "![Diagram](https://docs.example.org/img/a.png)" in md
    assert "data:" not in md


def test_section_markers_never_reach_the_markdown() -> None:
    md = convert(SPHINX_API + "<h2>Other</h2><p>x</p>")
    assert SECTION_MARK not in md
    assert SECTION_END not in md
    assert "\ue002" not in md


# converters -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CONVERTERS)
def test_every_converter_handles_a_heading_and_a_list(name: str) -> None:
    if name == "html-to-markdown":  # only in the bench extra: compared, not shipped
        pytest.importorskip("html_to_markdown")
    md = html_to_markdown("<h2>Head</h2><ul><li>one</li><li>two</li></ul>", name)
    assert "## Head" in md
    assert "one" in md
    assert "two" in md


def test_unknown_converter_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown converter"):
        html_to_markdown("<p>x</p>", "nope")


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\x00\x0c"), max_size=200
    )
)
def test_code_text_survives_placeholder_splicing(code: str) -> None:
    code = code.rstrip("\n")
    block = CodeBlock("text", code)
    md = splice_code("before\n\n\ue0020\ue003\n\nafter", [block])
    assert md == f"before\n\n{fence(block)}\n\nafter"
    body = md.split("\n", 3)[3].rsplit("\n", 3)[0]
    assert body == code


def test_code_block_first_in_a_definition_or_list_item_stays_fenced() -> None:
    md = convert("<dl><dt>t</dt><dd><pre>a = 1\nb = 2</pre></dd></dl><ol><li><pre>z</pre></li></ol>")
    assert "t\n:   ```text\n    a = 1\n    b = 2\n    ```" in md
    assert "1. ```text\n   z\n   ```" in md


def _marks(body: str) -> list[tuple[str, str, int, str]]:
    import lxml.html

    from doc_scraper.convert.markdown import convert_region

    region = lxml.html.fragment_fromstring(f"<main>{body}</main>")
    converted = convert_region(region, lambda href: href)
    assert converted.markdown.count(SECTION_MARK) == len(converted.marks)
    return [(m.anchor, m.kind, m.level, m.title) for m in converted.marks]


def test_section_marks_take_anchors_from_sections_ids_and_inner_anchors() -> None:
    body = (
        '<section id="intro"><h1>Intro</h1><p>x</p></section>'
        '<h2><a id="legacy-anchor"></a>Legacy</h2>'
        "<h2>Set up</h2><h2>Set up</h2>"
    )
    assert _marks(body) == [
        ("intro", "heading", 1, "Intro"),
        ("legacy-anchor", "heading", 2, "Legacy"),
        ("set-up", "heading", 2, "Set up"),
        ("set-up-1", "heading", 2, "Set up"),
    ]


def test_api_definitions_sit_one_level_below_their_heading_and_nest() -> None:
    assert _marks(SPHINX_API) == [
        ("task-groups", "heading", 2, "Task Groups"),
        ("asyncio.TaskGroup", "definition", 3, "asyncio.TaskGroup"),
        ("asyncio.TaskGroup.create_task", "definition", 4, "asyncio.TaskGroup.create_task"),
    ]


def test_rustdoc_item_headers_are_definitions() -> None:
    body = (
        '<h2 id="implementations" class="section-header">Implementations</h2>'
        '<section id="method.new" class="method"><h4 class="code-header">pub fn '
        '<a href="#method.new" class="fn">new</a>() -&gt; Self</h4></section>'
    )
    assert _marks(body) == [
        ("implementations", "heading", 2, "Implementations"),
        ("method.new", "definition", 3, "pub fn new() -> Self"),
    ]


def test_headings_inside_lists_or_tables_get_no_marker() -> None:
    assert _marks("<ul><li><h3>In a list</h3></li></ul><h2>Top</h2>") == [("top", "heading", 2, "Top")]


def test_markdownify_is_used_when_markdownify_rs_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from doc_scraper.convert import markdown

    monkeypatch.setitem(sys.modules, "markdownify_rs", None)
    markdown._converter.cache_clear()
    try:
        assert html_to_markdown("<h2>T</h2><p>snake_case</p>") == "## T\n\nsnake_case"
    finally:
        markdown._converter.cache_clear()
