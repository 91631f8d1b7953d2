"""Inductor kernels of `torch.compile`d code, attributed to the aten ops fused in them and
to the model source that ran them (the Kernels view's `fused_ops` and `source`).

- An Inductor kernel is the op that launched a GPU kernel when its name is Inductor's
  (`triton_poi_fused_…`, `triton_red_…`, `triton_per_…`, `triton_tem_…`, `cpp_fused_…`):
  torch records one `cpu_op` per kernel launch (args `kernel_name`, `kernel_file`,
  `kernel_hash`), innermost under the compile markers (`Torch-Compiled Region`,
  `CompiledFunction`, `## Call CompiledFxGraph … ##`), which are regions, not user ops.
- `fused_ops`: the `Original ATen` list of the `# Topologically Sorted Source Nodes`
  comment that Inductor writes before each kernel in its wrapper file, when a wrapper is
  readable: an `inductor_code/` folder beside the trace (found by the comment's
  `# kernel path:` file name, whose stem is the `kernel_hash`) or the wrapper's own path in
  the Python frames, on this machine. A file the trace names is read only through the
  storage layer, bounded (KINETOSCOPE_MAX_SOURCE_MB, default 16), and only inside the
  trace's logdir or a folder of KINETOSCOPE_SOURCE_ROOTS: a trace must not make the server
  read files elsewhere (`wrapper_unread` says why one was not). Else the op names spelled
  in the kernel name (`triton_poi_fused_gelu_view_2` → `aten::gelu`, `aten::view`), split
  against the aten op names of the trace and Inductor's usual ones; a part that matches
  none stays whole (`fused_ops_from`: "wrapper" or "kernel_name").
- `source`: frames `{filename, line, name, generated}`, model code first: the model frames of the
  event's `stack_trace` arg (`enrich_profiler_metadata` post-pass) when present; then the
  `with_stack` Python frames around the launch that are not library code (torch, triton,
  the standard library: the model line that called the compiled module), innermost first;
  then the generated wrapper's frame (its file and the line that launched the kernel).
  Empty when the trace has no Python frames and no stack trace.
"""

from __future__ import annotations

import errno
import os
import re
from typing import TypedDict

import msgspec
import numpy as np

from ...ingest import storage
from ...ingest.limits import env_number
from ...model.trace_model import TraceModel
from ..core.optree import op_tree
from ..core.python_stacks import is_library_file
from ..core.side_files import MAX_SOURCE_ENV, SOURCE_ROOTS, source_roots
from ..core.source_frames import SourceFrame, model_frames

# Entries of an `inductor_code/` folder listed at most (a model's wrappers number tens).
MAX_INDUCTOR_FILES = 4096
INDUCTOR_KERNEL = re.compile(
    r"^(?:triton_(?:poi|red|per|tem|for|spl|mix)_|cpp_)fused_(.*?)(?:_\d+)?$"
)
COMPILE_MARKER = re.compile(
    r"^(?:Torch-Compiled Region|CompiledFunction|CompiledFunctionBackward|"
    r"## Call CompiledFxGraph .*##|## fx_generated_.*##|"
    r"autograd::engine::evaluate_function: CompiledFunctionBackward)"
)
_SOURCE_NODES = re.compile(r"^# Topologically Sorted Source Nodes: \[.*\], Original ATen: \[(.*)\]")
_STACK_TRACE_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
# Ops Inductor commonly fuses whose names a trace may not hold as `aten::` events.
_COMMON_OPS = (  # noqa: SIM905 (a word list reads better as text)
    "add mul sub div neg exp log sqrt rsqrt pow abs sin cos tanh sigmoid relu silu gelu "
    "gelu_backward threshold_backward sigmoid_backward silu_backward tanh_backward erf "
    "native_layer_norm native_layer_norm_backward native_batch_norm native_dropout "
    "view _unsafe_view clone permute transpose expand squeeze unsqueeze select "
    "select_backward slice slice_backward cat copy _to_copy sum mean amax max min "
    "_softmax _softmax_backward_data _log_softmax embedding embedding_dense_backward "
    "where full scalar_tensor index index_put mm addmm bmm convolution"
).split()


class CompiledKernel(TypedDict):
    fused_ops: list[str]
    fused_ops_from: str  # "wrapper" (Inductor's comment) or "kernel_name" (its spelling)
    wrapper_unread: str | None  # why the wrapper the trace names was not read; None: read or none
    source: list[SourceFrame]


class _KernelArgs(msgspec.Struct, gc=False):
    kernel_hash: str | None = None
    stack_trace: str | None = None


def is_compile_marker(name: str) -> bool:
    return COMPILE_MARKER.match(name) is not None


def kernel_name_ops(name: str, vocabulary: set[str]) -> list[str]:
    """The aten ops spelled in an Inductor kernel name, longest known name first at each
    position; [] when the name is not Inductor's."""
    m = INDUCTOR_KERNEL.match(name)
    if m is None:
        return []
    parts = m.group(1).split("_")
    out: list[str] = []
    i = 0
    while i < len(parts):
        j = len(parts)
        while j > i and "_".join(parts[i:j]) not in vocabulary:
            j -= 1
        if j == i:  # no known op starts here: join up to the next known start
            j = i + 1
            while j < len(parts) and not _starts_known(parts, j, vocabulary):
                j += 1
        op = "aten::" + "_".join(parts[i:j]).strip("_")
        if op not in out and op != "aten::":
            out.append(op)
        i = j
    return out


def _starts_known(parts: list[str], i: int, vocabulary: set[str]) -> bool:
    return any("_".join(parts[i:j]) in vocabulary for j in range(i + 1, len(parts) + 1))


