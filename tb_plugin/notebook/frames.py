"""JSON views and models as pandas DataFrames: the one conversion every frame method uses.

pandas is imported inside these functions, not at module import: `import kinetoscope`
(which TensorBoard does at start-up) and `kinetoscope.open` stay without it.

A view's list of rows becomes a frame the same way for every route: one row per item,
one column per field, a nested object's fields as `parent.child` columns (the JSON path),
lists kept as Python lists in object columns, `null` as None (NaN in float columns). The
view's other top-level fields that are plain values (numbers, text, lists of them) go to
`frame.attrs`, so the totals a route answers beside its rows stay with them.
"""

from __future__ import annotations

import importlib.util
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..api.lower import EVENT_COLUMNS, Kind, Phase, TraceModel, flatten, plain_fields

if TYPE_CHECKING:
    import pandas as pd

# Model columns that are codes into one of the model's tables (shown as categoricals).
_INTERNED = {"cat": "categories", "name": "names", "pid": "pids", "tid": "tids"}
_ENUMS: dict[str, Any] = {"ph": Phase, "kind": Kind}
_INTERNAL = ("args_end",)  # offsets into the args blob: no meaning outside the model


def require_pandas() -> None:
    """pandas is the notebook extra's (`kinetoscope[notebook]`): say so before any work,
    without importing it (the first frame does)."""
    if importlib.util.find_spec("pandas") is None:
        raise ImportError(
            "kinetoscope.open gives DataFrames and needs pandas: "
            "pip install 'kinetoscope[notebook]'"
        )


def rows_frame(view: Mapping[str, Any], key: str, response: Any) -> pd.DataFrame:
    """`view[key]` (a list of objects) as a frame, the view's plain top-level values in
    `attrs`. `response` is the view's response type (a TypedDict): it names the columns
    when there are no rows, and which top-level fields are plain."""
    import pandas as pd

    records = [flatten(row) for row in view[key]]
    if records:
        columns = _columns(records)
    else:
        (row_type,) = typing.get_args(typing.get_type_hints(response)[key])
        columns = list(typing.get_type_hints(row_type))
    frame = pd.DataFrame.from_records(records, columns=columns)
    frame.attrs.update(plain_fields(view, response, exclude=(key,)))
    return frame


def _columns(records: Sequence[dict[str, Any]]) -> list[str]:
    """Every column any row has, in first-seen order. A field that is an object in some
    rows and null in others appears only as the object's columns (None where null)."""
    seen = dict.fromkeys(name for record in records for name in record)
    nested = {name.split(".", 1)[0] for name in seen if "." in name}
    return [name for name in seen if name not in nested]


def breakdown_frame(view: Mapping[str, Any], response: Any) -> pd.DataFrame:
    """The `overview` route's step-time parts, one row each (index `part`, in the route's
    order): `total_us` over all steps, `average_us` per step."""
    import pandas as pd

    totals, averages = view["breakdown_us"], view["average_breakdown_us"]
    frame = pd.DataFrame(
        {"total_us": list(totals.values()), "average_us": [averages[p] for p in totals]},
        index=pd.Index(list(totals), name="part"),
    )
    frame.attrs.update(plain_fields(view, response))
    return frame


def events_frame(model: TraceModel) -> pd.DataFrame:
    """One row per model event (index: the model's row, as routes name events); interned
    columns as categoricals of the model's tables, numeric columns without a copy, and
    `ts_ns`/`dur_ns` as exact int64 nanoseconds beside `ts`/`dur` (µs, as in the file)."""
    import pandas as pd

    columns: dict[str, Any] = {}
    # The columns in the model's order, a sparse one made a value per row (a copy).
    for name in [n for n in EVENT_COLUMNS if n in model.events or n in model.sparse]:
        if name in _INTERNAL:
            continue
        values = model.full_column(name)
        if name in _INTERNED:
            table = getattr(model, _INTERNED[name])
            columns[name] = pd.Categorical.from_codes(
                values, categories=pd.Index(table, dtype=object if name in ("pid", "tid") else None)
            )
        elif name in _ENUMS:
            labels = [member.name.lower() for member in _ENUMS[name]]
            columns[name] = pd.Categorical.from_codes(values, categories=labels)
        else:
            columns[name] = np.asarray(values)  # a cached column's memmap as a plain view
        if name in ("ts", "dur"):
            columns[f"{name}_ns"] = nanoseconds(values)
    frame = pd.DataFrame(columns, copy=False)
    frame.index.name = "row"
    frame.attrs["time_origin_ns"] = time_origin_ns(model)
    return frame


def nanoseconds(us: np.ndarray) -> Any:
    """Microsecond floats as int64 nanoseconds, exact to what the float holds: the whole
    microseconds and the fraction are converted apart, so epoch times (~1.7e15 µs) do not
    lose digits in a product. Missing (NaN) values make a nullable Int64 array."""
    missing = np.isnan(us)
    some_missing = bool(missing.any())
    known = np.where(missing, 0.0, us) if some_missing else us
    whole = np.floor(known)
    ns = whole.astype(np.int64) * 1000 + np.rint((known - whole) * 1000.0).astype(np.int64)
    if not some_missing:
        return ns
    import pandas as pd

    return pd.arrays.IntegerArray(ns, missing)


def time_origin_ns(model: TraceModel) -> int:
    """What to add to `ts_ns` for epoch nanoseconds (a 2024+ trace's base; else 0)."""
    base = model.header.get("baseTimeNanoseconds")
    return int(base) if isinstance(base, (int, float)) else 0


def whole_path(fetch: Callable[[int], dict[str, Any]], key: str, total: str) -> dict[str, Any]:
    """A paged path's view with every page's `key` items joined: `fetch(offset)` answers
    the page at `offset`; `total` names the count of every page."""
    view = fetch(0)
    items = list(view[key])
    while 0 < len(items) < view[total]:
        more = fetch(len(items))[key]
        if not more:
            break
        items += more
    return {**view, key: items}
