"""The flame graph's wire types: its query parameters and its response (the TypeScript
types and the docs' examples are checked against them)."""

from __future__ import annotations

from typing import Literal, TypedDict


class FlameGraphParams(TypedDict, total=False):
    metric: Literal["cpu", "gpu"]


class FlameFrame(TypedDict):
    name: str
    # thread, python, op, runtime, captured (a replayed graph node: what it was captured
    # as), kernel, root
    kind: str
    file: str | None
    line: int | None


class FlameGraphView(TypedDict):
    metric: str
    stacks: str | None  # python_function, call_stack_arg, or None: no Python frames
    total_us: float
    no_launcher_us: float | None  # gpu: kernel time under `[no launcher known]`
    frames: list[FlameFrame]
    node_parent: list[int]  # per node: its parent node, -1 for a root
    node_frame: list[int]  # per node: index into `frames`
    node_self_us: list[float]
    node_total_us: list[float]
