"""The speed-ups of extraction give the same answers as the plain code they replace."""

from __future__ import annotations

import copy

import lxml.etree
import pytest

from doc_scraper.convert import dom
from doc_scraper.convert.census import Census
from doc_scraper.convert.sections import split_sections
from doc_scraper.extract.detect import PageIndex, _select_by_class, _tag_and_classes, css
from doc_scraper.models import SECTION_END, SECTION_MARK, SectionMark

_PARSER = lxml.etree.HTMLParser(remove_comments=True)

# Code inside admonitions, a heading and an API list inside code, nested API lists, a Pygments-free
# page with tables holding "|": the shapes where one shared walk could see stale elements.
TRICKY = """<html><body><main id="m">
<h1>Title <a class="headerlink" href="#t">¶</a></h1>
<div class="admonition note"><p class="admonition-title">Note</p>
  <div class="highlight-python3"><pre><span>x = 1</span><br><div class="line">y</div></pre></div>
  <p>body <img src="a.png"> <img src="data:x" alt="alt text"></p></div>
<pre><h2>not a heading</h2><dl class="py function"><dt id="f">f()</dt></dl>
<table><tr><td>|</td></tr></table></pre>
<section id="s"><h2>Section</h2>
<dl class="py class"><dt id="mod.C"><span class="sig-prename descclassname">mod.</span>
<span class="sig-name descname">C</span></dt><dd><p>Class.</p><dl class="py method"><dt id="mod.C.m">
<span class="sig-name descname">m</span>()</dt><dd><p>M.</p></dd></dl></dd></dl>
<details class="tip"><summary>Tip</summary><p>t</p></details>
<details><summary>More</summary><div class="note"><p>inner</p></div></details>
<table><tr><th>a|b</th><td><p>one</p><p>two</p></td></tr></table>
<table><tr><td>plain</td></tr></table>
<p><a href="javascript:alert(1)">js</a> <a href=" JavaScript:x">js2</a> <a href="http://[bad">bad</a>
<a href="rel.html#x">rel</a> <a href="data:text/html,x">data</a></p>
</section></main></body></html>"""


def _region(html: str) -> lxml.etree._Element:
    doc = lxml.etree.fromstring(html, _PARSER)
    region = doc.find(".//main")
    assert region is not None
    return region


def _prepare_with_fresh_walks(region: lxml.etree._Element) -> dom.Prepared:
    """``dom.prepare`` as it was before the census: every step walks the tree itself."""
    prepared = dom.Prepared()
    prepared.images = dom.absolutize(region, lambda href: "https://x.test/" + href)
    dom.extract_code(region, prepared)
    dom.rewrite_admonitions(region)
    dom.rewrite_details(region)
    dom.mark_sections(region, prepared)
    dom.prepare_tables(region)
    return prepared


def test_prepare_with_one_shared_walk_rewrites_the_tree_like_separate_walks() -> None:
    shared, fresh = _region(TRICKY), _region(TRICKY)
    got = dom.prepare(shared, lambda href: "https://x.test/" + href)
    want = _prepare_with_fresh_walks(fresh)
    assert lxml.etree.tostring(shared) == lxml.etree.tostring(fresh)
    assert got == want
    assert [m.anchor for m in got.marks] == ["title", "f", "s", "mod.C", "mod.C.m"]  # not the <h2> in <pre>
    assert got.images == ["https://x.test/a.png"]


def test_census_leaves_out_removed_elements_and_follows_renames() -> None:
    region = _region(
        "<html><body><main><div id='a'><pre><div id='b'></div></pre></div><dl></dl></main></body></html>"
    )
    census = Census(region, ("div", "pre", "dl"))
    pre = region.find(".//pre")
    assert pre is not None
    parent = pre.getparent()
    assert parent is not None
    parent.remove(pre)
    dl = region.find(".//dl")
    assert dl is not None
    dl.tag = "div"
    assert [el.get("id") for el in census.of(("div",))] == ["a", None]
    assert [el.get("id") for el in census.of(("div",), attached_only=False)] == ["a", "b", None]
    assert census.of(("dl",)) == []


@pytest.mark.parametrize("selector", ["div.body", "div.a.b", "p.x_y", "span.-x", "DIV.body"])
def test_tag_and_class_selectors_find_what_cssselect_finds(selector: str) -> None:
    html = (
        "<html><body class='body'><div class='body'>1</div><div class='x\tbody\n'>2</div>"
        "<div class='a b'>3</div><div class='b\xa0a'>4</div><div class='bodyx'>5</div>"
        "<p class='x_y'>6</p><span class='-x'>7</span><div><div class='body'>8</div></div></body></html>"
    )
    doc = lxml.etree.fromstring(html, _PARSER)
    simple = _tag_and_classes(selector)
    assert simple is not None
    assert _select_by_class(doc, *simple) == css(selector)(doc)
    assert PageIndex(html.encode()).select(doc, selector) == css(selector)(doc)


@pytest.mark.parametrize("selector", ["div.1abc", "div.--x", "div .x", "div#x", "a.x:hover", ".x"])
def test_other_selectors_are_left_to_cssselect(selector: str) -> None:
    assert _tag_and_classes(selector) is None


def test_script_and_data_links_lose_their_href_and_odd_urls_do_not_raise() -> None:
    region = _region(TRICKY)
    dom.absolutize(region, lambda href: href)
    hrefs = {a.text: a.get("href") for a in region.iter("a")}
    assert hrefs["js"] is None and hrefs["js2"] is None and hrefs["data"] is None
    assert hrefs["bad"] == "http://[bad"
    assert hrefs["rel"] == "rel.html#x"


def test_section_split_handles_markers_next_to_blank_lines_and_stray_marker_characters() -> None:
    marks = [SectionMark("a", "heading", 1, "A"), SectionMark("b", "heading", 2, "B")]
    marked = (
        f"intro\n\n{SECTION_MARK}0{SECTION_END}\n\n# A\n\ntext {SECTION_END}stray\n"
        f"{SECTION_MARK}1{SECTION_END}\n## B\n\nmore\n{SECTION_MARK}9{SECTION_END}\n"
    )
    markdown, sections = split_sections(marked, marks, "Page")
    assert SECTION_MARK not in markdown and SECTION_END not in markdown
    assert markdown == "intro\n\n# A\n\ntext stray\n## B\n\nmore\n"
    assert [(s.anchor, s.heading_path) for s in sections] == [
        ("", ("Page",)),
        ("a", ("A",)),
        ("b", ("A", "B")),
    ]


def test_a_copy_of_a_region_prepares_the_same_as_the_original() -> None:
    region = _region(TRICKY)
    twin = copy.deepcopy(region)
    assert dom.prepare(region, str) == dom.prepare(twin, str)
