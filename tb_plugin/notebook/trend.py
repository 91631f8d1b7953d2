"""`kinetoscope.trend(logdir)`: the `trend` route's JSON in a notebook, its lists as
DataFrames. The same function as the route's background job, over the same disk cache, so
a logdir seen by the server or `kinetoscope trend` is not summarised again."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..api.dispatch import Dispatch
from ..api.endpoints import LOGDIR_VIEWS
from ..api.session import FixedListing, Session, list_target, no_traces_message
from .frames import require_pandas, rows_frame

if TYPE_CHECKING:
    import pandas as pd


class Trend:
    """`view`: the route's JSON; `runs()`, `regressions()`, `improvements()`: its lists as
    frames (one row per run, per change; the rule's settings in `attrs`)."""

    def __init__(self, view: dict[str, Any]) -> None:
        self.view = view

    def __repr__(self) -> str:
        v = self.view
        return (
            f"<kinetoscope Trend: {len(v['runs'])} runs, {len(v['regressions'])} regressions, "
            f"{len(v['improvements'])} improvements>"
        )

    def _frame(self, key: str) -> pd.DataFrame:
        frame = rows_frame(self.view, key, LOGDIR_VIEWS["trend"].response)
        frame.attrs.update({f"rule.{k}": v for k, v in self.view["rule"].items()})
        return frame

    def runs(self) -> pd.DataFrame:
        return self._frame("runs")

    def regressions(self) -> pd.DataFrame:
        return self._frame("regressions")

    def improvements(self) -> pd.DataFrame:
        return self._frame("improvements")


def open_trend(path: str, params: dict[str, Any], cache: bool = True) -> Trend:
    require_pandas()
    runs = list_target(path)[2]
    if not runs:
        raise FileNotFoundError(no_traces_message(path))
    query = {k: str(v) for k, v in params.items() if v is not None}
    session = Session(FixedListing(runs), cache)
    try:
        view = Dispatch(LOGDIR_VIEWS["trend"], session, {}, query).ready().json()
    finally:
        session.close()
    return Trend(view)
