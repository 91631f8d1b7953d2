"""CUDA-graph kernel annotations (torch 2.13+, `torch.cuda._graph_annotations`): what a
graph-replayed kernel was captured as, named by the code that captured it.

During capture, `mark_kernels(annotation)` scopes (`torch.cuda.graph(...,
enable_annotations=True)`) tag each kernel and memcpy node they create; the annotations
are kept per node as `{toolsId: [annotation, ...]}`, toolsId = (exec graph id << 32) |
node id, which is the kernel's `graph node id` in the trace (CUPTI, CUDA 13.1+). A text
annotation is `{"str": text}`; a dict is kept as given (`module`, `op`, `autograd_phase`,
`stream`, ... as the caller chose). They reach a trace two ways, both read here:

- merged into the kernels' args by `python -m torch.cuda._annotate_cuda_graph_trace`
  (each key's value as text; a non-dict annotation under `annotation`);
- pickled beside the traces as `kernel_annotations_rank<R>_*.pkl`, in the trace's folder
  or the one above it (where torch's merge tool looks for it: `traces/` above
  `traces/step_N/<R>.<id>.pt.trace.json.gz`, R the file name's leading rank). The pickle is
  read as plain data only (`ingest/snapshot.decode_plain`: nothing in it is run), through
  the storage layer, inside the logdir, at most KINETOSCOPE_MAX_SOURCE_MB (16).

A kernel's label: its annotations' `module`, `op`, `autograd_phase` (or `phase`), `name`,
`str` and `annotation` values joined by " · "; other keys as `key=value`; `stream` and
`stack` left out."""

from __future__ import annotations

import os
import re
from typing import Any, Union

import msgspec
import numpy as np

from ...ingest import storage
from ...ingest.limits import env_number
from ...ingest.snapshot import SnapshotError, decode_plain
from ...model.categories import Kind
from ...model.trace_model import TraceModel
from .common import complete_rows
from .ranks import header_rank
from .side_files import MAX_SOURCE_ENV, source_roots

_NAMED = ("module", "op", "autograd_phase", "phase", "name", "str", "annotation")
_LEFT_OUT = {"stream", "stack"}
# Text args libkineto itself writes on GPU activities: never an annotation's.
_PRODUCER_TEXT = {"kind", "src", "dst", "cuda_sync_kind", "name", "limitingFactors"}
_FILE = re.compile(r"kernel_annotations_rank(\d+)_.*\.pkl$")
_MAX_FILES_LISTED = 10_000


class _NodeId(msgspec.Struct, gc=False):
    node: Union[int, None] = msgspec.field(default=None, name="graph node id")


class Annotations(msgspec.Struct):
    """Per kernel row asked, its annotations' fields merged (the inner scope winning; {}:
    none) and its label ("" none); where they came from ("trace args", the pickle's name,
    or None), and why a pickle found was not read."""

    fields: list[dict[str, str]]
    labels: list[str]
    source: Union[str, None]
    unread: Union[str, None] = None


class _Annotated(msgspec.Struct):
    """The trace's annotated kernels (rows sorted), their fields, and where they came from."""

    rows: np.ndarray
    fields: list[dict[str, str]]
    source: Union[str, None]
    unread: Union[str, None]


def kernel_annotations(model: TraceModel, rows: np.ndarray) -> Annotations:
    """The annotations of kernel `rows` (the merged args first, else the pickle beside),
    read once per trace for its kernels (the graph replay and the Kernel view ask both)."""
    every: _Annotated = model.derived("_graph_annotations", _annotated)
    at = np.minimum(np.searchsorted(every.rows, rows), max(every.rows.size - 1, 0))
    found = (every.rows[at] == rows) if every.rows.size else np.zeros(rows.size, bool)
    fields = [every.fields[int(a)] if f else {} for a, f in zip(at.tolist(), found.tolist())]
    source = every.source if any(fields) else None
    return Annotations(fields, [label_from(f) for f in fields], source, every.unread)


def _annotated(model: TraceModel) -> _Annotated:
    rows = complete_rows(model, Kind.KERNEL)
    nodes = np.array(
        [a.node if isinstance(a.node, int) else 0 for a in model.args_of(rows, _NodeId)],
        dtype=np.int64,
    )
    graphed = np.flatnonzero(nodes != 0)
    fields: list[dict[str, str]] = []
    source, unread = None, None
    if graphed.size:
        for args in model.args_of(rows[graphed], dict):
            texts = {k: v for k, v in args.items() if isinstance(v, str)}
            fields.append(fields_of([{k: v for k, v in texts.items() if k not in _PRODUCER_TEXT}]))
        source = "trace args" if any(fields) else None
    if graphed.size and source is None:
        found, name, unread = _pickled(model)
        fields = [fields_of(found.get(int(node), [])) for node in nodes[graphed].tolist()]
        source = name if any(fields) else None
    keep = [i for i, f in enumerate(fields) if f]  # only the annotated ones kept
    return _Annotated(rows[graphed][keep], [fields[i] for i in keep], source, unread)


