"""The BERT forward pass, with mean pooling and L2 normalisation (sentence-transformers'
all-MiniLM-L6-v2 pipeline), in float32 or with the encoder layers' dense products in int8,
run by ONNX Runtime.

The graph is built here from the loaded weights (nothing is fetched or exported from another
framework): embeddings, six encoder layers, mean pooling over the real tokens. ONNX Runtime
fuses it (attention, bias + GELU, skip + layer norm) and runs it on one thread, about twice
as fast as the same pass written with numpy (`make bench`), since at a few tokens per text
numpy pays for every intermediate array and BLAS call on its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
from numpy.typing import NDArray
from onnx import NodeProto, TensorProto, helper, numpy_helper

from memmesh.embedding.weights import BertWeights, Matrix

# The operator set the graph is written in (LayerNormalization and Gelu are standard ops there).
OPSET = 20
IR_VERSION = 10
# Constants of at least this many elements (the weights) are handed to the session from memory
# rather than serialized into the graph: serializing 90 MB to parse it straight back doubled
# the memory a process peaked at while loading.
SHARED_INITIALIZER_SIZE = 1024
# Added to the attention scores of padding: exp() of it is 0 in float32.
_MASKED = -1e9
# ONNX Runtime's contrib operators (DynamicQuantizeMatMul).
MICROSOFT_DOMAIN = "com.microsoft"


def int8_columns(weight: Matrix) -> tuple[NDArray[np.int8], Matrix]:
    """A (in, out) weight as int8 with one scale per output column (symmetric, zero point 0):
    a column's largest magnitude maps to 127, so no column loses range to another's."""
    scales = (np.abs(weight).max(axis=0) / 127.0).astype(np.float32)
    scales[scales == 0] = np.float32(1.0)
    values = np.clip(np.rint(weight / scales), -127, 127).astype(np.int8)
    return values, scales


class _GraphBuilder:
    """Collects nodes and initializers; every node's output gets a fresh name."""

    def __init__(self) -> None:
        self.nodes: list[NodeProto] = []
        self.initializers: list[TensorProto] = []
        # The weights, by name, which the graph declares as external data.
        self.shared: dict[str, NDArray[np.generic]] = {}
        self._count = 0

    def const(self, name: str, value: NDArray[np.generic]) -> str:
        array = np.ascontiguousarray(value) if np.ndim(value) else np.asarray(value)
        if array.size < SHARED_INITIALIZER_SIZE:
            self.initializers.append(numpy_helper.from_array(array, name))
            return name
        # Declared as external data, which the session is handed from memory.
        tensor = TensorProto(
            name=name, data_type=helper.np_dtype_to_tensor_dtype(array.dtype), dims=array.shape
        )
        tensor.data_location = TensorProto.EXTERNAL
        for key, text in (("location", name), ("offset", "0"), ("length", str(array.nbytes))):
            tensor.external_data.add(key=key, value=text)
        self.initializers.append(tensor)
        self.shared[name] = array
        return name

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        self._count += 1
        output = f"t{self._count}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [output], **attributes))
        return output

    def norm(self, values: str, weight: str, bias: str, eps: float) -> str:
        """Layer normalisation over the hidden axis."""
        return self.op("LayerNormalization", values, weight, bias, epsilon=eps, axis=-1)


