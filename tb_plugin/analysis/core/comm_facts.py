"""What a collective's args say of it (`CallFacts`): its type, process group, sequence
number, bytes, group size and peer, filled from the kernel's own args, then from the
communication ops around its launch, innermost first (`comms.py`: which args, in which
order)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np

from ...ingest.values import lenient_int
from .rules import collective_type, dtype_size

RATIO_KINDS = ("all_gather", "reduce_scatter")  # output = group size x input (or input = ...)


class CommArgs(msgspec.Struct, gc=False):
    """Args of communication ops and kernels that say what the collective is."""

    collective: Any = msgspec.field(default=None, name="Collective name")
    in_nelems: Any = msgspec.field(default=None, name="In msg nelems")
    dtype: Any = None
    group_size: Any = msgspec.field(default=None, name="Group size")
    pg_name: Any = msgspec.field(default=None, name="Process Group Name")
    seq: Any = msgspec.field(default=None, name="Seq")
    seq_lower: Any = msgspec.field(default=None, name="seq")
    # A hash of the call's group, sequence number, point-to-point flag, rank start/stride
    # and world size (PyTorch 2.12+, Kineto's `Comms Id`): the same on every rank's copy.
    comms_id: Any = msgspec.field(default=None, name="Comms Id")
    input_dims: Any = msgspec.field(default=None, name="Input Dims")
    input_dims_old: Any = msgspec.field(default=None, name="Input dims")
    input_type: Any = msgspec.field(default=None, name="Input type")
    input_type_old: Any = msgspec.field(default=None, name="Input types")
    pg_desc: Any = msgspec.field(default=None, name="Process Group Description")
    pg_ranks: Any = msgspec.field(default=None, name="Process Group Ranks")
    rank_start: Any = msgspec.field(default=None, name="Global rank start")
    rank_stride: Any = msgspec.field(default=None, name="Global rank stride")
    src_rank: Any = msgspec.field(default=None, name="Src Rank")
    dst_rank: Any = msgspec.field(default=None, name="Dst Rank")
    concrete: Any = msgspec.field(default=None, name="Concrete Inputs")


# c10d's point-to-point ops name their peer in their third argument, a rank of the call's
# process group (torch/csrc/distributed/c10d/Ops.cpp: `send(tensors, process_group, dstRank,
# tag)`, `recv_(tensors, process_group, srcRank, tag)`), recorded with `record_shapes` as
# `Concrete Inputs`: gloo's sends and receives carry no `Dst Rank` / `Src Rank` of their own.
P2P_PEER_OPS = {"c10d::send": "dst", "c10d::recv_": "src"}


def _first_tensor_elements(dims: Any) -> int | None:
    """Elements of the first tensor argument: `[[4, 8], ...]` or a TensorList `[[[4], [8]]]`."""
    if not isinstance(dims, list) or not dims:
        return None
    first = dims[0]
    if not isinstance(first, list) or not first:
        return None
    if all(isinstance(d, int) for d in first):
        return int(np.prod(first, dtype=np.int64))
    if all(isinstance(t, list) and all(isinstance(d, int) for d in t) for t in first):
        return int(sum(int(np.prod(t, dtype=np.int64)) for t in first if t))
    return None


def _bytes_of(args: CommArgs) -> int | None:
    nelems = lenient_int(args.in_nelems)
    if nelems is not None and isinstance(args.dtype, str):
        size = dtype_size(args.dtype)
        if size is not None:
            return nelems * size
    dims = args.input_dims if args.input_dims is not None else args.input_dims_old
    types = args.input_type if args.input_type is not None else args.input_type_old
    elements = _first_tensor_elements(dims)
    if elements is not None and isinstance(types, list) and types and isinstance(types[0], str):
        size = dtype_size(types[0])
        if size is not None:
            return elements * size
    return None


def _size_ratio(args: CommArgs) -> int | None:
    """An op taking (output, input) of different sizes (`c10d::_allgather_base_`,
    `_reduce_scatter_base_`): the larger over the smaller, when it divides exactly."""
    dims = args.input_dims if args.input_dims is not None else args.input_dims_old
    if not isinstance(dims, list) or len(dims) < 2:
        return None
    a, b = (_first_tensor_elements([d]) for d in dims[:2])
    if not a or not b or a == b or max(a, b) % min(a, b):
        return None
    return max(a, b) // min(a, b)


def group_size_of(f: CallFacts) -> tuple[int, int]:
    """(group size, its source): the `Group size` arg (1), else for all_gather and
    reduce_scatter the ratio of its output and input (2), else unknown (-1, 0)."""
    if f.group_size is not None:
        return f.group_size, 1
    if f.size_ratio is not None and f.kind in RATIO_KINDS:
        return f.size_ratio, 2
    return -1, 0


@dataclass
class GroupFacts:
    """A process group as its collectives' args describe it (`pg_config` may be absent)."""

    description: str | None = None
    ranks: list[int] | None = None


