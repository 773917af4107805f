from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.convert.sections import (
    MAX_SECTION_CHARS,
    _split_marked,
    github_slug,
    split_markdown,
    split_sections,
)
from doc_scraper.models import SECTION_END, SECTION_MARK, SectionMark


def _m(i: int) -> str:
    return f"{SECTION_MARK}{i}{SECTION_END}"


ASYNCIO_MARKS = [
    SectionMark("asyncio", "heading", 1, "asyncio — Asynchronous I/O"),
    SectionMark("coroutines-and-tasks", "heading", 2, "Coroutines and Tasks"),
    SectionMark("task-groups", "heading", 3, "Task Groups"),
    SectionMark("asyncio.TaskGroup", "definition", 4, "asyncio.TaskGroup"),
    SectionMark("sleeping", "heading", 3, "Sleeping"),
]

ASYNCIO_MD = "\n".join(
    [
        "Some intro before any heading.",
        "",
        _m(0),
        "# asyncio — Asynchronous I/O",
        "",
        "asyncio is a library to write concurrent code.",
        "",
        _m(1),
        "## Coroutines and Tasks",
        "",
        "This section outlines high-level asyncio APIs.",
        "",
        _m(2),
        "### Task Groups",
        "",
        "Task groups combine a task creation API with a way to wait.",
        "",
        _m(3),
        "*class* asyncio.TaskGroup",
        "",
        "An asynchronous context manager holding a group of tasks.",
        "",
        _m(4),
        "### Sleeping",
        "",
        "Block for delay seconds.",
    ]
)


def test_markers_are_removed_without_leaving_double_blank_lines() -> None:
    clean, _ = split_sections(ASYNCIO_MD, ASYNCIO_MARKS, "Coroutines and Tasks")
    assert SECTION_MARK not in clean
    assert SECTION_END not in clean
    assert "\n\n\n" not in clean
    assert clean.startswith("Some intro before any heading.\n\n# asyncio")
    assert "wait.\n\n*class* asyncio.TaskGroup" in clean


def test_sections_carry_anchors_and_heading_paths_by_level() -> None:
    _, sections = split_sections(ASYNCIO_MD, ASYNCIO_MARKS, "Coroutines and Tasks")
    by_anchor = {s.anchor: s for s in sections}
    assert list(by_anchor) == [
        "",
        "asyncio",
        "coroutines-and-tasks",
        "task-groups",
        "asyncio.TaskGroup",
        "sleeping",
    ]
    assert by_anchor[""].text == "Some intro before any heading."
    assert by_anchor[""].heading_path == ("Coroutines and Tasks",)
    assert by_anchor["asyncio.TaskGroup"].heading_path == (
        "asyncio — Asynchronous I/O",
        "Coroutines and Tasks",
        "Task Groups",
        "asyncio.TaskGroup",
    )
    assert by_anchor["sleeping"].heading_path == (
        "asyncio — Asynchronous I/O",
        "Coroutines and Tasks",
        "Sleeping",
    )
    assert by_anchor["task-groups"].text.startswith("### Task Groups")
    assert "asyncio.TaskGroup" not in by_anchor["task-groups"].text
    assert [s.seq for s in sections] == list(range(len(sections)))


def test_page_title_roots_the_path_when_the_page_has_no_h1() -> None:
    md = f"{_m(0)}\n## Install\n\nRun pip.\n"
    _, sections = split_sections(md, [SectionMark("install", "heading", 2, "Install")], "Guide")
    assert sections[0].heading_path == ("Guide", "Install")


def test_heading_only_section_is_folded_into_the_deeper_one_that_follows() -> None:
    md = f"{_m(0)}\n## Task Groups\n\n{_m(1)}\n*class* asyncio.TaskGroup\n\nA group of tasks.\n"
    marks = [
        SectionMark("task-groups", "heading", 2, "Task Groups"),
        SectionMark("asyncio.TaskGroup", "definition", 3, "asyncio.TaskGroup"),
    ]
    _, sections = split_sections(md, marks, "T")
    assert len(sections) == 1
    assert sections[0].anchor == "asyncio.TaskGroup"
    assert sections[0].text.startswith("## Task Groups")
    assert sections[0].heading_path == ("T", "Task Groups", "asyncio.TaskGroup")