def annotated_ops(model: TraceModel, rows: np.ndarray) -> list[Union[str, None]]:
    """Per kernel row, the `op` its annotations name (None: none): what the Operator and
    Kernel views name a replayed kernel by when no profiled capture does."""
    return [f.get("op") or None for f in kernel_annotations(model, rows).fields]


def label_of(annotations: list[Any]) -> str:
    """One kernel's annotations (dicts or texts, outermost scope first) as a label."""
    return label_from(fields_of(annotations))


def fields_of(annotations: list[Any]) -> dict[str, str]:
    """One kernel's annotations merged, as text: a later (inner) scope wins on a key, as
    torch's merge tool writes them; a non-dict annotation under `annotation`."""
    fields: dict[str, str] = {}
    for annotation in annotations:
        items = annotation.items() if isinstance(annotation, dict) else [("annotation", annotation)]
        for key, value in items:
            if str(key) not in _LEFT_OUT and value is not None:
                fields[str(key)] = str(value)
    return fields


def label_from(fields: dict[str, str]) -> str:
    named = [fields[k] for k in _NAMED if fields.get(k)]
    others = [f"{k}={v}" for k, v in sorted(fields.items()) if k not in _NAMED]
    return " · ".join(named + others)


def _pickled(model: TraceModel) -> tuple[dict[int, list[Any]], Union[str, None], Union[str, None]]:
    """The pickle beside the trace: {toolsId: annotations}, its name, why not read."""
    path = str(model.source.get("path") or "")
    if not path or storage.is_url(path):
        return {}, None, None
    roots = source_roots(model)
    rank = _rank_of(model, path)
    folder = os.path.dirname(path)
    for where in (folder, os.path.dirname(folder)):
        try:
            names = storage.list_small(where, _MAX_FILES_LISTED, roots)
        except OSError:
            continue
        files = {n: int(m[1]) for n in names if (m := _FILE.match(n))}
        if rank is None and len(set(files.values())) > 1:
            return {}, None, "annotations of several ranks beside a trace that names no rank"
        mine = [n for n, r in files.items() if rank is None or r == rank]
        if mine:
            return _read(os.path.join(where, mine[0]), roots)
    return {}, None, None


def _read(
    path: str, roots: list[str]
) -> tuple[dict[int, list[Any]], Union[str, None], Union[str, None]]:
    name = os.path.basename(path)
    limit = int(env_number(MAX_SOURCE_ENV, 16) * (1 << 20))
    try:
        value = decode_plain(storage.read_small(path, limit, roots))
    except (OSError, SnapshotError) as exc:
        return {}, None, f"{name}: {exc}"
    if not isinstance(value, dict):
        return {}, None, f"{name}: not a map of graph node ids to annotations"
    out = {k: v if isinstance(v, list) else [v] for k, v in value.items() if isinstance(k, int)}
    return out, name, None


def _rank_of(model: TraceModel, path: str) -> Union[int, None]:
    """The trace's rank as torch's merge tool reads it (the file name's leading digits),
    else as its header states it."""
    leading = re.match(r"^(\d+)", os.path.basename(path))
    return int(leading[1]) if leading else header_rank(model.header)


def grouped_labels(
    ann: Annotations, group: np.ndarray, dur: np.ndarray, n: int
) -> list[Union[list[str], None]]:
    """Per group of `n`, the distinct labels of its calls, most time first (None: none)."""
    time: list[dict[str, float]] = [{} for _ in range(n)]
    for i, label in enumerate(ann.labels):
        if label:
            at = time[int(group[i])]
            at[label] = at.get(label, 0.0) + float(dur[i])
    return [sorted(t, key=lambda k: (-t[k], k)) or None for t in time]


def annotation_columns(
    model: TraceModel, rows: np.ndarray, group: np.ndarray, dur: np.ndarray, n: int, replays: bool
) -> tuple[list[Union[list[str], None]], Union[Annotations, None]]:
    """The Kernel view's per-group labels and where they came from; none without replays
    (the args of every kernel are not read for a trace that launches no graph)."""
    if not replays:
        return [None] * n, None
    ann = kernel_annotations(model, rows)
    return grouped_labels(ann, group, dur, n), ann