@functools.lru_cache(maxsize=256)
def _listed_ranks(text: str) -> tuple[int, ...] | None:
    """The ranks of a whole `Process Group Ranks` text, None when one is not a number.
    Cached: every call of a group carries the same text (2,048 numbers for a world group)."""
    items = [lenient_int(x) for x in text.strip("[] ").split(",") if x.strip()]
    if items and all(x is not None for x in items):
        return tuple(int(x) for x in items if x is not None)
    return None


def _rank_list(args: CommArgs, size: int | None) -> tuple[int, ...] | None:
    """`Process Group Ranks` is a string "[0, 1]" (PyTorch truncates long lists with "...");
    a truncated or missing list is rebuilt from `Global rank start`/`stride` and the size.
    A tuple, shared: a call's group is listed only for the first call of it
    (`_groups_of`), so the others make no list of its ranks (a world group's is 2,048)."""
    text = args.pg_ranks
    if isinstance(text, list):
        text = str(text)
    if isinstance(text, str) and "..." not in text:
        listed = _listed_ranks(text)
        if listed is not None:
            return listed
    start, stride = lenient_int(args.rank_start), lenient_int(args.rank_stride)
    if start is not None and start >= 0 and stride is not None and stride > 0 and size:
        return tuple(range(start, start + stride * size, stride))
    return None


_NO_ARGS = CommArgs()


@dataclass
class CallFacts:
    kind: str | None = None
    pg: str | None = None
    seq: int | None = None
    comms_id: int | None = None
    nbytes: int | None = None
    group_size: int | None = None
    size_ratio: int | None = None  # larger over smaller of the first two tensors
    dst: int | None = None
    src: int | None = None
    group: tuple[str | None, tuple[int, ...] | None] | None = None  # description, ranks
    peer: tuple[str, int] | None = None  # ("dst" or "src", a rank of the call's group)

    def fill(self, args: CommArgs, name: str | None) -> None:
        """The facts still unknown, from `args` (and the op's `name`). A helper is asked
        only where its args are present: absent, each would answer None (a job's
        collectives fill tens of thousands of these)."""
        if name is None and args == _NO_ARGS:  # a kernel whose args say nothing of it
            return
        if self.kind is None:
            if isinstance(args.collective, str):
                self.kind = collective_type(args.collective)
            if self.kind is None and name is not None:
                self.kind = collective_type(name)
        if self.pg is None and args.pg_name is not None and not isinstance(args.pg_name, bool):
            self.pg = str(args.pg_name)
        if self.seq is None:
            seq = args.seq if args.seq is not None else args.seq_lower
            self.seq = lenient_int(seq) if seq is not None else None
        if self.comms_id is None and args.comms_id is not None:
            self.comms_id = _comms_id(args.comms_id)
        has_dims = args.input_dims is not None or args.input_dims_old is not None
        if self.nbytes is None and (args.in_nelems is not None or has_dims):
            self.nbytes = _bytes_of(args)
        if self.group_size is None and args.group_size is not None:
            self.group_size = lenient_int(args.group_size)
        if self.size_ratio is None and has_dims:
            self.size_ratio = _size_ratio(args)
        has_peer = args.dst_rank is not None or args.src_rank is not None
        if self.dst is None and self.src is None and has_peer:
            self.dst, self.src = lenient_int(args.dst_rank), lenient_int(args.src_rank)
        if name in P2P_PEER_OPS and self.peer is None and isinstance(args.concrete, list):
            side = P2P_PEER_OPS[name]
            local = lenient_int(args.concrete[2]) if len(args.concrete) > 2 else None
            self.peer = (side, local) if local is not None and local >= 0 else None
        if self.group is None and args.pg_name is not None:
            ranks = _rank_list(args, self.group_size)
            desc = args.pg_desc if isinstance(args.pg_desc, str) else None
            if ranks is not None or desc is not None:
                self.group = (desc, ranks)


def _comms_id(value: Any) -> int | None:
    """`Comms Id` as an unsigned 64-bit hash (written as a number, or its text); None
    when absent, 0 or not one."""
    if isinstance(value, str):
        value = int(value) if value.strip().isdigit() else None
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value % (1 << 64) or None
