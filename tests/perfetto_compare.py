"""The compiled Perfetto reader against the protobuf runtime's reader on one file: shared
by test_perfetto_native, the Perfetto tests (`compare_each_load`: every Perfetto file they
load is read both ways), the Perfetto fuzzers, and by hand:

    python tests/perfetto_compare.py TRACE.pftrace[.gz] ...
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from kinetoscope.ingest.build import build_model
from kinetoscope.ingest.formats import PERFETTO
from kinetoscope.ingest.naming import parse_trace_name
from kinetoscope.ingest.perfetto.native import available
from kinetoscope.ingest.text_blocks import TraceDecodeError


@contextmanager
def reader(name: str) -> Iterator[None]:
    """Perfetto traces read by the compiled reader ("native") or the protobuf runtime's
    ("python") inside the block."""
    before = os.environ.get("KINETOSCOPE_SCANNER")
    if name == "python":
        os.environ["KINETOSCOPE_SCANNER"] = "python"
    else:
        os.environ.pop("KINETOSCOPE_SCANNER", None)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("KINETOSCOPE_SCANNER", None)
        else:
            os.environ["KINETOSCOPE_SCANNER"] = before


def load(path: str, name: str) -> Any:
    """The model of `path` by one reader, or its TraceDecodeError."""
    with reader(name):
        try:
            return build_model(path)
        except TraceDecodeError as err:
            return err


def model_facts(model: Any) -> dict[str, Any]:
    """Everything a model says that a reader decides (not where it came from)."""
    if isinstance(model, TraceDecodeError):
        return {"error": (model.kind, model.message)}
    out: dict[str, Any] = {f"events.{k}": v for k, v in model.events.items()}
    out.update({f"events.{k}": model.full_column(k) for k in model.sparse})
    out.update({f"memory.{k}": v for k, v in model.memory.items()})
    out["args"] = bytes(model.args_blob) if len(model.args_blob) else b""
    for key in ("names", "categories", "pids", "tids", "header", "partial", "warnings"):
        out[key] = getattr(model, key)
    for key in ("process_names", "thread_names", "process_labels", "process_sort", "thread_sort"):
        out[key] = getattr(model, key)
    return out


def differences(native: dict[str, Any], python: dict[str, Any]) -> list[str]:
    """What differs between two models' facts (dtypes and value types count)."""
    found = []
    for key in sorted(set(native) | set(python)):
        if key not in native or key not in python:
            found.append(f"{key}: only in {'native' if key in native else 'python'}")
            continue
        a, b = native[key], python[key]
        if isinstance(b, np.ndarray):
            if a.dtype != b.dtype:
                found.append(f"{key}: dtype {a.dtype} != {b.dtype}")
            elif a.shape != b.shape or not np.array_equal(a, b, equal_nan=b.dtype.kind == "f"):
                rows = np.flatnonzero(a != b)[:5] if a.shape == b.shape else "lengths"
                found.append(f"{key}: differ (rows {rows}, {len(a)} vs {len(b)})")
        elif a != b or (isinstance(b, list) and [type(v) for v in a] != [type(v) for v in b]):
            found.append(f"{key}: {str(a)[:300]} != {str(b)[:300]}")
    return found


def disagreement(path: str) -> str | None:
    """None when both readers make the same model of `path` (or the same error)."""
    try:
        python = model_facts(load(path, "python"))
    except Exception:  # noqa: BLE001 - a crash of the Python reader is a finding too
        return "python reader raised: " + traceback.format_exc(limit=-4)
    try:
        native = model_facts(load(path, "native"))
    except Exception:  # noqa: BLE001
        return "native reader raised: " + traceback.format_exc(limit=-4)
    found = differences(native, python)
    return "; ".join(found) if found else None


def is_perfetto(path: str) -> bool:
    parsed = parse_trace_name(os.path.basename(path))
    return parsed is not None and parsed.format == PERFETTO.name


def compare_each_load(monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
    """Every Perfetto file the tests of `module` load with `build_model` (a plain load:
    no spill path, progress or pool) is read by both readers too, which must agree."""
    if not available():
        return
    original = module.build_model

    def checked(path: str, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs and is_perfetto(str(path)):
            said = disagreement(str(path))
            assert said is None, f"{path}: {said}"
        return original(path, *args, **kwargs)

    monkeypatch.setattr(module, "build_model", checked)


if __name__ == "__main__":
    status = 0
    for arg in sys.argv[1:]:
        said = disagreement(arg)
        print(f"{arg}: {said or 'same'}")
        status |= said is not None
    sys.exit(status)
