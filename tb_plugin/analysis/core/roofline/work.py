"""Work per op-tree node and per GPU activity, and the ideal times on the device's roofs.

Per node with a formula (families.py) its FLOPs and bytes from the `Input Dims`, `Input
type` and `Concrete Inputs` args (decoded only for those nodes; each distinct signature
evaluated once); the profiler's own `flops` arg (`with_flops=True`) replaces the formula's
FLOPs where present. A GPU activity takes the work of the op that launched it, or of the
nearest enclosing op with work, split among that op's activities by duration.

The ideal times, in µs: `t_compute` = FLOPs / peak of its dtype, `t_memory` = bytes /
memory bandwidth. Whichever is larger says the bound; it over the measured time is the
fraction of the roof reached. Both are additive, so groups of calls sum them.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import numpy as np

from ....model.decoders import decoders_for
from ....model.trace_model import TraceModel
from ..common import distinct, gpu_device_ids, name_flags
from ..optree import OpTree, op_tree
from ..tree_arrays import inherit_missing
from .dtypes import INPUT_TYPES
from .families import formula_of, work_of
from .formulas import MEMORY, Call, Work
from .peaks import DTYPES, Peaks, device_peaks


class _WorkArgs(msgspec.Struct, gc=False):
    dims: Any = msgspec.field(default=None, name="Input Dims")
    dims_legacy: Any = msgspec.field(default=None, name="Input dims")
    types: Any = msgspec.field(default=None, name="Input type")
    concrete: Any = msgspec.field(default=None, name="Concrete Inputs")
    flops: Any = None


class Costs(msgspec.Struct):
    """Work and ideal times per item (a node, or a GPU activity); NaN: unknown."""

    flops: np.ndarray
    bytes: np.ndarray
    t_compute: np.ndarray  # µs at the compute roof of its dtype
    t_memory: np.ndarray  # µs at the memory roof
    dtype: np.ndarray  # index into DTYPES, -1 unknown


def take(costs: Costs, index: np.ndarray) -> Costs:
    """The costs of some items (`index` into them; -1: an item without costs)."""
    if costs.flops.size == 0:
        n = index.size
        return Costs(_nan(n), _nan(n), _nan(n), _nan(n), np.full(n, -1, dtype=np.int8))
    at = np.maximum(index, 0)
    missing = index < 0
    picked = [getattr(costs, f)[at] for f in _FIELDS]
    for values in picked[:4]:
        values[missing] = np.nan
    picked[4][missing] = -1
    return Costs(*picked)


_FIELDS = ("flops", "bytes", "t_compute", "t_memory", "dtype")


def has_formula(name: str) -> bool:
    return formula_of(name) is not None


def node_costs(model: TraceModel) -> Costs:
    return model.derived("_roofline_nodes", _build_node_costs)


def gpu_costs(model: TraceModel) -> Costs:
    """Per GPU activity of the op tree (`op_tree(model).gpu`, in that order)."""
    return model.derived("_roofline_gpu", _build_gpu_costs)


def _nan(n: int) -> np.ndarray:
    return np.full(n, np.nan)


def _build_node_costs(model: TraceModel) -> Costs:
    tree = op_tree(model)
    n = len(tree)
    out = Costs(_nan(n), _nan(n), _nan(n), _nan(n), np.full(n, -1, dtype=np.int8))
    name_codes = model.events["name"][tree.rows]
    # Only ops that ran GPU work: the rates and the roof need device time.
    wanted = name_flags(model, has_formula)[name_codes] & ~tree.folded & (tree.device_total > 0)
    nodes = np.flatnonzero(wanted)
    nominal = np.full(n, -1, dtype=np.int8)
    if nodes.size == 0:
        return out
    codes = name_codes[nodes]
    signature, firsts = _signatures(model, tree.rows[nodes], codes)
    args = _work_args(model, tree.rows[nodes[firsts]])
    works = [_work(model.names[int(codes[i])], a) for i, a in zip(firsts.tolist(), args)]
    known = [w is not None for w in works]
    per_sig = np.array(
        [
            (w.flops, w.bytes, _dtype_index(w.dtype), w.nominal, w.unsized)
            if w
            else (0, 0, -1, -1, 0)
            for w in works
        ],
        dtype=np.float64,
    ).reshape(-1, 5)
    has = np.array(known, dtype=bool)[signature]
    at, sig = nodes[has], signature[has]
    out.flops[at], out.bytes[at] = per_sig[sig, 0], per_sig[sig, 1]
    out.dtype[at] = per_sig[sig, 2].astype(np.int8)
    nominal[at] = per_sig[sig, 3].astype(np.int8)
    _size_unsized(model, tree, at, per_sig[sig, 4], out.bytes)
    _ideal_times(model, tree, out, nominal)
    return out


# The element type a kernel is instantiated for, where its name says it: the first
# template argument of PyTorch's cat kernels (`CatArrayBatchedCopy<OpaqueType<2u>, ...>`,
# `CatArrayBatchedCopy<float, ...>`).
_KERNEL_TYPE = re.compile(r"CatArrayBatchedCopy\w*<\s*([^,<>]*(?:<\s*(\d+)u?\s*>)?)")
_CXX_SIZES = {"long": 8, "int": 4, "short": 2, **{k: t.size for k, t in INPUT_TYPES.items()}}


def kernel_element_size(name: str) -> int | None:
    """The element size a cat kernel's name gives (`OpaqueType<2u>`: 2), or None."""
    m = _KERNEL_TYPE.search(name)
    if m is None:
        return None
    if m.group(2):
        return int(m.group(2))
    return _CXX_SIZES.get(m.group(1).strip())


