"""Build an ONNX Runtime graph of a BERT sentence encoder straight from its safetensors weights.

Why not export from torch: torch is a multi-gigabyte install (a CUDA build on
most machines) needed only to trace the model once. The encoder is six
standard BERT layers, so the graph is written here with ``onnx.helper`` from
the weight file, mean pooling and L2 normalisation included, then quantised to
int8 by ONNX Runtime (MatMul weights), which runs 1.5-2x faster than torch's
own int8 on a CPU. Needs ``numpy``, ``onnx`` and ``onnxruntime`` (the
``semantic`` extra); built once per machine and cached (see ``embed.py``).
"""

from __future__ import annotations

import importlib
import json
import logging
import math
import os
import struct
import tempfile
from pathlib import Path
from typing import Any

_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}


def read_safetensors(path: Path) -> dict[str, Any]:
    """Every tensor of a safetensors file as a NumPy array (the format is a JSON header + raw bytes)."""
    np = importlib.import_module("numpy")
    raw = path.read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    base = 8 + header_len
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = _DTYPES[info["dtype"]]
        array = np.frombuffer(
            raw, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=base + start
        )
        out[name.removeprefix("bert.")] = array.reshape(info["shape"]).astype(
            "<f4" if dtype == "<f2" else dtype
        )
    return out


class _Graph:
    """A tiny builder: named nodes and initialisers, unique names for intermediate values."""

    def __init__(self) -> None:
        self.onnx = importlib.import_module("onnx")
        self.np = importlib.import_module("numpy")
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def const(self, name: str, value: Any) -> str:
        self.inits.append(self.onnx.numpy_helper.from_array(self.np.ascontiguousarray(value), name))
        return name

    def op(self, kind: str, *inputs: str, **attrs: Any) -> str:
        self._n += 1
        out = f"{kind.lower()}_{self._n}"
        self.nodes.append(self.onnx.helper.make_node(kind, list(inputs), [out], **attrs))
        return out

    def linear(self, x: str, w: Any, b: Any, name: str) -> str:
        """x @ w.T + b, with the weight stored transposed so the quantiser sees a constant MatMul input."""
        return self.op(
            "Add", self.op("MatMul", x, self.const(f"{name}.wT", w.T.copy())), self.const(f"{name}.b", b)
        )

    def layer_norm(self, x: str, w: Any, b: Any, name: str, eps: float) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.const(f"{name}.g", w),
            self.const(f"{name}.b", b),
            axis=-1,
            epsilon=eps,
        )


