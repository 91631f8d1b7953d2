"""`kinetoscope report --format text`: the `memory_snapshot` view (per snapshot file and
device: peak, allocated vs reserved, OOMs, the largest stacks at the peak); registered in
`report_text.RENDERERS`."""

from __future__ import annotations

from typing import Any

from .report_text import DEFAULT_WIDTH, RENDERERS, Column, _mib, _or_dash, _rows_table, _wrap

_DEVICE_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("peak MiB", "peak_allocated_bytes", _mib),
    ("allocated MiB", "allocated_bytes_at_snapshot", _mib),
    ("reserved MiB", "reserved_bytes", _mib),
    ("inactive MiB", "inactive_bytes", _mib),
    ("OOMs", "oom_count", str),
    ("entries", "history_entries", str),
]

_OOM_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("asked MiB", "requested_bytes", _mib),
    ("device free MiB", "device_free", _mib),
    ("where", "where", str),
]

_STACK_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("MiB", "bytes", _mib),
    ("allocs", "count", str),
    ("allocated at (innermost first)", "where", str),
]


def _where(frames: list[dict[str, Any]]) -> str:
    if not frames:
        return "(no stack recorded)"
    shown = [f"{f['name']} ({f['filename'].rsplit('/', 1)[-1]}:{f['line']})" for f in frames[:3]]
    return " < ".join(shown)


def _alignment_line(alignment: dict[str, Any] | None) -> str | None:
    if alignment is None:
        return None
    where = f"worker {alignment['worker']} span {alignment['span']}"
    if alignment["state"] != "aligned":
        return f"not aligned with {where}: {alignment['reason']}"
    offset = _or_dash(lambda us: f"{us:.0f} us")(alignment["clock_offset_us"])
    matched = alignment["matched_allocations"]
    return f"aligned with {where}: {matched} allocations matched, clock offset {offset}"


def render_memory_snapshot(view: dict[str, Any], width: int = DEFAULT_WIDTH) -> str:
    blocks = []
    for snapshot in view["snapshots"]:
        head = f"-- memory snapshot {snapshot['file']}"
        if snapshot["error"]:
            blocks.append(head + "\n" + _wrap(snapshot["error"], width, "   error: "))
            continue
        devices = snapshot["devices"]
        parts = [head, _rows_table(_DEVICE_COLUMNS, devices, width)]
        line = _alignment_line(snapshot["alignment"])
        if line:
            parts.append(_wrap(line, width, "   "))
        ooms = [
            {**o, "device": d["device"], "where": _where(o["frames"])}
            for d in devices
            for o in d["ooms"]
        ]
        if ooms:
            parts += ["out of memory:", _rows_table(_OOM_COLUMNS, ooms, width)]
        stacks = [
            {**s, "device": d["device"], "where": _where(s["frames"])}
            for d in devices
            for s in d["top_stacks_at_peak"][:5]
        ]
        if stacks:
            parts += ["largest stacks at the peak:", _rows_table(_STACK_COLUMNS, stacks, width)]
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)


RENDERERS["memory_snapshot"] = render_memory_snapshot
