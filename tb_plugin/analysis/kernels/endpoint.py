"""The Kernels view's endpoint: a page for traces with kernels. What the registry reads is
named here; the compute is imported when first asked."""

from __future__ import annotations

from ...model.categories import Kind
from ...model.trace_model import TraceModel
from ..core.endpoint import Cache, Endpoint, Lazy, span_view
from ..core.roofline.peaks import peaks_key

ORDER = 40  # the folder's place in the page order (`api/view_folders.py`)

# Bump when the view's output changes (here: the registry reads it without the view).
# 2: tri-state matrix-core use, work class; 3: launch delay columns; 4: graph replays;
# 5: interpolated p90; 6: left_out_events (trace health); 7: roofline fields (the device
# peaks' key is appended by the registry entry); 8: Inductor kernels' fused ops and source;
# 9: graph replays aligned with a run of their capture, `graph_replay.unmatched` reasons
# 10: their `fused_ops_from` and `wrapper_unread`, wrappers read only inside the logdir
# 11: a collective kernel's op is its communication op (optree.collective_owner)
# 12: an Inductor kernel's source frames say which is generated
# 13: CUPTI's priority, occupancy limit and queue wait; CUDA-graph kernel annotations
# 14: a graph-replayed kernel's capture frames (`captured_source`)
VERSION = "14"


def supports(model: TraceModel) -> bool:
    """Offered for traces with kernels."""
    return model.has_complete(Kind.KERNEL)


ENDPOINTS: list[Endpoint] = [
    span_view(
        "kernels",
        Lazy("kinetoscope.analysis.kernels.types", "KernelsView"),
        Lazy("kinetoscope.analysis.kernels.view", "kernels_view"),
        Lazy("kinetoscope.analysis.kernels.types", "KernelsParams"),
        # Rows carry roofline numbers: the device peaks' data version keys them too.
        f"{VERSION}p{peaks_key()}",
        Cache.ALL,
        page="kernels",
        supports=supports,
        text=Lazy("kinetoscope.analysis.kernels.text", "render_kernels"),
    ),
]
