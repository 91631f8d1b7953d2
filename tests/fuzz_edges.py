"""Edge coverage of compiled code for the fuzzers (tests/fuzz_scanner.py,
tests/fuzz_perfetto_native.py), without clang: gcc builds a copy of an extension's C
source with -fsanitize-coverage=trace-pc (tests/fuzz_coverage.c counts block-to-block
edges, as AFL does) and UBSan (aborts on undefined behaviour), and ASan when asked (the
process must then have libasan loaded first). An input that reaches a new edge, or an
edge a new number of times (AFL's count buckets), is worth keeping."""

from __future__ import annotations

import ctypes
import importlib.util
import subprocess
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

TESTS = Path(__file__).resolve().parent


def build_instrumented(source: Path, stem: str, folder: Path, asan: bool = False) -> Path:
    """The extension of `source` (module `stem`) built with edge coverage and UBSan."""
    out = folder / f"{stem}{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    common = ["gcc", "-O1", "-g", "-fPIC", "-fno-omit-frame-pointer", f"-I{include}"]
    checks = ["-fsanitize=undefined", "-fno-sanitize-recover=undefined"]
    if asan:
        checks = ["-fsanitize=address", *checks]
    hook = folder / "fuzz_coverage.o"
    subprocess.run([*common, "-c", str(TESTS / "fuzz_coverage.c"), "-o", str(hook)], check=True)
    obj = folder / f"{stem}.o"
    instrument = ["-fsanitize-coverage=trace-pc", *checks]
    subprocess.run([*common, *instrument, "-c", str(source), "-o", str(obj)], check=True)
    subprocess.run([*common, *checks, "-shared", str(obj), str(hook), "-o", str(out)], check=True)
    return out


@dataclass
class Coverage:
    """An instrumented extension's edge map, and the (edge, count bucket) pairs seen."""

    module: ModuleType
    edges: np.ndarray  # the live map (a view of the C array)
    reset: ctypes._CFuncPtr
    seen: np.ndarray = field(default_factory=lambda: np.zeros(1 << 16, dtype=np.uint8))

    def new_features(self) -> int:
        """How many (edge, bucket) pairs the last input reached first; clears the map."""
        hit = np.flatnonzero(self.edges)
        counts = self.edges[hit]
        buckets = (1 << np.minimum(np.log2(counts).astype(np.uint8), 7)).astype(np.uint8)
        fresh = buckets & ~self.seen[hit]
        self.seen[hit] |= buckets
        self.reset()
        return int(np.count_nonzero(fresh))

    def edges_seen(self) -> int:
        return int(np.count_nonzero(self.seen))


def load_instrumented(path: Path, name: str) -> Coverage:
    """The instrumented extension at `path`, imported as module `name` (not installed in
    sys.modules: the caller swaps it in), with its edge map."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    lib = ctypes.CDLL(str(path))
    edges = np.ctypeslib.as_array((ctypes.c_ubyte * (1 << 16)).in_dll(lib, "kfuzz_map"))
    coverage = Coverage(module, edges, lib.kfuzz_reset)
    coverage.reset()
    return coverage
