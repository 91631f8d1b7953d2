"""`kinetoscope report --format text`: the `memory_snapshot` view (per snapshot file and
device: peak, allocated vs reserved, OOMs, the largest stacks at the peak). The endpoint
names it (`text`), the CLI finds it there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.text_tables import DEFAULT_WIDTH, Column, binary_bytes, mib, or_dash, rows_table, wrap

if TYPE_CHECKING:  # types only: naming them imports no view
    from .snapshot_alignment import SnapshotAlignment
    from .snapshot_frames import SnapshotFrame
    from .snapshot_view import MemorySnapshotResponse

_DEVICE_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("peak MiB", "peak_allocated_bytes", mib),
    ("allocated MiB", "allocated_bytes_at_snapshot", mib),
    ("reserved MiB", "reserved_bytes", mib),
    ("inactive MiB", "inactive_bytes", mib),
    ("OOMs", "oom_count", str),
    ("entries", "history_entries", str),
]

_OOM_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("asked", "requested_bytes", binary_bytes),
    ("device free", "device_free", or_dash(binary_bytes)),
    ("where", "where", str),
]

_STACK_COLUMNS: list[Column] = [
    ("device", "device", str),
    ("MiB", "bytes", mib),
    ("allocs", "count", str),
    ("allocated at (innermost first)", "where", str),
]


def _where(frames: list[SnapshotFrame]) -> str:
    if not frames:
        return "(no stack recorded)"
    shown = [f"{f['name']} ({f['filename'].rsplit('/', 1)[-1]}:{f['line']})" for f in frames[:3]]
    return " < ".join(shown)


def _alignment_line(alignment: SnapshotAlignment | None) -> str | None:
    if alignment is None:
        return None
    where = f"worker {alignment['worker']} span {alignment['span']}"
    if alignment["state"] != "aligned":
        return f"not aligned with {where}: {alignment['reason']}"
    offset = or_dash(lambda us: f"{us:.0f} us")(alignment["clock_offset_us"])
    matched = alignment["matched_allocations"]
    return f"aligned with {where}: {matched} allocations matched, clock offset {offset}"


def render_memory_snapshot(view: MemorySnapshotResponse, width: int = DEFAULT_WIDTH) -> str:
    blocks = []
    for snapshot in view["snapshots"]:
        head = f"-- memory snapshot {snapshot['file']}"
        if snapshot["error"]:
            error = f"{snapshot['error']} [{snapshot.get('error_kind') or 'error'}]"
            blocks.append(head + "\n" + wrap(error, width, "   error: "))
            continue
        devices = snapshot["devices"]
        parts = [head, rows_table(_DEVICE_COLUMNS, devices, width)]
        left_out = snapshot.get("devices_total", len(devices)) - len(devices)
        if left_out > 0:
            parts.append(f"   ({left_out} more devices left out)")
        line = _alignment_line(snapshot["alignment"])
        if line:
            parts.append(wrap(line, width, "   "))
        ooms = [
            {**o, "device": d["device"], "where": _where(o["frames"])}
            for d in devices
            for o in d["ooms"]
        ]
        if ooms:
            parts += ["out of memory:", rows_table(_OOM_COLUMNS, ooms, width)]
        stacks = [
            {**s, "device": d["device"], "where": _where(s["frames"])}
            for d in devices
            for s in d["top_stacks_at_peak"][:5]
        ]
        if stacks:
            parts += ["largest stacks at the peak:", rows_table(_STACK_COLUMNS, stacks, width)]
        blocks.append("\n".join(parts))
    return "\n\n".join(blocks)
