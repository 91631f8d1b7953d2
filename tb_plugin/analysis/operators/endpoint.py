"""The Operators view's endpoints: the page, and the call stacks of one operator (which
needs an operator's name: not a page of its own). What the registry reads is named here;
the compute is imported when first asked."""

from __future__ import annotations

from ..core.endpoint import Cache, Endpoint, Lazy, span_view
from ..core.roofline.peaks import peaks_key

ORDER = 30  # the folder's place in the page order (`api/view_folders.py`)

# Bump when the view's output changes (here: the registry reads it without the view).
# 2: matrix-core time from the kernel taxonomy; a runtime call inside an annotation is
# subtracted once (host self).
# 3: a replayed kernel counts in the op that captured it (replay_ops.py).
# 4: roofline fields (the device peaks' key is appended by the registry entry).
# 5: `replayed_us`; rows of replayed ops only have every roofline field (null).
# 6: a collective kernel's device time under its communication op (optree.collective_owner),
# host ranges compared in integer ns. 7: a replayed kernel with no profiled capture
# counts in the op its CUDA-graph annotations name. 8: `captured_at` of replayed rows.
VERSION = "8"

_VIEW = "kinetoscope.analysis.operators.view"
_TYPES = "kinetoscope.analysis.operators.types"

ENDPOINTS: list[Endpoint] = [
    span_view(
        "operators",
        Lazy(_TYPES, "OperatorsView"),
        Lazy(_VIEW, "operators_view"),
        Lazy(_TYPES, "OperatorsParams"),
        # Rows carry roofline numbers: the device peaks' data version keys them too.
        f"{VERSION}p{peaks_key()}",
        Cache.ALL,
        page="operators",
        text=Lazy("kinetoscope.analysis.operators.text", "render_operators"),
    ),
    span_view(
        "callstacks",
        Lazy(_TYPES, "CallStacksView"),
        Lazy(_VIEW, "callstacks_view"),
        Lazy(_TYPES, "CallStacksParams"),
        VERSION,
        Cache.ALL,
    ),
]