def _size_unsized(
    model: TraceModel, tree: OpTree, at: np.ndarray, unsized: np.ndarray, nbytes: np.ndarray
) -> None:
    """Bytes of the nodes with unsized elements (tensor lists): sized by the element type
    of the kernels they launched, where all that name one agree; else unknown."""
    nodes, elements = at[unsized > 0], unsized[unsized > 0]
    if nodes.size == 0:
        return
    launched = np.flatnonzero(np.isin(tree.gpu_node, nodes))
    codes = model.events["name"][tree.gpu[launched]]
    size_of = {int(c): kernel_element_size(model.names[int(c)]) for c in distinct(codes)}
    sizes: dict[int, set[int | None]] = {}
    for node, code in zip(tree.gpu_node[launched].tolist(), codes.tolist()):
        sizes.setdefault(node, set()).add(size_of[code])
    for node, count in zip(nodes.tolist(), elements.tolist()):
        named = sizes.get(node, set()) - {None}
        nbytes[node] = nbytes[node] + count * named.pop() if len(named) == 1 else np.nan


def _work_args(model: TraceModel, rows: np.ndarray) -> list[_WorkArgs]:
    """The work args of a few rows scattered over the args blob; the pages read around
    each (the kernel maps neighbours of a touched page too) are let go after."""
    out = model.args_of(rows, _WorkArgs)
    if rows.size:
        ends = model.events["args_end"]
        first = int(rows.min())
        model.release_args(int(ends[first - 1]) if first > 0 else 0, int(ends[rows.max()]))
    return out


_NONE = msgspec.Raw(b"")


class _RawWorkArgs(msgspec.Struct, gc=False):
    """The work args as raw JSON text: skipped over, not parsed, to compare calls."""

    dims: msgspec.Raw = msgspec.field(default=_NONE, name="Input Dims")
    dims_legacy: msgspec.Raw = msgspec.field(default=_NONE, name="Input dims")
    types: msgspec.Raw = msgspec.field(default=_NONE, name="Input type")
    concrete: msgspec.Raw = msgspec.field(default=_NONE, name="Concrete Inputs")
    flops: msgspec.Raw = _NONE


