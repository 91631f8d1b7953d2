"""Stacks of a memory snapshot: frames as {filename, line, name}, allocations grouped by
stack, and the icicle of the largest groups (outermost frame first).

Frames come from an untrusted file, so every field is checked: a frame that is not a dict
becomes "?"; a `line` that is not an int is None (unknown). Frames augmented with FX
traces (`torch.cuda.memory._augment_frames`: `fx_node_op`, `fx_node_name`,
`fx_node_target`, `fx_original_trace`) keep those keys, as text, in `fx`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional, TypedDict

TOP_STACKS = 20
MAX_FRAMES = (
    256  # frames of one stack in an answer (innermost first); `frames_cut` says how many more
)
MAX_INT_TEXT = 10**18  # a number beyond this in a frame is no line number: "?" / None
# Icicle nodes smaller than this share of the total are folded into their parent.
ICICLE_MIN_SHARE = 0.001
ICICLE_MAX_NODES = 2000


class SnapshotFrame(TypedDict):
    filename: str
    line: Optional[int]
    name: str
    fx: Optional[dict[str, str]]  # FX-augmented frames: fx_* keys as text; else None


class StackBytes(TypedDict):
    frames: list[SnapshotFrame]  # innermost first, as torch records them; MAX_FRAMES at most
    frames_cut: int  # frames of the stack beyond MAX_FRAMES, left out
    bytes: int
    count: int  # allocations with this stack


class IcicleNode(TypedDict):
    parent: int  # index of the parent node in the list; -1 for the top level
    depth: int
    filename: str
    line: Optional[int]
    name: str
    bytes: int


FrameKey = tuple[str, Optional[int], str]
# Where an allocation has no frames: made before the history began, or recorded
# without stacks (`_record_memory_history(stacks=...)`, C++-only allocations).
NO_STACK: FrameKey = ("", None, "(no stack recorded)")


def text(value: Any) -> str:
    """A frame's field as text: a string as it is, a number or a bool written out, anything
    else "?" (a container could be nested a thousand deep or shared into megabytes)."""
    if type(value) is str:
        return value
    if type(value) is int:
        return str(value) if -MAX_INT_TEXT < value < MAX_INT_TEXT else "?"
    if type(value) in (float, bool) or value is None:
        return str(value)
    return "?"


def frame_view(frame: Any) -> SnapshotFrame:
    if not isinstance(frame, dict):
        return {"filename": "?", "line": None, "name": "?", "fx": None}
    line = frame.get("line")
    fx = None
    if len(frame) > 3:  # only augmented frames have keys beyond filename, line, name
        fx = {k: text(v) for k, v in frame.items() if type(k) is str and k.startswith("fx_")}
    return {
        "filename": text(frame.get("filename", "?")),
        "line": line if type(line) is int and abs(line) < MAX_INT_TEXT else None,
        "name": text(frame.get("name", "?")),
        "fx": fx or None,
    }


def _frame_key(frame: Any) -> FrameKey:
    if not isinstance(frame, dict):
        return ("?", None, "?")
    line = frame.get("line")
    return (
        text(frame.get("filename", "?")),
        line if type(line) is int and abs(line) < MAX_INT_TEXT else None,
        text(frame.get("name", "?")),
    )


def stack_key(frames: Any) -> tuple[FrameKey, ...]:
    return tuple(map(_frame_key, frames)) if isinstance(frames, list) else ()


def group_by_stack(
    live: Iterable[tuple[int, Any]],
) -> list[tuple[tuple[FrameKey, ...], Any, int, int]]:
    """(size, frames) pairs grouped by stack: (key, frames, bytes, count), largest first
    (ties: more allocations first, then the stack's text, so the order is stable)."""
    groups: dict[tuple[FrameKey, ...], list[Any]] = {}
    keys: dict[int, tuple[FrameKey, ...]] = {}  # by the frames list: torch shares them
    held = []  # the lists keyed by id stay alive while their ids are used
    for size, frames in live:
        key = keys.get(id(frames))
        if key is None:
            key = keys[id(frames)] = stack_key(frames)
            held.append(frames)
        group = groups.get(key)
        if group is None:
            groups[key] = [frames, size, 1]
        else:
            group[1] += size
            group[2] += 1
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1][1], -kv[1][2], repr(kv[0])))
    return [(key, g[0], g[1], g[2]) for key, g in ordered]


def top_stacks(groups: list[tuple[tuple[FrameKey, ...], Any, int, int]]) -> list[StackBytes]:
    out: list[StackBytes] = []
    for _, frames, size, count in groups[:TOP_STACKS]:
        views, cut = frame_views(frames)
        out.append({"frames": views, "frames_cut": cut, "bytes": size, "count": count})
    return out


def frame_views(frames: Any) -> tuple[list[SnapshotFrame], int]:
    """The first MAX_FRAMES frames as views, and how many more there are."""
    if not isinstance(frames, list):
        return [], 0
    return [frame_view(f) for f in frames[:MAX_FRAMES]], max(0, len(frames) - MAX_FRAMES)


def icicle(groups: list[tuple[tuple[FrameKey, ...], Any, int, int]]) -> list[IcicleNode]:
    """The stacks as a tree from the outermost frame down, in depth-first order with the
    largest child first; a node under ICICLE_MIN_SHARE of the total is left out (its
    bytes stay in its parent's)."""
    total = sum(g[2] for g in groups)
    if total <= 0:
        return []
    tree: dict[FrameKey, Any] = {}
    for key, _, size, _ in groups:
        level = tree
        for frame in reversed(key or (NO_STACK,)):  # outermost first
            node = level.setdefault(frame, [0, {}])
            node[0] += size
            level = node[1]
    floor = total * ICICLE_MIN_SHARE
    out: list[IcicleNode] = []
    todo: list[tuple[int, int, FrameKey, Any]] = [
        (-1, 0, k, v) for k, v in _largest_first(tree)[::-1]
    ]
    while todo and len(out) < ICICLE_MAX_NODES:
        parent, depth, (filename, line, name), (size, children) = todo.pop()
        if size < floor:
            continue
        index = len(out)
        out.append(
            {
                "parent": parent,
                "depth": depth,
                "filename": filename,
                "line": line,
                "name": name,
                "bytes": size,
            }
        )
        todo.extend((index, depth + 1, k, v) for k, v in _largest_first(children)[::-1])
    return out


def _largest_first(level: dict[FrameKey, Any]) -> list[tuple[FrameKey, Any]]:
    return sorted(level.items(), key=lambda kv: (-kv[1][0], repr(kv[0])))