def bert_graph(
    weights: BertWeights, quantized: bool = False
) -> tuple[bytes, dict[str, NDArray[np.generic]]]:
    """The serialized ONNX model: input_ids and attention_mask (batch, length) int64 in,
    `pooled` (batch, hidden) float32 out, the mean of the last layer over the real tokens;
    and the weight arrays it names but does not hold, by name. `quantized`: the encoder
    layers' dense products in int8 (see int8_columns)."""
    g = _GraphBuilder()
    hidden_size, heads = weights.hidden_size, weights.head_count
    eps = weights.eps
    zero = g.const("zero", np.array([0], np.int64))
    one = g.const("one", np.array([1], np.int64))
    two = g.const("two", np.array([2], np.int64))
    shape = g.op("Shape", "input_ids")
    length = g.op("Slice", shape, one, two)
    batch_and_length = g.op("Slice", shape, zero, two)
    positions = g.op(
        "Slice", g.const("position_embeddings", weights.position_embeddings), zero, length
    )
    words = g.op("Gather", g.const("word_embeddings", weights.word_embeddings), "input_ids")
    x = g.norm(
        g.op("Add", words, positions),
        g.const("embedding_norm_weight", weights.embedding_norm_weight),
        g.const("embedding_norm_bias", weights.embedding_norm_bias),
        eps,
    )
    mask = g.op("Cast", "attention_mask", to=TensorProto.FLOAT)
    # (batch, 1, 1, length): broadcast over heads and query positions.
    padding = g.op("Sub", g.const("unit", np.array(1.0, np.float32)), mask)
    score_bias = g.op(
        "Unsqueeze",
        g.op("Mul", padding, g.const("masked", np.array(_MASKED, np.float32))),
        g.const("head_and_query_axes", np.array([1, 2], np.int64)),
    )
    split_shape = g.op(
        "Concat",
        batch_and_length,
        g.const("qkv_tail", np.array([3, heads, hidden_size // heads], np.int64)),
        axis=0,
    )
    merged_shape = g.op(
        "Concat",
        batch_and_length,
        g.const("hidden_tail", np.array([hidden_size], np.int64)),
        axis=0,
    )
    # Scalar indices: Gather drops the axis, leaving (batch, heads, length, head size).
    qkv_parts = [g.const(f"qkv_part{part}", np.array(part, np.int64)) for part in range(3)]
    for index, layer in enumerate(weights.layers):

        def const(name: str, value: NDArray[np.generic], index: int = index) -> str:
            return g.const(f"layer{index}.{name}", value)

        def dense(inputs: str, weight: Matrix, bias: Matrix, name: str) -> str:
            if not quantized:
                product = g.op("MatMul", inputs, const(f"{name}_weight", weight))
                return g.op("Add", product, const(f"{name}_bias", bias))
            values, scales = int8_columns(weight)
            return g.op(
                "DynamicQuantizeMatMul",
                inputs,
                const(f"{name}_weight_int8", values),
                const(f"{name}_weight_scale", scales),
                const(f"{name}_weight_zero", np.zeros(len(scales), np.int8)),
                const(f"{name}_bias", bias),
                domain=MICROSOFT_DOMAIN,
            )

        # (3, batch, heads, length, head size); the query is pre-scaled by 1/sqrt(head size).
        qkv = g.op(
            "Transpose",
            g.op("Reshape", dense(x, layer.qkv_weight, layer.qkv_bias, "qkv"), split_shape),
            perm=[2, 0, 3, 1, 4],
        )
        query, key, value = (g.op("Gather", qkv, part, axis=0) for part in qkv_parts)
        scores = g.op("MatMul", query, g.op("Transpose", key, perm=[0, 1, 3, 2]))
        attention = g.op("Softmax", g.op("Add", scores, score_bias), axis=-1)
        context = g.op(
            "Reshape",
            g.op("Transpose", g.op("MatMul", attention, value), perm=[0, 2, 1, 3]),
            merged_shape,
        )
        attended = g.op(
            "Add",
            dense(context, layer.attention_output_weight, layer.attention_output_bias, "attn_out"),
            x,
        )
        attended = g.norm(
            attended,
            const("attention_norm_weight", layer.attention_norm_weight),
            const("attention_norm_bias", layer.attention_norm_bias),
            eps,
        )
        intermediate = g.op(
            "Gelu", dense(attended, layer.intermediate_weight, layer.intermediate_bias, "inter")
        )
        output = g.op(
            "Add", dense(intermediate, layer.output_weight, layer.output_bias, "out"), attended
        )
        x = g.norm(
            output,
            const("output_norm_weight", layer.output_norm_weight),
            const("output_norm_bias", layer.output_norm_bias),
            eps,
        )
    real = g.op("Unsqueeze", mask, two)
    summed = g.op("ReduceSum", g.op("Mul", x, real), one, keepdims=0)
    counts = g.op("ReduceSum", mask, one, keepdims=1)  # at least [CLS] and [SEP]
    g.nodes.append(helper.make_node("Div", [summed, counts], ["pooled"]))
    graph = helper.make_graph(
        g.nodes,
        "sentence_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden_size])],
        g.initializers,
    )
    opsets = [helper.make_opsetid("", OPSET)]
    if quantized:
        opsets.append(helper.make_opsetid(MICROSOFT_DOMAIN, 1))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = IR_VERSION
    return bytes(model.SerializeToString()), g.shared


class BertModel:
    """The forward pass of one set of weights, ready to run; thread-safe (ONNX Runtime
    sessions take concurrent runs) and deterministic for the same input.

    `quantized` runs the encoder layers' dense products in int8, about three times as fast
    on one short text (`make bench`, section embedding). Their activations are quantized with
    one scale for the whole input, so a text's vector then depends on the batch it is run in:
    `batch_independent` says whether texts may share a run."""

    def __init__(self, weights: BertWeights, quantized: bool = False) -> None:
        options = onnxruntime.SessionOptions()
        # One thread: the engines run as several processes on few cores.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: they raise here anyway
        graph, shared = bert_graph(weights, quantized)
        # Handed over from memory. The session copies them into its own buffers as it is made
        # (prepacked or as they are), so nothing here keeps them: once the caller drops the
        # weights, the process holds one copy (about 85 MB less; test_sentence_encoder checks
        # that the session no longer reads them).
        handed = [onnxruntime.OrtValue.ortvalue_from_numpy(a) for a in shared.values()]
        options.add_external_initializers(list(shared), handed)
        self._session = onnxruntime.InferenceSession(
            graph, options, providers=["CPUExecutionProvider"]
        )
        self.hidden_size = weights.hidden_size
        self.batch_independent = not quantized

    def encode(self, token_ids: NDArray[np.integer], attention_mask: NDArray[np.integer]) -> Matrix:
        """Unit-length sentence embeddings (batch, hidden) for padded token ids (batch, length)."""
        inputs = {
            "input_ids": np.ascontiguousarray(token_ids, dtype=np.int64),
            "attention_mask": np.ascontiguousarray(attention_mask, dtype=np.int64),
        }
        pooled: Matrix = self._session.run(["pooled"], inputs)[0]
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))
        return pooled
