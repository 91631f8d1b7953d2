"""The serving view's notebook frames: its phases as a frame, one row per phase (index
`phase`, in the route's order), a statistic's parts as `dur_us.median`-style columns, the
class breakdown as `classes_us.<class>` columns. The endpoint names it (`frames`), the
notebook finds it there."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core.frame_fields import flatten, plain_fields
from .types import PhaseStats, ServingView

if TYPE_CHECKING:
    import pandas as pd


def phases_frame(view: Mapping[str, Any]) -> pd.DataFrame:
    import pandas as pd

    records = [flatten(stats) for stats in view["phases"].values()]
    columns = list(records[0]) if records else list(typing.get_type_hints(PhaseStats))
    frame = pd.DataFrame.from_records(
        records, columns=columns, index=pd.Index(list(view["phases"]), name="phase")
    )
    frame.attrs.update(plain_fields(view, ServingView))
    return frame
