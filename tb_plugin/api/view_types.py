"""The response types of the views, for the doors: each view's JSON body (a TypedDict)
and the parts of it a door reads by name, re-exported from where each view defines it,
so a door imports its types from `api/` only. The CLI's text renderers take these
(imported under `TYPE_CHECKING`: naming a type imports no view)."""

from __future__ import annotations

from ..analysis.diff.types import Compared as Compared
from ..analysis.diff.types import DiffView as DiffView
from ..analysis.diff.types import KernelDiff as KernelDiff
from ..analysis.diff.types import ModuleRatio as ModuleRatio
from ..analysis.diff.types import OperatorDiff as OperatorDiff
from ..analysis.diff.types import TopChange as TopChange
from ..analysis.diff.types import WorkPair as WorkPair
from ..analysis.distributed.types import GroupRow as GroupRow
from ..analysis.distributed.types import RankOffset as RankOffset
from ..analysis.distributed.types import RunHealthCheck as RunHealthCheck
from ..analysis.gpu import DeviceView
from ..analysis.gpu_idle.view import GpuIdleView as GpuIdleView
from ..analysis.health.view import HealthExample as HealthExample
from ..analysis.health.view import HealthView as HealthView
from ..analysis.kernels import KernelsView as KernelsView
from ..analysis.memory.snapshot_alignment import SnapshotAlignment as SnapshotAlignment
from ..analysis.memory.snapshot_frames import SnapshotFrame as SnapshotFrame
from ..analysis.memory.view import MemoryView as MemoryView
from ..analysis.modules import ModulesView as ModulesView
from ..analysis.operators import OperatorsView as OperatorsView
from ..analysis.overview_types import OverviewView as OverviewView
from ..analysis.trends.types import TrendChange as TrendChange
from ..analysis.trends.types import TrendView as TrendView
from .contract import DistributedResponse as DistributedResponse
from .snapshots import MemorySnapshotResponse as MemorySnapshotResponse

GpuDeviceView = DeviceView  # the Overview's device (the Memory view has a DeviceView too)
