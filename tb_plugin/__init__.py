"""kinetoscope: PyTorch profiler (Kineto) traces in TensorBoard, and in notebooks."""

# No `from __future__ import annotations` and only underscored helper names here: a user's
# `dir(kinetoscope)` lists what this module defines, and it should list `open`, not typing.
import typing as _typing

if _typing.TYPE_CHECKING:
    from os import PathLike

    from .notebook import Run
    from .notebook.trend import Trend

__all__ = ["open", "trend"]
__version__ = "0.1.0"


def open(path: "str | PathLike[str]", run: "str | None" = None, cache: bool = True) -> "Run":
    """A run of traces as pandas DataFrames, one per view (docs/python_api.md).

    `path` is a run folder, a logdir with `run=` naming one of its runs, or one trace file
    (local, or an object-store URL such as `s3://bucket/logs/job`). `cache=False` neither
    reads nor writes the disk cache.
    """
    # Imported on first use: TensorBoard imports this package at start-up, and neither the
    # analyses nor pandas should load then.
    from .notebook import open_run

    return open_run(str(path), run, cache)


def trend(
    logdir: "str | PathLike[str]",
    baseline: "str | None" = None,
    span: "str | None" = None,
    window: "int | None" = None,
    floor_pct: "float | None" = None,
    cache: bool = True,
) -> "Trend":
    """What changed across the runs of `logdir` (docs/trends.md): `.runs()`,
    `.regressions()`, `.improvements()` as DataFrames, `.view` the `trend` route's JSON.
    `baseline` compares every run with that run instead of the rolling baseline."""
    from .notebook.trend import open_trend

    params = {"baseline": baseline, "span": span, "window": window, "floor_pct": floor_pct}
    return open_trend(str(logdir), params, cache)
