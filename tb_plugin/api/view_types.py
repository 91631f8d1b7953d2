"""The response types of the routes, for the doors: each route's JSON body (a TypedDict),
and the parts of it a door reads by name, re-exported from where each view defines it,
so a door imports its types from `api/` only. The CLI's text renderers take these
(imported under `TYPE_CHECKING`: naming a type imports no view). `tests/test_view_types.py`
checks that every JSON route's response type is here, under its own name."""

from __future__ import annotations

from ..analysis.compile.types import CompileResponse as CompileResponse
from ..analysis.core.gpu import DeviceView
from ..analysis.core.health.view import HealthExample as HealthExample
from ..analysis.core.health.view import HealthView as HealthView
from ..analysis.core.overview_types import OverviewView as OverviewView
from ..analysis.critical_path.types import CriticalPathView as CriticalPathView
from ..analysis.critical_path.types import RunCriticalPathView as RunCriticalPathView
from ..analysis.critical_path.types import RunTopGainsView as RunTopGainsView
from ..analysis.critical_path.types import RunWhatIfView as RunWhatIfView
from ..analysis.critical_path.types import TopGainsView as TopGainsView
from ..analysis.critical_path.types import WhatIfView as WhatIfView
from ..analysis.diff.types import Compared as Compared
from ..analysis.diff.types import DiffView as DiffView
from ..analysis.diff.types import KernelDiff as KernelDiff
from ..analysis.diff.types import OperatorDiff as OperatorDiff
from ..analysis.distributed.types import RankOffset as RankOffset
from ..analysis.distributed.types import RunHealthCheck as RunHealthCheck
from ..analysis.flamegraph import FlameGraphView as FlameGraphView
from ..analysis.gpu_idle.view import GpuIdleView as GpuIdleView
from ..analysis.kernels import KernelsView as KernelsView
from ..analysis.memory.allocations import EventsView as EventsView
from ..analysis.memory.curve import CurveView as CurveView
from ..analysis.memory.snapshot_alignment import SnapshotAlignment as SnapshotAlignment
from ..analysis.memory.snapshot_frames import SnapshotFrame as SnapshotFrame
from ..analysis.memory.snapshot_view import MemorySnapshotResponse as MemorySnapshotResponse
from ..analysis.memory.view import MemoryView as MemoryView
from ..analysis.modules import ModulesView as ModulesView
from ..analysis.operators import CallStacksView as CallStacksView
from ..analysis.operators import OperatorsView as OperatorsView
from ..analysis.serving import ServingView as ServingView
from ..analysis.trends.types import TrendChange as TrendChange
from ..analysis.trends.types import TrendView as TrendView
from ..trace_view.event_details import EventView as EventView
from ..trace_view.flow_window import FlowsView as FlowsView
from ..trace_view.range_summary import RangeSummaryView as RangeSummaryView
from ..trace_view.search import SearchView as SearchView
from ..trace_view.source_paths import SourcePathsView as SourcePathsView
from ..trace_view.track_list import TracksView as TracksView
from ..trace_view.window_query import WindowView as WindowView
from .contract import DistributedResponse as DistributedResponse
from .contract import RunsResponse as RunsResponse
from .contract import SpansResponse as SpansResponse
from .contract import StatusResponse as StatusResponse
from .contract import WorkersResponse as WorkersResponse

GpuDeviceView = DeviceView  # the Overview's device (the Memory view has a DeviceView too)
