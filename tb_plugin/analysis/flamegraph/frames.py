"""The flame graph's notebook frame: one row per node of the merged call paths. The
endpoint names it (`frames`), the notebook finds it there; pandas is imported inside the
function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.frame_fields import plain_fields
from .types import FlameGraphView

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = [
    "node",
    "parent",
    "depth",
    "name",
    "kind",
    "file",
    "line",
    "self_us",
    "total_us",
    "stack",
]


def flame_frame(view: Mapping[str, Any]) -> pd.DataFrame:
    """Per node (pre-order, as the route lists them): its parent node (-1 for a root),
    depth, frame (name, kind, file, line), own and subtree time in µs, and `stack`, the
    frame names from the root joined by `;` (a folded-stack line without its value). The
    route's plain fields (`metric`, `stacks`, `total_us`, `no_launcher_us`) in `attrs`."""
    import pandas as pd

    frames = view["frames"]
    depth: list[int] = []
    stack: list[str] = []
    records = []
    for i, (p, f) in enumerate(zip(view["node_parent"], view["node_frame"])):
        frame = frames[f]
        depth.append(depth[p] + 1 if p >= 0 else 0)
        stack.append(f"{stack[p]};{frame['name']}" if p >= 0 else frame["name"])
        own, total = view["node_self_us"][i], view["node_total_us"][i]
        records.append([i, p, depth[i], frame["name"], frame["kind"], frame["file"],
                        frame["line"], own, total, stack[i]])  # fmt: skip
    out = pd.DataFrame.from_records(records, columns=COLUMNS)
    out["line"] = out["line"].astype("Int64")  # NA: no line known
    nodes = ("node_parent", "node_frame", "node_self_us", "node_total_us")
    out.attrs.update(plain_fields(view, FlameGraphView, exclude=nodes))
    return out
