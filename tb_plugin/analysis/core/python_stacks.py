"""Where an operator's call stack comes from: the `Call stack` arg (2021-22 traces,
`file(line): func;...`, innermost frame first) or, in 2.x traces recorded with
`with_stack=True`, the `python_function` events enclosing the op on its thread. Frames
are listed innermost first (the frame that called the op comes first).

A Python event's parent is the event its `Python parent id` arg names (by its `Python id`),
as the profiler recorded the call; where the arg is missing or names no event that sorts
before it (start, then longer first, then file order), the innermost event enclosing it in
time (host_ranges.py, in whole nanoseconds)."""

from __future__ import annotations

import re
from functools import cached_property
from typing import TypedDict

import msgspec
import numpy as np

from ...model.categories import Kind
from ...model.trace_model import NO_PYTHON_ID, TraceModel
from .common import complete_rows
from .optree import OpTree
from .python_ranges import python_ranges_unkept
from .tree_arrays import levels_from_roots

_FRAME = re.compile(r"^(.*)\((\d+)\): (.*)$")
# Frames of torch, triton and Python itself (relative as the Python tracer writes them, or
# installed paths), as opposed to the model's own code.
_LIBRARY = ("torch/", "triton/", "<", "contextlib.py", "threading.py", "functools.py")
_LIBRARY_PARTS = ("/site-packages/", "/dist-packages/", "/lib/python3", "/torch/", "/triton/")
_MODULE_INSTANCE = re.compile(r"^(nn\.Module: .*?)_\d+$")
_MODULE_PREFIX = "nn.Module: "


class Frame(TypedDict):
    file: str | None
    line: int | None
    function: str


class StackArgs(msgspec.Struct, gc=False):
    stack: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Call stack")


class PythonStacks(msgspec.Struct, dict=True):
    rows: np.ndarray  # python_function rows
    parent: np.ndarray  # enclosing python event index, -1
    node_frame: np.ndarray  # per tree node: innermost enclosing python event, -1
    frame_text: list[str]  # per frame code
    frame: np.ndarray  # per python event: frame code

    @cached_property
    def stack_id(self) -> np.ndarray:
        """Per python event: id of its frame chain (equal chains, equal id). Computed
        when first asked (the call stacks of one operator); the tables need only the
        frames above."""
        return chain_ids(self.parent, self.frame)


def python_stacks(model: TraceModel, tree: OpTree) -> PythonStacks | None:
    """Python frames enclosing each op on its thread (2.x `with_stack=True` traces)."""
    stacks = model.derived("_python_stacks", lambda m: _build_python_stacks(m, tree))
    return stacks if stacks.rows.size else None


def _build_python_stacks(model: TraceModel, tree: OpTree) -> PythonStacks:
    ev = model.events
    ranges = python_ranges_unkept(model)
    if ranges.rows.size == 0:
        # No frames: every node's is -1, one value seen at every node (no array of them
        # held with the model: 1.5 MB of a 259 MB V100 trace).
        empty = np.empty(0, np.int32)
        none = np.broadcast_to(np.int32(-1), (len(tree),))
        return PythonStacks(empty, empty, none, [], empty)
    # Rows and positions as int32 where the trace's rows fit (they are kept with the model).
    index = np.dtype(np.int32 if len(model) < 1 << 31 else np.int64)
    # python_function events nest like host ranges; each op's frame is the innermost
    # event enclosing it (an op sorts after an event with its own start and end). Asked
    # first, so the index's times and threads go (where no view keeps it) before the
    # parents' temporaries are made: a trace's largest index, beside them, was its peak.
    t0 = ev["ts"][tree.rows].astype(np.float64, copy=False)
    inner = ranges.enclosing(tree.thread, t0, t0 + ev["dur"][tree.rows])
    del t0
    rows, time_parent = ranges.rows, ranges.parent.astype(index)  # a copy, written into
    del ranges
    py, file_pos = _frames_file_order(model, rows, index)
    node_frame = np.where(inner >= 0, file_pos[np.maximum(inner, 0)], -1).astype(index)
    del inner
    by_id = _ids_in_file_order(model, py, file_pos)
    python_ids = _python_ids(model, rows)
    del rows
    up = _id_parents(python_ids, time_parent, by_id)
    del by_id
    parent = np.full(py.size, -1, dtype=index)
    parent[file_pos] = np.where(up >= 0, file_pos[np.maximum(up, 0)], -1)
    del up, file_pos
    frame, frame_text = _frames(model, py)
    return PythonStacks(py, parent, node_frame, frame_text, frame)


