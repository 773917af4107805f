from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest

from doc_scraper.cli import main
from doc_scraper.index.writer import IndexWriter
from doc_scraper.models import PageRecord, Section

if TYPE_CHECKING:
    from pathlib import Path

NOW = "2026-01-01T00:00:00Z"


def _config(tmp_path: Path, sites: tuple[str, ...] = ("py", "other")) -> Path:
    lines = [f"state_dir: {tmp_path / 'state'}", f"output_base_dir: {tmp_path / 'out'}", "sites:"]
    for key in sites:
        lines += [
            f"  {key}:",
            "    start_urls: ['https://docs.example.org/']",
            "    allowed_domain: docs.example.org",
            "    content_selector: auto",
        ]
    path = tmp_path / "config.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _index(tmp_path: Path) -> None:
    async def build() -> None:
        writer = IndexWriter.open(tmp_path / "state" / "index.db")
        crawl = await writer.begin_crawl("py", "full", NOW, fresh=True)
        text = "*class* asyncio.TaskGroup\n\nAn asynchronous context manager holding a group of tasks."
        record = PageRecord(
            url="https://docs.example.org/asyncio-task.html",
            title="Coroutines and Tasks",
            content=text,
            content_hash="h",
            crawled_at=NOW,
            depth=1,
        )
        section = Section(
            "asyncio.TaskGroup", ("Coroutines and Tasks", "Task Groups", "asyncio.TaskGroup"), 3, text
        )
        await writer.upsert_page(crawl, "py", record, [section])
        await writer.finish_crawl(crawl, NOW, {"pages": 1}, commit=True, retention=5)
        await writer.close()

    asyncio.run(build())


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = _config(tmp_path)
    _index(tmp_path)
    return path


def test_json_output_lists_results_with_joined_heading_paths(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["search", "-config", str(config), "--json", "-limit", "5", "asyncio.TaskGroup"])
    assert code == 0
    results = json.loads(capsys.readouterr().out)
    assert results[0] == {
        "site_key": "py",
        "url": "https://docs.example.org/asyncio-task.html",
        "anchor": "asyncio.TaskGroup",
        "title": "Coroutines and Tasks",
        "heading_path": "Coroutines and Tasks > Task Groups > asyncio.TaskGroup",
        "snippet": results[0]["snippet"],
        "score": results[0]["score"],
        "crawled_at": NOW,
        "mode": "lexical",
    }
    assert "[TaskGroup]" in results[0]["snippet"]


def test_flags_may_follow_the_query_and_double_dash_ends_them(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "group", "of", "tasks", "-config", str(config), "-json", "-site", "py"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["anchor"] == "asyncio.TaskGroup"
    assert main(["search", "-config", str(config), "--json", "--", "-json", "tasks"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 1


def test_text_output_numbers_results_with_path_url_and_snippet(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "-config", str(config), "context", "manager"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "1. Coroutines and Tasks  >  Task Groups  >  asyncio.TaskGroup  (py)"
    assert lines[1].strip() == "https://docs.example.org/asyncio-task.html#asyncio.TaskGroup"
    assert "[context] [manager]" in lines[2]


def test_no_hits_exit_zero_with_an_empty_array(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "-config", str(config), "-json", "nonexistentword"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_an_unknown_site_lists_the_valid_keys(config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "-config", str(config), "-site", "nope", "tasks"]) == 1
    err = capsys.readouterr().err
    assert "unknown site 'nope'" in err
    assert "other, py" in err


def test_a_configured_but_uncrawled_site_says_to_crawl_it(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "-config", str(config), "-site", "other", "tasks"]) == 1
    assert "run doc-scraper crawl -site other first" in capsys.readouterr().err


def test_no_index_yet_says_to_crawl_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _config(tmp_path)
    assert main(["search", "-config", str(path), "tasks"]) == 1
    assert "run doc-scraper crawl -site KEY first" in capsys.readouterr().err


def test_bad_limit_and_missing_query_are_usage_errors(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "-config", str(config), "-limit", "0", "tasks"]) == 2
    assert main(["search", "-config", str(config)]) == 2
    assert "-limit" in capsys.readouterr().err


def test_a_missing_config_file_exits_one(tmp_path: Path) -> None:
    assert main(["search", "-config", str(tmp_path / "missing.yaml"), "tasks"]) == 1