def _signatures(
    model: TraceModel, rows: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A signature index per row (equal name and work args: `Input Dims`, `Input type`,
    `Concrete Inputs`, `flops`), and a row position of each signature. Rows the compiled
    scanner hashed (`work_sig`) are grouped by name and hash without reading their args;
    the others' args are read (`_read_signatures`)."""
    hashes = model.column_at("work_sig", rows)
    hashed = np.flatnonzero(hashes != -1)
    first, inverse = _groups(codes[hashed], hashes[hashed])
    signature = np.empty(rows.size, dtype=np.int64)
    signature[hashed] = inverse
    unhashed = np.flatnonzero(hashes == -1)
    if unhashed.size == 0:
        return signature, hashed[first]
    read, read_first = _read_signatures(model, rows[unhashed], codes[unhashed])
    signature[unhashed] = read + first.size
    return signature, np.concatenate([hashed[first], unhashed[read_first]])


def _groups(names: np.ndarray, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Groups of equal (name, hash): each group's first position, and each position's
    group (as np.unique's return_index and return_inverse, without sorting records)."""
    # By hash with numpy's unstable sort (vectorised: a third of the stable sort's time
    # on the hashes, spread at random), then stably by name: each group's items together,
    # the groups in (name, hash) order as a lexsort puts them; each group's first item
    # is its least position.
    order = np.argsort(hashes)
    order = order[np.argsort(names[order], kind="stable")]
    by_name, by_hash = names[order], hashes[order]
    starts = np.ones(order.size, dtype=bool)
    starts[1:] = (by_name[1:] != by_name[:-1]) | (by_hash[1:] != by_hash[:-1])
    inverse = np.empty(order.size, dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    if order.size == 0:
        return order, inverse
    return np.minimum.reduceat(order, np.flatnonzero(starts)), inverse


def _read_signatures(
    model: TraceModel, rows: np.ndarray, codes: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`_signatures` from the args themselves, read as raw text, a chunk of rows at a
    time, so each distinct signature is decoded once and little is held at once."""
    ids: dict[tuple[int, bytes], int] = {}
    in_file_order: list[int] = []
    order = np.argsort(rows, kind="stable")  # file order: each chunk reads one stretch
    ends = model.events["args_end"]
    released = 0  # pages before this are let go (the gaps between chunks too: the kernel
    # maps pages around each one read)
    for lo in range(0, rows.size, _CHUNK_ROWS):
        at = order[lo : lo + _CHUNK_ROWS]
        chunk = _raw_args(model, rows[at])
        in_file_order += [
            ids.setdefault(
                (code, b"\0".join((a.dims, a.dims_legacy, a.types, a.concrete, a.flops))),
                len(ids),
            )
            for code, a in zip(codes[at].tolist(), chunk)
        ]
        end = int(ends[rows[at[-1]]])
        model.release_args(released, end)
        released = end
    signature = np.empty(rows.size, dtype=np.int64)
    signature[order] = in_file_order
    # Signatures are numbered as they first appear in file order: each one's first row.
    _, first_seen = np.unique(np.array(in_file_order, dtype=np.int64), return_index=True)
    return signature, order[first_seen]


# Rows read at once: their pages of args text and decoded structs are the peak memory
# (8192 rows of a 2021 trace with call stacks: ~30 MB; 2048: ~8 MB, as fast).
_CHUNK_ROWS = 2048


def _raw_args(model: TraceModel, rows: np.ndarray) -> list[_RawWorkArgs]:
    """`model.args_of(rows, _RawWorkArgs)`, each row decoded straight from its slice of a
    memory-mapped blob (no copy: a memmap's own slices cost ~3× more, and joining copies
    into one document costs a third more, and this reads many rows)."""
    blob = model.args_blob
    if not isinstance(blob, np.ndarray):
        return model.args_of(rows, _RawWorkArgs)
    view = blob.view(np.ndarray).data
    ends = model.events["args_end"]
    starts = np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0).tolist()
    pieces = [view[a:b] if b > a else b"{}" for a, b in zip(starts, ends[rows].tolist())]
    try:
        return list(map(decoders_for(_RawWorkArgs)[1].decode, pieces))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return model.args_of(rows, _RawWorkArgs)  # decodes row by row, keeping the good ones


def _work(name: str, a: _WorkArgs) -> Work | None:
    """The work of a call of `name` with these args; the profiler's `flops` arg, where it
    wrote one, replaces the formula's FLOPs (its bytes still come from the formula)."""
    dims = a.dims if a.dims is not None else a.dims_legacy
    if not isinstance(dims, list) or not isinstance(a.types, list):
        return None
    concrete = a.concrete if isinstance(a.concrete, list) else []
    work = work_of(name, Call(dims, a.types, concrete))
    given = a.flops if isinstance(a.flops, (int, float)) and a.flops > 0 else None
    if work is None or given is None:
        return work
    return work._replace(flops=float(given))


def _dtype_index(dtype: str | None) -> int:
    return DTYPES.index(dtype) if dtype in DTYPES else -1


def _node_devices(model: TraceModel, tree: OpTree) -> np.ndarray:
    """Per node the GPU its work ran on: the highest device id in its subtree (-1: none)."""
    dev = np.full(len(tree), -1, dtype=np.int64)
    own = tree.gpu_node >= 0
    np.maximum.at(dev, tree.gpu_node[own], gpu_device_ids(model, tree.gpu[own]))
    for level in reversed(tree.levels[1:]):
        np.maximum.at(dev, tree.parent[level], dev[level])
    return dev


def _ideal_times(model: TraceModel, tree: OpTree, out: Costs, nominal: np.ndarray) -> None:
    """Fill t_compute and t_memory of the nodes with work, on their device's roofs. A
    memory-family op whose dtype has no compute roof (int64, bool) counts no compute
    time; a compute-family op without bytes no memory time (its own roof binds)."""
    known = np.flatnonzero(np.isfinite(out.flops) | np.isfinite(out.bytes))
    devices = _node_devices(model, tree)[known]
    for device in distinct(devices).tolist():
        peaks = device_peaks(model, int(device))
        if peaks is None:
            continue
        at = known[devices == device]
        compute = _compute_peaks(peaks)[out.dtype[at]]
        out.t_compute[at] = out.flops[at] / compute / 1e6
        if peaks.memory_gbps:
            out.t_memory[at] = out.bytes[at] / peaks.memory_gbps / 1e3
        memory_family = nominal[at] == MEMORY
        no_compute = memory_family & ~np.isfinite(out.t_compute[at])
        out.t_compute[at[no_compute]] = 0.0
        no_bytes = ~memory_family & ~np.isfinite(out.t_memory[at])
        out.t_memory[at[no_bytes]] = 0.0


def _compute_peaks(peaks: Peaks) -> np.ndarray:
    """TFLOP/s by dtype index; the last entry (index -1) is NaN for an unknown dtype."""
    values = [peaks.tflops.get(d) for d in DTYPES]
    return np.array([v if v else np.nan for v in values] + [np.nan], dtype=np.float64)


def _build_gpu_costs(model: TraceModel) -> Costs:
    tree = op_tree(model)
    nodes = node_costs(model)
    g = tree.gpu.size
    out = Costs(_nan(g), _nan(g), _nan(g), _nan(g), np.full(g, -1, dtype=np.int8))
    if g == 0 or len(tree) == 0:
        return out
    has_work = np.isfinite(nodes.flops) | np.isfinite(nodes.bytes)
    owner_of = inherit_missing(
        tree.parent, tree.levels, np.where(has_work, np.arange(len(tree)), -1)
    )
    linked = np.flatnonzero(tree.gpu_node >= 0)
    owner = np.full(g, -1, dtype=np.int64)
    owner[linked] = owner_of[tree.gpu_node[linked]]
    with_owner = np.flatnonzero(owner >= 0)
    if with_owner.size == 0:
        return out
    dur = model.events["dur"][tree.gpu[with_owner]].astype(np.float64)
    owners = owner[with_owner]
    total = np.bincount(owners, weights=dur, minlength=len(tree))
    calls = np.bincount(owners, minlength=len(tree))
    # Split by duration; activities that all last 0 share evenly.
    share = np.where(
        total[owners] > 0, dur / np.where(total[owners] > 0, total[owners], 1), 1.0 / calls[owners]
    )
    for field in ("flops", "bytes", "t_compute", "t_memory"):
        getattr(out, field)[with_owner] = getattr(nodes, field)[owners] * share
    out.dtype[with_owner] = nodes.dtype[owners]
    return out
