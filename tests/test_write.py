"""Markdown files, pages.jsonl finalisation and llms.txt."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from doc_scraper.models import PageRecord
from doc_scraper.write.files import (
    atomic_write_text,
    frontmatter,
    parse_frontmatter,
    relativize_links,
    render_page,
    write_page,
)
from doc_scraper.write.jsonl import JsonlAppender, finalize_jsonl, iter_pages, read_meta
from doc_scraper.write.llms_txt import write_llms_files

if TYPE_CHECKING:
    from pathlib import Path


def record(url: str, path: str, title: str = "T", content: str = "# T\n\nbody\n") -> PageRecord:
    return PageRecord(
        url=url,
        title=title,
        content=content,
        content_hash="h" + url[-3:],
        crawled_at="2026-01-01T00:00:00.000Z",
        depth=1,
        path=path,
    )


def mapper(url: str) -> str | None:
    prefix = "https://docs.example.com/"
    if not url.startswith(prefix):
        return None
    rest = url[len(prefix) :]
    if rest in ("", "/"):
        return "index.md"
    if rest.endswith("/"):
        return rest + "index.md"
    return rest.rsplit(".", 1)[0] + ".md"


def test_in_site_links_become_relative_paths_with_their_anchor() -> None:
    md = "See [os](https://docs.example.com/library/os.html#os.walk) and [ext](https://other.org/x)."
    out = relativize_links(md, "tutorial/index.md", mapper)
    assert "[os](../library/os.md#os.walk)" in out
    assert "[ext](https://other.org/x)" in out


def test_links_inside_fenced_code_are_left_alone() -> None:
    md = "```md\n[a](https://docs.example.com/a.html)\n```\n[b](https://docs.example.com/b.html)\n"
    out = relativize_links(md, "index.md", mapper)
    assert "[a](https://docs.example.com/a.html)" in out
    assert "[b](b.md)" in out


def test_link_titles_survive_relativising() -> None:
    md = '[a](https://docs.example.com/a/ "The A")'
    assert relativize_links(md, "x/y.md", mapper) == '[a](../a/index.md "The A")'


@settings(max_examples=200)
@given(st.text())
def test_frontmatter_round_trips_any_title(title: str) -> None:
    text = frontmatter({"title": title, "url": "https://x/"}) + "body\n"
    fields, body = parse_frontmatter(text)
    assert fields["title"] == title
    assert body == "body\n"


def test_page_file_has_frontmatter_then_the_body(tmp_path: Path) -> None:
    rec = record("https://docs.example.com/a/b.html", "a/b.md", title="Title: with colon")
    path = write_page(tmp_path, rec, "# Title\n\ntext")
    fields, body = parse_frontmatter(path.read_text(encoding="utf-8"))
    assert fields == {
        "title": "Title: with colon",
        "url": rec.url,
        "crawled_at": rec.crawled_at,
        "content_hash": rec.content_hash,
        "depth": 1,
    }
    assert body == "# Title\n\ntext\n"
    assert render_page(rec, "x").endswith("x\n")


def test_page_paths_outside_the_site_folder_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="outside"):
        write_page(tmp_path / "site", record("https://x/", "../escape.md"), "x")
    assert not (tmp_path / "escape.md").exists()


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_finalize_sorts_keeps_last_record_and_ends_with_one_crawl_meta(tmp_path: Path) -> None:
    final = tmp_path / "pages.jsonl"
    old = JsonlAppender(final)
    old.append(record("https://d/b", "b.md", title="old b"))
    old.append(record("https://d/c", "c.md", title="c"))
    old.close()
    part = tmp_path / "pages.jsonl.part"
    new = JsonlAppender(part)
    new.append(record("https://d/b", "b.md", title="new b"))
    new.append(record("https://d/a", "a.md", title="a"))
    new.close()
    with open(part, "ab") as fh:  # a torn line from a kill -9 is ignored
        fh.write(b'{"record_type": "page", "url": "https://d/z"')
    n = finalize_jsonl(
        final,
        [final, part],
        ["https://d/a", "https://d/b", "https://d/c"],
        {"site_key": "s", "allowed_domain": "d"},
    )
    assert n == 3
    lines = [json.loads(x) for x in final.read_text().splitlines()]
    assert [x.get("url") for x in lines[:-1]] == ["https://d/a", "https://d/b", "https://d/c"]
    assert lines[1]["title"] == "new b"
    assert [x["record_type"] for x in lines].count("crawl_meta") == 1
    assert lines[-1]["total_pages"] == 3
    assert read_meta(final)["site_key"] == "s"  # type: ignore[index]
    # Refinalising drops the old crawl_meta rather than keeping two.
    finalize_jsonl(final, [final], ["https://d/a"], {"site_key": "s"})
    kinds = [json.loads(x)["record_type"] for x in final.read_text().splitlines()]
    assert kinds == ["page", "crawl_meta"]


def test_pruned_urls_are_left_out_of_the_final_file(tmp_path: Path) -> None:
    final = tmp_path / "pages.jsonl"
    app = JsonlAppender(final)
    for name in ("a", "b", "c"):
        app.append(record(f"https://d/{name}", f"{name}.md"))
    app.close()
    finalize_jsonl(final, [final], ["https://d/a", "https://d/c"], {"site_key": "s"})
    assert [p["url"] for p in iter_pages(final)] == ["https://d/a", "https://d/c"]


def test_llms_files_list_every_page_with_escaped_titles(tmp_path: Path) -> None:
    final = tmp_path / "pages.jsonl"
    app = JsonlAppender(final)
    app.append(record("https://d/a", "a.md", title="A [draft]\nnext"))
    app.append(record("https://d/b", "b.md", title=""))
    app.close()
    finalize_jsonl(final, [final], ["https://d/a", "https://d/b"], {"site_key": "s"})
    assert write_llms_files(tmp_path, final, "s", "d") == 2
    llms = (tmp_path / "llms.txt").read_text()
    assert "> Crawled documentation from d. 2 pages." in llms
    assert "- [A \\[draft\\] next](https://d/a)" in llms
    assert "- [https://d/b](https://d/b)" in llms
    full = (tmp_path / "llms-full.txt").read_text()
    assert "URL: https://d/a" in full and "body" in full


def test_llms_txt_says_so_when_no_page_was_crawled(tmp_path: Path) -> None:
    final = tmp_path / "pages.jsonl"
    finalize_jsonl(final, [], [], {"site_key": "s"})
    write_llms_files(tmp_path, final, "s", "d")
    assert "No pages were successfully crawled" in (tmp_path / "llms.txt").read_text()
