"""The flows route's window search (links.pairs_in_window) against the arrows tested one by
one: a real trace's flows, windows from a few µs to the whole trace, every track chosen,
one track, and limits below and above the count."""

from __future__ import annotations

import random

import numpy as np
from corpus import corpus_path
from kinetoscope.ingest.build import build_model
from kinetoscope.trace_view.index import index_of
from kinetoscope.trace_view.links import flow_pairs, pairs_in_window

TRACE = (
    "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz"
)


def test_window_search_equals_testing_every_arrow() -> None:
    model = build_model(str(corpus_path(TRACE)))
    index = index_of(model)
    pairs = flow_pairs(model, index)
    assert len(pairs) > 100
    n_tracks = len(index.tracks)
    used = np.unique(np.concatenate([pairs.src_track, pairs.dst_track]))
    choices = [np.arange(n_tracks)] + [used[i : i + 1] for i in range(used.size)]
    rng = random.Random(11)
    span = index.t_max - index.t_min
    seen = 0
    for i in range(200):
        width = span * 10.0 ** rng.uniform(-5.0, 0.1)
        t0 = index.t_min + rng.uniform(-0.05 * span, span - width)
        t1 = t0 + width
        tracks = choices[i % len(choices)]
        on = np.isin(pairs.src_track, tracks) | np.isin(pairs.dst_track, tracks)
        every = np.flatnonzero((pairs.hi >= t0) & (pairs.lo <= t1) & on)
        limit = rng.choice([1, 5, 100, 10_000])
        chosen, total = pairs_in_window(pairs, t0, t1, tracks, n_tracks, limit)
        assert total == every.size
        assert chosen.tolist() == every[:limit].tolist()
        seen += total
    assert seen > 1000
