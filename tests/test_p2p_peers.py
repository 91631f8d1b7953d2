"""A send's or receive's peer as a global rank, from the group rank its c10d op was given
(`analysis/core/comms.py`, `_peer_to_global`): through the call's named group, or the one
group a trace lists; unknown where the trace's groups leave it open."""

from __future__ import annotations

from kinetoscope.analysis.core.comm_facts import CallFacts
from kinetoscope.analysis.core.comms import _peer_to_global

GROUPS = {"0": [0, 1, 2, 3], "5": [2, 3]}


def _peer(side: str, local: int, pg: str | None, groups: dict[str, list[int]]) -> tuple:
    f = CallFacts(pg=pg, peer=(side, local))
    _peer_to_global(f, groups)
    return f.dst, f.src


def test_a_named_group_maps_its_rank_to_the_global_one() -> None:
    assert _peer("dst", 1, "5", GROUPS) == (3, None)
    assert _peer("src", 0, "5", GROUPS) == (None, 2)


def test_a_call_of_no_named_group_in_a_job_of_one_group_is_that_groups() -> None:
    assert _peer("dst", 1, None, {"0": [0, 1]}) == (1, None)


def test_a_call_of_no_named_group_among_several_has_no_known_peer() -> None:
    assert _peer("dst", 1, None, GROUPS) == (None, None)
    assert _peer("dst", 7, "5", GROUPS) == (None, None)  # beyond the group


def test_the_args_own_peer_is_kept() -> None:
    f = CallFacts(pg="5", peer=("dst", 0), dst=9)
    _peer_to_global(f, GROUPS)
    assert (f.dst, f.src) == (9, None)
