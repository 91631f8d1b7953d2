"""A collective's facts (`CallFacts.fill`) asked of its helpers only where their args are
present: the same facts as asking every helper of every args, for any args (present,
absent, malformed), filled along a chain of a kernel and its ops."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from kinetoscope.analysis.core.comm_facts import (
    P2P_PEER_OPS,
    CallFacts,
    CommArgs,
    _bytes_of,
    _comms_id,
    _rank_list,
    _size_ratio,
)
from kinetoscope.analysis.core.rules import collective_type
from kinetoscope.ingest.values import lenient_int


def _every_helper_asked(facts: CallFacts, args: CommArgs, name: str | None) -> None:
    """The rule as first written: each fact still unknown asks its helper, whatever
    the args hold (the reference the guarded `fill` is held to)."""
    if name is None and args == CommArgs():
        return
    if facts.kind is None:
        if isinstance(args.collective, str):
            facts.kind = collective_type(args.collective)
        if facts.kind is None and name is not None:
            facts.kind = collective_type(name)
    if facts.pg is None and args.pg_name is not None and not isinstance(args.pg_name, bool):
        facts.pg = str(args.pg_name)
    if facts.seq is None:
        facts.seq = lenient_int(args.seq if args.seq is not None else args.seq_lower)
    if facts.comms_id is None:
        facts.comms_id = _comms_id(args.comms_id)
    if facts.nbytes is None:
        facts.nbytes = _bytes_of(args)
    if facts.group_size is None:
        facts.group_size = lenient_int(args.group_size)
    if facts.size_ratio is None:
        facts.size_ratio = _size_ratio(args)
    if facts.dst is None and facts.src is None:
        facts.dst, facts.src = lenient_int(args.dst_rank), lenient_int(args.src_rank)
    side = P2P_PEER_OPS.get(name or "")
    if side and facts.peer is None and isinstance(args.concrete, list):
        local = lenient_int(args.concrete[2]) if len(args.concrete) > 2 else None
        facts.peer = (side, local) if local is not None and local >= 0 else None
    if facts.group is None and args.pg_name is not None:
        ranks = _rank_list(args, facts.group_size)
        desc = args.pg_desc if isinstance(args.pg_desc, str) else None
        if ranks is not None or desc is not None:
            facts.group = (desc, ranks)


_NUMBERS = st.one_of(
    st.none(), st.integers(-3, 1 << 20), st.sampled_from(["12", "0x1f", "x", "", 2.5, True])
)
_DIMS = st.one_of(
    st.none(),
    st.just([]),
    st.lists(st.lists(st.integers(0, 64), max_size=3), max_size=3),
    st.just([[[4], [8]], [32]]),
    st.just("[[4, 8]]"),
)
_TYPES = st.one_of(st.none(), st.just([]), st.lists(st.sampled_from(["float", "c10::Half", "?"])))
_LISTED = st.just([2, 3])  # a list where the text is written
_TEXT = st.one_of(st.none(), st.sampled_from(["0", "default_pg", "1"]), st.booleans(), st.just(7))


def _args() -> st.SearchStrategy[CommArgs]:
    return st.builds(
        CommArgs,
        collective=st.one_of(st.none(), st.sampled_from(["allreduce", "send", "nothing", 3])),
        in_nelems=_NUMBERS,
        dtype=st.one_of(st.none(), st.sampled_from(["Float", "BFloat16", "??"])),
        group_size=_NUMBERS,
        pg_name=_TEXT,
        seq=_NUMBERS,
        seq_lower=_NUMBERS,
        comms_id=st.one_of(_NUMBERS, st.just(-1), st.just("123")),
        input_dims=_DIMS,
        input_dims_old=_DIMS,
        input_type=_TYPES,
        input_type_old=_TYPES,
        pg_desc=st.one_of(st.none(), st.just("mesh_tp"), st.just(1)),
        pg_ranks=st.one_of(st.none(), st.sampled_from(["[0, 1]", "[0, ...]", "[a]"]), _LISTED),
        rank_start=_NUMBERS,
        rank_stride=_NUMBERS,
        src_rank=_NUMBERS,
        dst_rank=_NUMBERS,
        concrete=st.one_of(st.none(), st.lists(st.one_of(st.just(""), _NUMBERS), max_size=4)),
    )


_NAMES = st.one_of(st.none(), st.sampled_from(["c10d::send", "c10d::recv_", "nccl:all_reduce"]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_args(), _NAMES), min_size=1, max_size=3))
def test_fill_gives_what_asking_every_helper_gives(chain: list[tuple[CommArgs, Any]]) -> None:
    guarded, reference = CallFacts(), CallFacts()
    for args, name in chain:
        guarded.fill(args, name)
        _every_helper_asked(reference, args, name)
    assert guarded == reference


def test_a_kernel_and_its_op_fill_the_facts() -> None:
    facts = CallFacts()
    facts.fill(CommArgs(), None)  # the kernel's args say nothing
    facts.fill(
        CommArgs(
            collective="allreduce", in_nelems=1024, dtype="BFloat16", group_size=8,
            pg_name="1", seq=3, pg_desc="mesh_tp", pg_ranks="[0, 1, 2, 3, 4, 5, 6, 7]",
        ),
        "record_param_comms",
    )  # fmt: skip
    assert (facts.kind, facts.pg, facts.seq, facts.nbytes, facts.group_size) == (
        "all_reduce", "1", 3, 2048, 8,
    )  # fmt: skip
    assert facts.group == ("mesh_tp", tuple(range(8)))
    assert (facts.dst, facts.src, facts.size_ratio, facts.comms_id) == (None, None, None, None)
