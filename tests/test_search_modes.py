"""Search modes end to end: the CLI flag, the API, the MCP tool and describe_server, with a fake model."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
from mcp import Client

from doc_scraper import api
from doc_scraper.cli import main
from doc_scraper.config.load import load_config
from doc_scraper.errors import EmbeddingError, QueryError, SearchError
from doc_scraper.index import embed, hybrid
from doc_scraper.mcp_tools import TOOL_NAMES, build_server
from tests.test_corpus import _config as corpus_config
from tests.test_corpus import copy_index
from tests.test_hybrid import FakeEmbedder
from tests.test_jobs import FakeCrawl
from tests.test_mcp_tools import call, error
from tests.test_search_cli import _config as cli_config
from tests.test_search_cli import _index as cli_index

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = cli_config(tmp_path)
    cli_index(tmp_path)
    return path


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """The semantic extra not installed, whatever this machine has (tests that want it patch again)."""
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: False)


@pytest.fixture
def fake_semantic(monkeypatch: pytest.MonkeyPatch) -> FakeEmbedder:
    """The semantic extra "installed", with a fake model in place of MiniLM."""
    fake = FakeEmbedder("fake/1")
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: True)
    monkeypatch.setattr(embed, "load_embedder", lambda model=None, runtime=None: fake)
    no_cutoff(monkeypatch)
    return fake


def no_cutoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """The relevance cutoff is calibrated for the real model; these tests check the wiring."""
    defaults = hybrid.search.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "cutoff", 0.0)


def _embed_index(state_dir: Path, fake: FakeEmbedder) -> None:
    embed.embed_pending_sync(state_dir / "index.db", fake)


def _search_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[str, list[dict[str, Any]]]:
    """(the mode named on stderr, the JSON results on stdout) of one search."""
    assert main(["search", *argv]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    modes = [line.removeprefix("mode: ") for line in captured.err.splitlines() if line.startswith("mode: ")]
    assert len(modes) == 1, captured.err
    results: list[dict[str, Any]] = json.loads(captured.out)
    return modes[0], results


# -- CLI ---------------------------------------------------------------------------------------------


def test_without_the_extra_the_default_mode_is_lexical_and_stdout_stays_pure_json(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mode, results = _search_json(capsys, "-config", str(config), "-json", "asyncio.TaskGroup")
    assert mode == "lexical"
    assert [r["anchor"] for r in results] == ["asyncio.TaskGroup"]


def test_the_mode_flag_works_before_and_after_the_query_in_both_spellings(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mode1, before = _search_json(
        capsys, "-config", str(config), "-mode", "lexical", "-json", "group", "of", "tasks"
    )
    mode2, after = _search_json(
        capsys, "group", "of", "tasks", "-config", str(config), "-json", "--mode=lexical"
    )
    mode3, spaced = _search_json(capsys, "tasks", "--mode", "lexical", "-config", str(config), "-json")
    assert before == after
    assert before[0]["anchor"] == "asyncio.TaskGroup"
    assert spaced
    assert {mode1, mode2, mode3} == {"lexical"}


def test_json_results_carry_the_mode_that_answered(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str], fake_semantic: FakeEmbedder
) -> None:
    _mode, results = _search_json(capsys, "-config", str(config), "-json", "tasks")
    assert [r["mode"] for r in results] == ["lexical"]
    _embed_index(tmp_path / "state", fake_semantic)
    for flag, expected in (("auto", "hybrid"), ("dense", "dense"), ("lexical", "lexical")):
        mode, results = _search_json(capsys, "-config", str(config), "-json", "tasks", "-mode", flag)
        assert results, flag
        assert {r["mode"] for r in results} == {mode} == {expected}, flag


def test_text_output_names_the_mode_on_stderr_and_keeps_stdout_for_results(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "-config", str(config), "context", "manager", "-mode", "auto"]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0] == "mode: lexical"
    assert captured.out.splitlines()[0].startswith("1. Coroutines and Tasks")


def test_an_unknown_mode_is_a_usage_error_in_either_position(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "-config", str(config), "-mode", "fuzzy", "tasks"]) == 2
    assert "-mode must be one of auto, lexical, dense, hybrid, got 'fuzzy'" in capsys.readouterr().err
    assert main(["search", "-config", str(config), "tasks", "-mode"]) == 2
    assert "-mode needs a value" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_dense_or_hybrid_without_the_extra_fails_naming_the_install_and_the_crawl(
    config: Path, capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    assert main(["search", "-config", str(config), "-mode", mode, "tasks"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {mode} search needs embeddings")
    assert "pip install 'doc-scraper[semantic]'" in err
    assert "crawl again" in err
    assert "or use -mode lexical" in err


def test_dense_with_the_extra_but_no_vectors_says_to_crawl_again(
    config: Path, capsys: pytest.CaptureFixture[str], fake_semantic: FakeEmbedder
) -> None:
    # Installed, but this index was built before: auto stays lexical, dense is refused.
    assert _search_json(capsys, "-config", str(config), "-json", "tasks")[0] == "lexical"
    assert main(["search", "-config", str(config), "-mode", "dense", "tasks"]) == 1
    err = capsys.readouterr().err
    assert "this index has no section embeddings yet" in err
    assert "crawl again" in err
    assert "pip install" not in err
    assert fake_semantic.calls == []


def test_with_vectors_auto_is_hybrid_and_every_mode_can_be_forced(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str], fake_semantic: FakeEmbedder
) -> None:
    _embed_index(tmp_path / "state", fake_semantic)
    for flag, expected in (
        ("auto", "hybrid"),
        ("hybrid", "hybrid"),
        ("dense", "dense"),
        ("lexical", "lexical"),
    ):
        mode, results = _search_json(
            capsys, "-config", str(config), "-json", "-mode", flag, "group", "of", "tasks"
        )
        assert mode == expected, flag
        assert results[0]["anchor"] == "asyncio.TaskGroup", flag
    assert main(["search", "-config", str(config), "tasks"]) == 0
    assert capsys.readouterr().err.splitlines()[0] == "mode: hybrid"


def test_vectors_without_the_extra_make_dense_name_only_the_install(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _embed_index(tmp_path / "state", FakeEmbedder("fake/1"))
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: False)
    assert _search_json(capsys, "-config", str(config), "-json", "tasks")[0] == "lexical"
    assert main(["search", "-config", str(config), "-mode", "hybrid", "tasks"]) == 1
    err = capsys.readouterr().err
    assert "the semantic extra is not installed;" in err
    assert "pip install 'doc-scraper[semantic]'" in err


# -- API ---------------------------------------------------------------------------------------------


def test_the_api_reports_the_mode_that_answered_and_refuses_unknown_modes(
    tmp_path: Path, config: Path, fake_semantic: FakeEmbedder
) -> None:
    loaded = load_config(config)
    assert api.answer_query(loaded, "tasks").mode == "lexical"
    with pytest.raises(EmbeddingError) as info:
        api.search_docs(loaded, "tasks", mode="dense")
    assert isinstance(info.value, SearchError)
    with pytest.raises(QueryError, match="fuzzy"):
        api.answer_query(loaded, "tasks", mode="fuzzy")
    _embed_index(tmp_path / "state", fake_semantic)
    dense = api.answer_query(loaded, "group of tasks", mode="dense", site_key="py")
    assert dense.mode == "dense"
    assert dense.results[0].anchor == "asyncio.TaskGroup"
    assert [r.url for r in api.search_docs(loaded, "tasks", mode="AUTO")] == [dense.results[0].url]


def test_the_search_status_explains_the_default_mode(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = load_config(config)
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: False)
    status = api.search_status(loaded)
    assert (status.mode, status.semantic_installed, status.index_has_vectors) == ("lexical", False, False)
    assert "not installed" in status.reason
    assert status.available_modes == ("lexical",)
    _embed_index(tmp_path / "state", FakeEmbedder("fake/2"))
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: True)
    status = api.search_status(loaded)
    assert (status.mode, status.embedding_model) == ("hybrid", "fake/2")
    assert (status.embedded_sections, status.indexed_sections) == (1, 1)
    assert status.available_modes == ("lexical", "dense", "hybrid")
    empty = api.index_search_status(tmp_path / "nowhere" / "index.db")
    assert (empty.mode, empty.reason) == ("lexical", "no search index yet; crawl a site first")


# -- MCP ---------------------------------------------------------------------------------------------


@pytest.fixture
def mcp_state(tmp_path: Path) -> Path:
    copy_index(tmp_path / "state")
    return tmp_path / "state"


async def test_search_docs_takes_an_optional_mode_and_reports_the_one_used(
    tmp_path: Path, mcp_state: Path
) -> None:
    crawl = FakeCrawl()
    server = build_server(corpus_config(tmp_path), crawl=crawl)
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert len(tools) == len(TOOL_NAMES) == 11
        schema = tools["search_docs"].input_schema
        assert schema["properties"]["mode"]["enum"] == ["auto", "lexical", "dense", "hybrid"]
        assert schema["properties"]["mode"]["default"] == "auto"
        assert "mode" not in schema.get("required", [])
        assert "mode" in tools["search_docs"].output_schema["required"]  # type: ignore[index]
        found = await call(client, "search_docs", query="exponential backoff", limit=3)
        assert found["mode"] == "lexical"
        forced = await call(client, "search_docs", query="exponential backoff", limit=3, mode="lexical")
        assert forced["results"] == found["results"]
        assert forced["mode"] == "lexical"
        message = await error(client, "search_docs", query="exponential backoff", mode="dense")
        assert "dense search needs embeddings" in message
        assert "doc-scraper[semantic]" in message
        bad = await error(client, "search_docs", query="retries", mode="fuzzy")
        assert "mode" in bad
    crawl.release.set()


async def test_search_docs_runs_dense_and_hybrid_when_the_index_has_vectors(
    tmp_path: Path, mcp_state: Path, fake_semantic: FakeEmbedder
) -> None:
    _embed_index(mcp_state, fake_semantic)
    crawl = FakeCrawl()
    server = build_server(corpus_config(tmp_path), crawl=crawl)
    async with Client(server) as client:
        auto = await call(client, "search_docs", query="exponential backoff", limit=3)
        assert auto["mode"] == "hybrid"
        assert auto["results"]
        dense = await call(client, "search_docs", query="exponential backoff", limit=3, mode="dense")
        assert dense["mode"] == "dense"
        assert dense["results"]
        assert [h["rank"] for h in dense["results"]] == list(range(1, len(dense["results"]) + 1))
        scoped = await call(
            client, "search_docs", query="exponential backoff", site_key="docs", mode="lexical"
        )
        assert (scoped["mode"], scoped["site_key"]) == ("lexical", "docs")
        assert "other" in await error(client, "search_docs", query="retries", site_key="other", mode="dense")
        assert "no searchable terms" in await error(client, "search_docs", query="!!! ???", mode="dense")
    crawl.release.set()


async def test_describe_server_reports_the_search_mode_and_why(
    tmp_path: Path, mcp_state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: False)
    crawl = FakeCrawl()
    server = build_server(corpus_config(tmp_path), crawl=crawl)
    async with Client(server) as client:
        lexical = (await call(client, "describe_server"))["search_mode"]
        assert lexical["mode"] == "lexical"
        assert lexical["semantic_installed"] is False
        assert lexical["index_has_vectors"] is False
        assert lexical["available_modes"] == ["lexical"]
        assert "doc-scraper[semantic]" in lexical["reason"]
        assert "embedding_model" not in lexical
        fake = FakeEmbedder("fake/9")
        _embed_index(mcp_state, fake)
        monkeypatch.setattr(embed, "semantic_available", lambda *_a, **_k: True)
        monkeypatch.setattr(embed, "load_embedder", lambda model=None, runtime=None: fake)
        hybrid = (await call(client, "describe_server"))["search_mode"]
        assert hybrid["mode"] == "hybrid"
        assert hybrid["embedding_model"] == "fake/9"
        assert hybrid["embedded_sections"] == hybrid["indexed_sections"] > 0
        assert hybrid["available_modes"] == ["lexical", "dense", "hybrid"]
    crawl.release.set()