def wrapper_fused_ops(text: str) -> dict[str, list[str]]:
    """kernel hash (the stem of `# kernel path:`) → its `Original ATen` ops, from a wrapper."""
    out: dict[str, list[str]] = {}
    kernel: str | None = None
    for line in text.splitlines():
        if line.startswith("# kernel path:"):
            kernel = os.path.splitext(os.path.basename(line.split(":", 1)[1].strip()))[0]
            continue
        m = _SOURCE_NODES.match(line)
        if m and kernel is not None:
            ops = [o.strip() for o in m.group(1).split(",") if o.strip()]
            out[kernel] = ["aten::" + o.removeprefix("aten.") for o in ops]
            kernel = None
    return out


def _unread_reason(exc: OSError) -> str:
    if isinstance(exc, storage.OutsideLogdirError):
        return f"outside the logdir, so it is not read ({SOURCE_ROOTS} names folders it may be)"
    if isinstance(exc, FileNotFoundError):
        return "not on this machine"
    if exc.errno == errno.EFBIG:
        return f"{exc.strerror} ({MAX_SOURCE_ENV}), so it is not read"
    return f"cannot be read ({exc.strerror or type(exc).__name__})"


def _read_wrappers(
    paths: list[str], roots: list[str]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """kernel hash → fused ops, from the wrappers that could be read inside `roots`
    (through the storage layer, bounded); and per wrapper not read, why."""
    out: dict[str, list[str]] = {}
    unread: dict[str, str] = {}
    limit = int(env_number(MAX_SOURCE_ENV, 16) * (1 << 20))
    for path in paths:
        try:
            text = storage.read_small(path, limit, roots).decode("utf-8", errors="replace")
        except OSError as exc:
            unread[path] = _unread_reason(exc)
            continue
        if "# kernel path:" in text:
            out.update(wrapper_fused_ops(text))
    return out, unread


def _inductor_folder_files(model: TraceModel, roots: list[str]) -> list[str]:
    """The `.py` files of the `inductor_code/` folder beside the trace, listed through the
    storage layer: at most MAX_INDUCTOR_FILES entries, and only a folder inside `roots`
    (a folder link leading out of the logdir is not listed)."""
    path = model.source.get("path")
    if not path or storage.is_url(str(path)):
        return []
    folder = os.path.join(os.path.dirname(str(path)), "inductor_code")
    try:
        names = storage.list_small(folder, MAX_INDUCTOR_FILES, roots)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.endswith(".py")]


def stack_trace_frames(text: str) -> list[SourceFrame]:
    """Frames of a Python traceback text (`File "f", line N, in fn`), innermost first."""
    frames: list[SourceFrame] = [
        {"filename": f, "line": int(n), "name": fn, "generated": False}
        for f, n, fn in _STACK_TRACE_FRAME.findall(text)
    ]
    return [f for f in reversed(frames) if not is_library_file(f["filename"])]


def compiled_kernels(model: TraceModel) -> dict[int, CompiledKernel]:
    """Per op-tree node that is an Inductor kernel: its fused ops and source frames."""
    return model.derived("_compiled_kernels", _build)


def _build(model: TraceModel) -> dict[int, CompiledKernel]:
    tree = op_tree(model)
    flags = np.array([INDUCTOR_KERNEL.match(n) is not None for n in model.names], dtype=bool)
    if not flags.any() or not len(tree):
        return {}
    nodes = np.flatnonzero(flags[model.events["name"][tree.rows]])
    if nodes.size == 0:
        return {}
    args = model.args_of(tree.rows[nodes], _KernelArgs)
    frames = model_frames(model, nodes)
    wrappers = {f["filename"] for fs in frames for f in fs if f["generated"]}
    roots = source_roots(model)
    by_hash, unread = _read_wrappers(_inductor_folder_files(model, roots) + sorted(wrappers), roots)
    vocabulary = set(_COMMON_OPS) | {
        n[6:] for n in model.names if n.startswith("aten::") and "::" not in n[6:]
    }
    out: dict[int, CompiledKernel] = {}
    for node, a, fs in zip(nodes.tolist(), args, frames):
        name = model.names[int(model.events["name"][tree.rows[node]])]
        read = by_hash.get(a.kernel_hash or "")
        generated = [f for f in fs if f["generated"]][:1]
        source = stack_trace_frames(a.stack_trace) if a.stack_trace else []
        source += [f for f in fs if not f["generated"]] + generated
        why = unread.get(generated[0]["filename"]) if generated and not read else None
        out[node] = {
            "fused_ops": read or kernel_name_ops(name, vocabulary),
            "fused_ops_from": "wrapper" if read else "kernel_name",
            "wrapper_unread": why,
            "source": source,
        }
    return out


def compiled_columns(
    model: TraceModel, kernel_rows: np.ndarray, group: np.ndarray, n: int
) -> list[CompiledKernel | None]:
    """Per kernel group (`group`: the group of each kernel row), the fused ops and source
    of its longest-running Inductor kernel launch; None for a group of none."""
    info = compiled_kernels(model)
    out: list[CompiledKernel | None] = [None] * n
    if not info or kernel_rows.size == 0:
        return out
    tree = op_tree(model)
    pos = np.minimum(np.searchsorted(tree.gpu, kernel_rows), max(tree.gpu.size - 1, 0))
    if tree.gpu.size == 0:
        return out
    node = np.where(tree.gpu[pos] == kernel_rows, tree.gpu_node[pos], -1)
    dur = model.events["dur"][kernel_rows]
    for k in np.argsort(-dur, kind="stable").tolist():
        g = int(group[k])
        if out[g] is None:
            out[g] = info.get(int(node[k]))
    return out