def test_heading_only_section_followed_by_a_sibling_is_kept() -> None:
    md = f"{_m(0)}\n## A\n\n{_m(1)}\n## B\n\nbody\n"
    marks = [SectionMark("a", "heading", 2, "A"), SectionMark("b", "heading", 2, "B")]
    _, sections = split_sections(md, marks, "T")
    assert [s.anchor for s in sections] == ["a", "b"]


def test_huge_section_is_split_at_paragraphs_and_never_inside_a_fence() -> None:
    fence = "```python\n" + "\n\n".join(f"x{i} = {i}" for i in range(400)) + "\n```"
    paragraphs = [("word " * 200).strip() for _ in range(20)]
    body = "\n\n".join([*paragraphs[:10], fence, *paragraphs[10:]])
    md = f"{_m(0)}\n## Big\n\n{body}\n"
    _, sections = split_sections(md, [SectionMark("big", "heading", 2, "Big")], "T")
    assert len(sections) > 3
    assert {s.anchor for s in sections} == {"big"}
    assert {s.heading_path for s in sections} == {("T", "Big")}
    for s in sections:
        assert s.text.count("```") % 2 == 0
        assert len(s.text) <= MAX_SECTION_CHARS or s.text.startswith("```")
    assert sum(s.text.count("x399 = 399") for s in sections) == 1
    assert [s.seq for s in sections] == list(range(len(sections)))


def test_unknown_marker_index_is_dropped_without_a_section() -> None:
    clean, sections = split_sections(f"a\n{_m(7)}\nb", [], "T")
    assert clean == "a\nb"
    assert [s.anchor for s in sections] == [""]


def test_split_markdown_ignores_hashes_inside_fences_and_dedups_slugs() -> None:
    md = (
        "# Title\n\n```sh\n# comment\n```\n\n## Usage\n\none\n\n## Usage\n\ntwo\n\n"
        "~~~\n## no\n~~~\n\n## Usage ##\n"
    )
    sections = split_markdown(md, "Title")
    assert [s.anchor for s in sections] == ["title", "usage", "usage-1", "usage-2"]
    assert "# comment" in sections[0].text
    assert "## no" in sections[2].text
    assert sections[1].heading_path == ("Title", "Usage")


def test_split_markdown_without_headings_gives_one_top_section() -> None:
    sections = split_markdown("just text\n", "Page")
    assert len(sections) == 1
    assert sections[0].anchor == ""
    assert sections[0].heading_path == ("Page",)


def test_github_slug_matches_githubs_rules() -> None:
    assert github_slug("Hello, World!") == "hello-world"
    assert github_slug("`__init__` and `os.path`") == "__init__-and-ospath"
    assert github_slug("[Link text](http://x) **bold**") == "link-text-bold"
    assert github_slug("Ünïcode Straße") == "ünïcode-straße"


@settings(max_examples=100, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from([*"ab #`~\n*_-[]()", SECTION_MARK, SECTION_END, "0", "1", "9"]), max_size=300
    ),
    st.lists(
        st.builds(
            SectionMark,
            st.text(max_size=5),
            st.sampled_from(["heading", "definition"]),
            st.integers(-3, 9),
            st.text(max_size=10),
        ),
        max_size=4,
    ),
)
def test_splitting_never_raises_and_strips_every_marker(text: str, marks: list[SectionMark]) -> None:
    # The private core is called directly so the public wrapper's safety net cannot hide a bug.
    clean, sections = _split_marked(text, marks, "T")
    assert (clean, sections) == split_sections(text, marks, "T")
    assert SECTION_MARK not in clean
    assert SECTION_END not in clean
    for s in sections:
        assert SECTION_MARK not in s.text
        assert s.text.strip()
    assert isinstance(split_markdown(text, "T"), tuple)
    assert isinstance(github_slug(text), str)
