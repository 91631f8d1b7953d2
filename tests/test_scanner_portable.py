"""The scanner's portable string search (a word of 8 bytes at a time, what an ARM build
runs) reads every text as its SSE2 search does: built here with -DSCAN_NO_SIMD and held to
the same comparison with the msgspec path (cases, random events, real traces)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from corpus import corpus_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kinetoscope.ingest import native_chunk
from scan_compare import assert_same_rows, disagreement
from test_native_scan import ACCEPTED, _event, _model, assert_same_model, both_paths

SCANNER = Path(__file__).resolve().parent.parent / "tb_plugin" / "ingest" / "_scan.c"


def _build_portable(folder: Path) -> ModuleType:
    out = folder / f"_scan{sysconfig.get_config_var('EXT_SUFFIX')}"
    include = sysconfig.get_paths()["include"]
    command = ["gcc", "-O2", "-fPIC", "-shared", "-DSCAN_NO_SIMD", f"-I{include}"]
    subprocess.run([*command, str(SCANNER), "-o", str(out)], check=True)
    spec = importlib.util.spec_from_file_location("kinetoscope.ingest._scan", out)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def portable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    if native_chunk._scan is None or shutil.which("gcc") is None:
        pytest.skip("needs gcc and the compiled scanner")
    module = _build_portable(tmp_path_factory.mktemp("portable"))
    installed = native_chunk._scan
    native_chunk._scan = module
    yield module
    native_chunk._scan = installed


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_the_portable_search_reads_what_msgspec_reads(portable: ModuleType, case: str) -> None:
    expected, native = both_paths(*ACCEPTED[case])
    assert not isinstance(native, str), f"the scanner declined: {native}"
    assert_same_rows(native, expected)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_event(), min_size=1, max_size=6), st.booleans())
def test_random_events_read_the_same(portable: ModuleType, events: list, ascii: bool) -> None:
    body = ",".join(json.dumps(e, ensure_ascii=ascii) for e in events).encode()
    assert disagreement(body) is None


@pytest.mark.corpus
@pytest.mark.parametrize(
    "name",
    [
        "pytorch-kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
        "tracelens/tests/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
    ],
)
def test_real_traces_give_the_same_model(
    portable: ModuleType, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = corpus_path(name)
    assert_same_model(_model(path, "", monkeypatch), _model(path, "python", monkeypatch))
