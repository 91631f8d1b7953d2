"""JSON as other exporters write it: an empty `{}` event (JAX's exporter ends its list with
one) is skipped with a warning, by the compiled scanner and the msgspec decoder alike,
and junk after the events array keeps the events before it."""

from __future__ import annotations

from pathlib import Path

import pytest
from kinetoscope.ingest.build import build_model
from kinetoscope.model.categories import Phase

JAX = Path(__file__).parent / "data" / "jax"
EMPTY_EVENT = "1 empty events ({}, as JAX's exporter ends its list with) were skipped"


@pytest.fixture(params=["compiled", "python"])
def scanner(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setenv("KINETOSCOPE_SCANNER", "python")
    return str(request.param)


@pytest.mark.parametrize("name", ["perfetto_trace.json.gz", "vm.trace.json.gz"])
def test_real_jax_traces_skip_their_empty_event(name: str, scanner: str) -> None:
    model = build_model(str(JAX / name))
    assert model.warnings == [EMPTY_EVENT]
    assert not model.partial
    assert len(model) == 112  # every event but the {} (113 in the array)
    ev = model.events
    assert not (ev["ph"] == Phase.OTHER).any(), "no phase-less row is left"
    names = {model.names[n] for n in ev["name"]}
    assert any("fusion" in n or "gemm" in n or "XlaModule" in n for n in names), names


def test_empty_events_anywhere_keep_memory_rows_in_place(tmp_path: Path, scanner: str) -> None:
    path = tmp_path / "w.json"
    path.write_text(
        '{"traceEvents": [{}, {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1,'
        ' "ts": 1, "dur": 5}, {}, {"ph": "i", "s": "t", "cat": "cpu_instant_event",'
        ' "name": "[memory]", "pid": 1, "tid": 1, "ts": 2, "args": {"Bytes": 64,'
        ' "Addr": 7, "Device Type": 1, "Device Id": 0, "Total Allocated": 64,'
        ' "Total Reserved": 128}}, {}]} junk'
    )
    model = build_model(str(path))
    assert len(model) == 2
    assert "3 empty events ({}, as JAX's exporter ends its list with) were skipped" in (
        model.warnings
    )
    assert any("after the events array" in w for w in model.warnings)
    memory_row = int(model.memory["row"][0])
    assert model.names[model.events["name"][memory_row]] == "[memory]"
    assert float(model.memory["bytes"][0]) == 64.0
