"""Independent checkers: each analysis computed again from the raw trace JSON.

Nothing here imports `kinetoscope`. A checker is a second computation written from the
definitions in docs/metrics.md (and docs/distributed.md, docs/trends.md), not from the
product's code, so a disagreement on a real trace of a shape the unit tests lack is a bug in
one of the two. `raw` reads a trace file; each other module computes one analysis.
"""
