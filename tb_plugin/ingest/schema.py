"""Typed shapes msgspec decodes trace events into.

Decoding into these Structs (instead of dicts) is what makes ingest fast: msgspec skips
unknown keys without building objects. `args` is kept raw in the first pass; a second
pass reads only the few args every view needs (`CoreArgs`); the rest stay raw bytes and
are parsed lazily, for the few events a view asks about.
"""

from __future__ import annotations

from typing import Union

import msgspec

# Defaults are the sentinels the columns use (-1, NaN), so a batch of values converts to
# a numpy array in one C call; only odd values (strings) take the slow path.
Scalar = Union[int, str, None]
Number = Union[float, str, None]
NAN = float("nan")


class Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: Union[str, None] = None
    name: Union[str, int, float, None] = None
    pid: Scalar = None
    tid: Scalar = None
    ts: Number = NAN
    dur: Number = 0.0
    id: Scalar = -1
    bp: Union[str, None] = None
    args: msgspec.Raw = msgspec.Raw()


class CoreArgs(msgspec.Struct, gc=False):
    """Args read for every event at ingest; names as libkineto and torch write them."""

    external_id: Scalar = msgspec.field(default=-1, name="External id")
    external_id_lower: Scalar = msgspec.field(default=-1, name="external id")
    correlation: Scalar = -1
    device: Scalar = -1
    stream: Scalar = -1
    blocks_per_sm: Number = msgspec.field(default=NAN, name="blocks per SM")
    occupancy: Number = msgspec.field(default=NAN, name="est. achieved occupancy %")
    nbytes: Number = msgspec.field(default=NAN, name="Bytes")
    addr: Scalar = msgspec.field(default=-1, name="Addr")
    device_type: Scalar = msgspec.field(default=-1, name="Device Type")
    device_id: Scalar = msgspec.field(default=-1, name="Device Id")
    total_allocated: Number = msgspec.field(default=NAN, name="Total Allocated")
    total_reserved: Number = msgspec.field(default=NAN, name="Total Reserved")
    # Kept raw (not decoded to text): only whether an op has a stack is a column.
    call_stack: msgspec.Raw = msgspec.field(default=msgspec.Raw(), name="Call stack")
    # Metadata events (ph "M") carry the process/thread name here.
    name: Union[str, int, None] = None
    sort_index: Scalar = None
    labels: Union[str, None] = None


class PythonIds(msgspec.Struct, gc=False):
    """The ids a `python_function` event's args link it to its caller by (torch 2.x)."""

    id: Union[int, None] = msgspec.field(default=None, name="Python id")
    parent: Union[int, None] = msgspec.field(default=None, name="Python parent id")


# Top-level key `kinetoscope.handlers` adds: the recording interpreter's path prefixes
# (what torch's Python tracer strips from frame files), read by `trace_view/source_paths`.
PYTHON_PATH_PREFIXES = "python_path_prefixes"


class TraceHeader(msgspec.Struct):
    """Top-level keys that matter; others are kept as a plain dict by the decoder."""

    schemaVersion: Union[int, str, None] = None
    deviceProperties: Union[list, None] = None
    computeProperties: Union[list, None] = None
    distributedInfo: Union[dict, None] = None
    baseTimeNanoseconds: Union[int, float, None] = None
    displayTimeUnit: Union[str, None] = None
