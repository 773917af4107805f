"""Finding the embedding model offline, errors that name the fix, and (with the extra) a real embedding."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

import pytest

from doc_scraper.errors import DocScraperError
from doc_scraper.index import embed

if TYPE_CHECKING:
    from pathlib import Path


def _fake_model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text("{}", encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


@pytest.fixture
def no_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine with no model anywhere: empty home and caches, no weight packages."""
    monkeypatch.delenv(embed.MODEL_ENV, raising=False)
    for var in ("HF_HOME", "HF_HUB_CACHE", "SENTENCE_TRANSFORMERS_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(embed, "WEIGHT_PACKAGES", ())
    return tmp_path


def test_an_explicit_model_folder_is_used_and_may_be_a_parent(no_models: Path) -> None:
    model = _fake_model(no_models / "models" / "all-MiniLM-L6-v2")
    assert embed.find_model(model) == model
    assert embed.find_model(no_models / "models") == model


def test_the_environment_variable_points_at_the_model(
    no_models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _fake_model(no_models / "m")
    monkeypatch.setenv(embed.MODEL_ENV, str(model))
    assert embed.find_model() == model


def test_the_hugging_face_cache_is_searched(no_models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(no_models / "hf"))
    snapshot = _fake_model(no_models / "hf" / "hub" / embed._HUB_DIR / "snapshots" / "abc123")
    assert embed.find_model() == snapshot


def test_no_model_anywhere_is_an_error_that_names_the_fix(no_models: Path) -> None:
    with pytest.raises(embed.EmbeddingError) as info:
        embed.find_model()
    assert isinstance(info.value, DocScraperError)
    assert "doc-scraper[semantic]" in str(info.value)
    assert embed.MODEL_ENV in str(info.value)


def test_a_wrong_explicit_path_is_an_error_naming_that_path(no_models: Path) -> None:
    with pytest.raises(embed.EmbeddingError, match="nowhere"):
        embed.find_model(no_models / "nowhere")


def test_the_model_version_changes_with_the_weights(no_models: Path) -> None:
    model = _fake_model(no_models / "m")
    before = embed.model_version(model)
    (model / "model.safetensors").write_bytes(b"other weights")
    assert embed.model_version(model) != before


def test_an_unknown_runtime_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embed.RUNTIME_ENV, "gpu-magic")
    with pytest.raises(embed.EmbeddingError, match="gpu-magic"):
        embed.load_embedder()


def test_without_the_runtime_loading_fails_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embed, "semantic_available", lambda runtime=None: False)
    for runtime in ("onnx", "torch"):
        with pytest.raises(embed.EmbeddingError, match=r"doc-scraper\[semantic\]"):
            embed.load_embedder(runtime=runtime)


@pytest.mark.slow
def test_the_real_model_puts_a_paraphrase_closer_than_an_unrelated_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    pytest.importorskip("tokenizers")
    np = pytest.importorskip("numpy")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never download, whatever is installed
    monkeypatch.setenv(embed.ONNX_DIR_ENV, str(tmp_path))  # builds the int8 graph from the weights here
    try:
        embedder = embed.load_embedder(runtime="onnx")
    except embed.EmbeddingError as exc:
        pytest.skip(f"no local model: {exc}")
    vecs = embedder.embed(
        ["create a scratch directory removed when done", "tempfile.TemporaryDirectory", "football world cup"]
    )
    assert vecs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2])


def test_semantic_availability_follows_the_installed_modules() -> None:
    modules = ("onnxruntime", "onnx", "numpy", "tokenizers")
    expected = all(importlib.util.find_spec(m) is not None for m in modules)
    assert embed.semantic_available("onnx") is expected
    torch_expected = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "numpy"))
    assert embed.semantic_available("torch") is torch_expected