def _frames_file_order(
    model: TraceModel, rows: np.ndarray, index: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """`_file_order` of the Python frames' index rows: those rows sorted are the frames'
    rows the index was built from (`complete_rows`, kept with the model), so each one's
    place is written in a table of the trace's rows and read back (no count over every
    row: 4.7 -> 1.9 ms at 0.46M frames of 0.92M rows)."""
    frames = complete_rows(model, Kind.PYTHON)
    if frames.size != rows.size:  # the index's rows are a subset of them: else the same
        return _file_order(len(model), rows, index)
    py = frames.astype(index, copy=False)
    table = np.empty(len(model), dtype=index)  # written only at the frames' rows
    table[py] = np.arange(py.size, dtype=index)
    return py, table[rows]


def _file_order(n_rows: int, rows: np.ndarray, index: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """`rows` (distinct) sorted, and each one's place there (as `index`): marked in a
    table of the trace's rows and counted (no sort of the rows)."""
    marked = np.zeros(n_rows, dtype=bool)
    marked[rows] = True
    place: np.ndarray = np.cumsum(marked, dtype=index)
    place = place[rows]
    place -= 1
    return np.flatnonzero(marked).astype(index), place


def _ids_in_file_order(
    model: TraceModel, py: np.ndarray, file_pos: np.ndarray
) -> list[np.ndarray] | None:
    """The recorded Python ids sorted, each with its range position, where they count up
    in file order (every trace seen: the profiler numbers calls as it writes them), so
    they need no sort; None where they do not. `py`: the rows in file order; `file_pos`:
    each range position's place among them."""
    ids = model.column_at("python_id", py)
    recorded = ids != NO_PYTHON_ID
    all_recorded = bool(recorded.all())
    if not all_recorded:
        ids = ids[recorded]
    if ids.size == 0 or not bool((ids[1:] > ids[:-1]).all()):
        return None
    position = np.empty(file_pos.size, dtype=file_pos.dtype)  # per place, its position
    position[file_pos] = np.arange(file_pos.size, dtype=file_pos.dtype)
    return [ids, position if all_recorded else position[recorded]]


def _id_parents(
    python_ids: list[np.ndarray], parent: np.ndarray, by_id: list[np.ndarray] | None = None
) -> np.ndarray:
    """Per range position (rows in the index's order), its parent position: the event its
    `Python parent id` names when that sorts before it (so no chain loops), a null parent
    id a root, else `parent` (the enclosing range in time). Written into `parent`.
    `python_ids` (`_python_ids`) is emptied: each of its arrays goes once read; `by_id`
    (`_ids_in_file_order`), when given, too."""
    has_id, ids, has_up, ups = python_ids
    python_ids.clear()
    if not has_id.any():
        return parent  # no ids recorded: time nesting
    searched = [ids, ups]
    del ids, ups
    if by_id is not None:
        found = _first_position_by_id(searched, by_id, has_id, parent)
    else:
        found = _first_position_of(searched, has_id, parent)
    positions = np.arange(has_id.size, dtype=parent.dtype)
    named = has_id & has_up & (found >= 0) & (found < positions)
    parent[has_id & ~has_up] = -1  # an id with a null parent id: a root
    parent[named] = found[named]
    return parent


def _first_position_of(
    searched: list[np.ndarray], has_id: np.ndarray, guess: np.ndarray
) -> np.ndarray:
    """Per wanted id, the first position whose id it is, -1 for none. Python ids count
    up from 0 in a trace: a table indexed by id where they are that dense, else the
    ids sorted, each with its first place; where no two positions share an id, a `guess`
    (the enclosing range in time, the parent almost always) holding the wanted id is
    taken as it is and only the others are searched for. `searched`: the positions' ids
    and the wanted ids, emptied (the positions' ids go once read)."""
    ids, wanted = searched
    searched.clear()
    index = np.int32 if ids.size < 1 << 31 else np.int64
    with_id = np.flatnonzero(has_id).astype(index)
    id_of = ids[with_id]
    low, high = int(id_of.min()), int(id_of.max())
    if low < 0 or high > 4 * ids.size + (1 << 16):
        guessed = _guessed(ids, has_id, guess, wanted)
        del ids
        by_position = [id_of, with_id]
        del id_of, with_id
        return _first_position_sorted(by_position, wanted, guessed)
    del id_of
    table = np.full(high + 2, ids.size, dtype=index)  # the last entry: no such id
    np.minimum.at(table, ids[with_id], with_id)
    found = table[np.where((wanted >= 0) & (wanted <= high), wanted, high + 1)]
    found[found == ids.size] = -1
    return found


def _first_position_sorted(
    by_position: list[np.ndarray], wanted: np.ndarray, guessed: np.ndarray
) -> np.ndarray:
    """Per wanted id, the first of `position` whose id (`id_of`) it is, -1 for none: the
    ids sorted stably (each id's first place first), each kept with its first place.
    Where no two positions share an id, a `guessed` position (>= 0) is the answer and
    only the others are searched for. Each step lets go of what it read (ids spread
    wide: their sort was a build's peak). `by_position`: (`id_of`, `position`), emptied
    (so the ids sorted replace the ids read, not stand beside them)."""
    id_of, position = by_position
    by_position.clear()
    order = np.argsort(id_of, kind="stable")
    id_of = id_of[order]
    first = np.ones(id_of.size, dtype=bool)
    first[1:] = id_of[1:] != id_of[:-1]
    known = id_of[first]
    distinct = known.size == id_of.size
    del id_of
    first_pos = position[order[first]]
    del order, first
    return _search_unguessed(known, first_pos, wanted, guessed if distinct else None)


def _first_position_by_id(
    searched: list[np.ndarray], by_id: list[np.ndarray], has_id: np.ndarray, guess: np.ndarray
) -> np.ndarray:
    """`_first_position_of` where the ids are known distinct and sorted (`by_id`: the ids
    and their positions, emptied): no sort and no table, the `guess` where it holds the
    wanted id and a search for the others. `searched` as there."""
    ids, wanted = searched
    searched.clear()
    guessed = _guessed(ids, has_id, guess, wanted)
    del ids
    known, position = by_id
    by_id.clear()
    return _search_unguessed(known, position, wanted, guessed)


def _guessed(
    ids: np.ndarray, has_id: np.ndarray, guess: np.ndarray, wanted: np.ndarray
) -> np.ndarray:
    """`guess` where the position it names holds the wanted id, else -1."""
    g = np.maximum(guess, 0)
    held = has_id[g]
    held &= guess >= 0
    held &= ids[g] == wanted
    del g
    return np.where(held, guess, -1)


def _search_unguessed(
    known: np.ndarray, first_pos: np.ndarray, wanted: np.ndarray, guessed: np.ndarray | None
) -> np.ndarray:
    """Per wanted id, `first_pos` of its place in `known` (sorted, distinct), -1 for
    none; where `guessed` is given, its answers (>= 0) are taken and only the others
    searched for."""
    if guessed is not None:
        found = guessed.astype(first_pos.dtype, copy=False)
        search = np.flatnonzero(guessed < 0)
    else:
        found = np.full(wanted.size, -1, dtype=first_pos.dtype)
        search = np.arange(wanted.size)
    want = wanted[search]
    at = np.searchsorted(known, want)
    np.minimum(at, known.size - 1, out=at)
    found[search] = np.where(known[at] == want, first_pos[at], -1)
    return found


def _python_ids(model: TraceModel, rows: np.ndarray) -> list[np.ndarray]:
    """Per row: whether it has a `Python id`, the id, whether it has a `Python parent id`,
    the parent id (the columns the loader read them into)."""
    ids = model.column_at("python_id", rows)
    ups = model.column_at("python_parent_id", rows)
    return [ids != NO_PYTHON_ID, ids, ups != NO_PYTHON_ID, ups]


def _frames(model: TraceModel, py: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """A frame code per python event (int16 where the codes fit: one per Python call,
    held through the views). Module frames lose their instance number
    (`nn.Module: Linear_25` → `nn.Module: Linear`), so calls through the same code in
    different layers share a stack, as with the `Call stack` arg."""
    names = model.events["name"][py]
    # The distinct name codes in code order, marked in a table (no sort of the rows).
    used = np.zeros(len(model.names), dtype=bool)
    used[names] = True
    codes = np.flatnonzero(used)
    texts = [_frame_text(model.names[c]) for c in codes.tolist()]
    canon: dict[str, int] = {}
    ids = [canon.setdefault(t, len(canon)) for t in texts]
    code_type = np.int16 if len(canon) <= np.iinfo(np.int16).max else np.int32
    remap = np.zeros(len(model.names), dtype=code_type)
    remap[codes] = ids
    return remap[names], list(canon)


def _frame_text(name: str) -> str:
    """`name` without a module's instance number: `_MODULE_INSTANCE`'s substitution,
    tried only where it can match (a third of a trace's frames are modules)."""
    if not name.startswith(_MODULE_PREFIX):
        return name
    found = _MODULE_INSTANCE.match(name)
    return name if found is None else found.group(1) + name[found.end() :]


def is_library_file(filename: str) -> bool:
    """Whether a frame's file is library code (torch, triton, the standard library, an
    installed package) rather than the user's own."""
    return filename.startswith(_LIBRARY) or any(p in filename for p in _LIBRARY_PARTS)


def parse_frame(text: str) -> Frame:
    m = _FRAME.match(text.strip())
    if m:
        return {"file": m.group(1), "line": int(m.group(2)), "function": m.group(3)}
    return {"file": None, "line": None, "function": text.strip()}


def has_call_stack(
    model: TraceModel, tree: OpTree, nodes: np.ndarray
) -> tuple[np.ndarray, str | None]:
    """Per node: whether a call stack was recorded; and where stacks come from."""
    stacks = python_stacks(model, tree)
    if stacks is not None:
        return stacks.node_frame[nodes] >= 0, "python_function"
    if nodes.size == 0:
        return np.zeros(0, bool), None
    flags = model.events["has_stack"][tree.rows[nodes]]
    return flags, "call_stack_arg" if flags.any() else None


def python_groups(stacks: PythonStacks, nodes: np.ndarray) -> tuple[np.ndarray, list[list[Frame]]]:
    """Group calls by their chain of enclosing python frames."""
    inner = stacks.node_frame[nodes]
    ids = np.where(inner >= 0, stacks.stack_id[np.maximum(inner, 0)], -1)
    uniq, first, group = np.unique(ids, return_index=True, return_inverse=True)
    frames_of: list[list[Frame]] = []
    for sid, at in zip(uniq.tolist(), first.tolist()):
        frames: list[Frame] = []
        cur = int(inner[at]) if sid >= 0 else -1
        while cur >= 0:
            frames.append(parse_frame(stacks.frame_text[stacks.frame[cur]]))
            cur = int(stacks.parent[cur])
        frames_of.append(frames)
    return group.reshape(-1), frames_of


def chain_ids(parent: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Equal ids for nodes whose chains of labels (to the root) are equal: interned
    level by level from the roots down (a Python stack; a module path)."""
    n = parent.size
    out = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return out
    width = np.int64(int(label.max()) + 1)
    next_id = 0
    for level in levels_from_roots(parent):
        p = parent[level]
        up = np.where(p >= 0, out[np.maximum(p, 0)], -1)
        uniq, inv = np.unique((up + 1) * width + label[level], return_inverse=True)
        out[level] = next_id + inv.reshape(-1)
        next_id += uniq.size
    return out