def build_graph(model_dir: Path) -> Any:
    """The ONNX model: input_ids, attention_mask (int64 [batch, seq]) -> unit embeddings [batch, hidden]."""
    onnx = importlib.import_module("onnx")
    np = importlib.import_module("numpy")
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert" or config.get("hidden_act") != "gelu":
        raise ValueError(
            f"{model_dir}: not a BERT encoder with GELU (model_type={config.get('model_type')!r})"
        )
    w = read_safetensors(model_dir / "model.safetensors")
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    g = _Graph()

    # Embeddings: word + position + token type 0, then LayerNorm.
    words = g.op("Gather", g.const("emb.word", w["embeddings.word_embeddings.weight"]), "input_ids")
    # Position ids 0..seq-1 per row, as a running count of ones (Range on a shape trips ORT's rewriter).
    ones = g.op(
        "ConstantOfShape",
        g.op("Shape", "input_ids"),
        value=onnx.helper.make_tensor("one", onnx.TensorProto.INT64, [1], [1]),
    )
    positions = g.op("Sub", g.op("CumSum", ones, g.const("axis_1", np.array(1, dtype="<i8"))), ones)
    pos = g.op("Gather", g.const("emb.pos", w["embeddings.position_embeddings.weight"]), positions)
    type0 = g.const("emb.type0", w["embeddings.token_type_embeddings.weight"][0])
    x = g.op("Add", g.op("Add", words, pos), type0)
    x = g.layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], "emb.ln", eps)

    # Attention bias: 0 where a token is real, a large negative number on padding, shape [batch, 1, 1, seq].
    mask = g.op("Cast", "attention_mask", to=onnx.TensorProto.FLOAT)
    neg = g.op(
        "Mul",
        g.op("Sub", g.const("one_f", np.array(1.0, dtype="<f4")), mask),
        g.const("neg_f", np.array(-1e4, dtype="<f4")),
    )
    bias = g.op("Unsqueeze", neg, g.const("axes_1_2", np.array([1, 2], dtype="<i8")))
    split_heads = g.const("split_heads", np.array([0, 0, heads, head_dim], dtype="<i8"))
    merge_heads = g.const("merge_heads", np.array([0, 0, hidden], dtype="<i8"))
    scale = g.const("scale", np.array(1.0 / math.sqrt(head_dim), dtype="<f4"))
    sqrt2 = g.const("sqrt2", np.array(math.sqrt(2.0), dtype="<f4"))
    half = g.const("half", np.array(0.5, dtype="<f4"))
    one = "one_f"

    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        q = g.linear(x, w[p + "attention.self.query.weight"], w[p + "attention.self.query.bias"], f"l{i}.q")
        k = g.linear(x, w[p + "attention.self.key.weight"], w[p + "attention.self.key.bias"], f"l{i}.k")
        v = g.linear(x, w[p + "attention.self.value.weight"], w[p + "attention.self.value.bias"], f"l{i}.v")
        q = g.op("Transpose", g.op("Reshape", q, split_heads), perm=[0, 2, 1, 3])
        k = g.op("Transpose", g.op("Reshape", k, split_heads), perm=[0, 2, 3, 1])
        v = g.op("Transpose", g.op("Reshape", v, split_heads), perm=[0, 2, 1, 3])
        scores = g.op("Add", g.op("Mul", g.op("MatMul", q, k), scale), bias)
        context = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
        context = g.op("Reshape", g.op("Transpose", context, perm=[0, 2, 1, 3]), merge_heads)
        attn = g.linear(
            context, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"], f"l{i}.o"
        )
        x = g.layer_norm(
            g.op("Add", attn, x),
            w[p + "attention.output.LayerNorm.weight"],
            w[p + "attention.output.LayerNorm.bias"],
            f"l{i}.ln1",
            eps,
        )
        h = g.linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"], f"l{i}.ff1")
        h = g.op(
            "Mul", g.op("Mul", h, half), g.op("Add", g.op("Erf", g.op("Div", h, sqrt2)), one)
        )  # exact GELU
        h = g.linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"], f"l{i}.ff2")
        x = g.layer_norm(
            g.op("Add", h, x),
            w[p + "output.LayerNorm.weight"],
            w[p + "output.LayerNorm.bias"],
            f"l{i}.ln2",
            eps,
        )

    # Mean over real tokens, then unit length.
    m3 = g.op("Unsqueeze", mask, g.const("axes_2", np.array([2], dtype="<i8")))
    summed = g.op("ReduceSum", g.op("Mul", x, m3), g.const("axes_1", np.array([1], dtype="<i8")), keepdims=0)
    count = g.op(
        "Max",
        g.op("ReduceSum", mask, g.const("axes_1b", np.array([1], dtype="<i8")), keepdims=1),
        g.const("tiny", np.array(1e-9, dtype="<f4")),
    )
    pooled = g.op("Div", summed, count)
    norm = g.op("Max", g.op("ReduceL2", pooled, axes=[1], keepdims=1), "tiny")
    g.nodes.append(onnx.helper.make_node("Div", [pooled, norm], ["embedding"]))

    ints = onnx.TensorProto.INT64
    graph = onnx.helper.make_graph(
        g.nodes,
        "sentence_encoder",
        [
            onnx.helper.make_tensor_value_info("input_ids", ints, ["batch", "seq"]),
            onnx.helper.make_tensor_value_info("attention_mask", ints, ["batch", "seq"]),
        ],
        [onnx.helper.make_tensor_value_info("embedding", onnx.TensorProto.FLOAT, ["batch", hidden])],
        g.inits,
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by every onnxruntime release of the last years
    return model


def _drop_quantizer_advice(record: logging.LogRecord) -> bool:
    return "pre-processing before quantization" not in record.getMessage()


def build_model_file(model_dir: Path, out: Path, *, quantize: bool = True) -> Path:
    """Write the (int8) ONNX file for ``model_dir`` to ``out`` atomically; returns ``out``."""
    onnx = importlib.import_module("onnx")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".build-") as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        onnx.save(build_graph(model_dir), str(fp32))
        final = fp32
        if quantize:
            quantization = importlib.import_module("onnxruntime.quantization")
            final = Path(tmp) / "int8.onnx"
            # The quantiser logs advice on the root logger ("consider pre-processing"): not for users.
            root = logging.getLogger()
            root.addFilter(_drop_quantizer_advice)
            try:
                quantization.quantize_dynamic(
                    str(fp32),
                    str(final),
                    weight_type=quantization.QuantType.QInt8,
                    op_types_to_quantize=["MatMul"],
                )
            finally:
                root.removeFilter(_drop_quantizer_advice)
        os.replace(final, out)
    return out
