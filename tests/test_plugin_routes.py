"""The plugin inside TensorBoard's WSGI app: listing, status, views, errors, static files."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from builders import TraceBuilder
from conftest import PluginClient
from kinetoscope.analysis.core.health.view import health_of
from kinetoscope.analysis.overview.view import overview
from kinetoscope.api.endpoints import ENDPOINTS
from kinetoscope.api.session import build_beside
from kinetoscope.api.table_uses import TABLE_USES
from kinetoscope.ingest.build import build_model
from kinetoscope.store.trace_store import TraceStore

Make = Callable[[Path], PluginClient]


def small_trace(builder_steps: int = 2) -> TraceBuilder:
    t = TraceBuilder()
    for i in range(builder_steps):
        t.step(i + 1, i * 100, 100)
        op = t.op("aten::mm", i * 100 + 10, 50)
        t.launch(i * 100 + 20, 5, op, gpu_ts=i * 100 + 30, gpu_dur=40)
    return t


@pytest.fixture
def logdir(tmp_path: Path) -> Path:
    root = tmp_path / "logs"
    (root / "job" / "a").mkdir(parents=True)
    small_trace().write(root / "job" / "a" / "worker0.100.pt.trace.json.gz", gz=True)
    small_trace(3).write(root / "job" / "a" / "worker0.200.pt.trace.json.gz", gz=True)
    small_trace().write(root / "job" / "a" / "worker1.100.pt.trace.json")
    (root / "job" / "a" / "worker2.100.pt.trace.json").write_bytes(b"")
    return root


def test_listing_routes(plugin_client: Make, logdir: Path) -> None:
    client = plugin_client(logdir)
    runs = client.json("runs")["runs"]
    assert [r["name"] for r in runs] == ["job/a"]
    workers = runs[0]["workers"]
    assert [w["name"] for w in workers] == ["worker0", "worker1", "worker2"]
    assert [s["name"] for s in workers[0]["spans"]] == ["1", "2"]
    assert [s["timestamp"] for s in workers[0]["spans"]] == [100, 200]
    assert client.json("workers", run="job/a")["workers"] == workers
    assert client.json("spans", run="job/a", worker="worker0")["spans"] == workers[0]["spans"]


def test_status_then_overview(plugin_client: Make, logdir: Path) -> None:
    client = plugin_client(logdir)
    status = client.wait_ready("job/a", "worker0", "2")
    assert status["state"] == "ready" and status["views"][0] == "overview"
    assert status["bytes_done"] == status["bytes_total"] > 0
    assert status["event_count"] == 3 * 4
    got = client.json("overview", run="job/a", worker="worker0", span="2")
    path = logdir / "job" / "a" / "worker0.200.pt.trace.json.gz"
    expected = overview(build_model(str(path)))
    assert got["steps"] == [dict(s) for s in expected["steps"]]
    assert got["step_count"] == 3


def test_a_broken_worker_does_not_hide_the_others(plugin_client: Make, logdir: Path) -> None:
    client = plugin_client(logdir)
    status = client.wait_ready("job/a", "worker2")
    assert status["state"] == "error"
    assert status["error"]["kind"] == "empty_file"
    assert "worker2.100.pt.trace.json" in status["error"]["message"]
    response = client.get("overview", run="job/a", worker="worker2", span="1")
    assert response.status_code == 422
    assert "empty" in response.get_data(as_text=True)
    assert client.wait_ready("job/a", "worker1")["state"] == "ready"
    assert client.json("overview", run="job/a", worker="worker1", span="1")["step_count"] == 2


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"run": "nope", "worker": "worker0", "span": "1"}, 404),
        ({"run": "job/a", "worker": "nope", "span": "1"}, 404),
        ({"run": "job/a", "worker": "worker0", "span": "9"}, 404),
        ({"run": "../../etc", "worker": "passwd", "span": "1"}, 404),
        ({"run": "job/a/../a", "worker": "worker0", "span": "1"}, 404),
        ({"worker": "worker0", "span": "1"}, 400),  # no run named
        ({"run": "job/a", "span": "x"}, 404),  # no worker named: the first one, no span x
    ],
)
def test_bad_parameters(
    plugin_client: Make, logdir: Path, params: dict[str, str], code: int
) -> None:
    client = plugin_client(logdir)
    assert client.get("overview", **params).status_code == code
    assert client.get("status", **params).status_code == code


def test_view_of_a_loading_file_answers_202(
    plugin_client: Make, logdir: Path, held_loads: threading.Event
) -> None:
    client = plugin_client(logdir)
    response = client.get("overview", run="job/a", worker="worker1", span="1")
    assert response.status_code == 202
    assert response.get_json()["state"] == "loading"
    held_loads.set()
    assert client.wait_ready("job/a", "worker1")["state"] == "ready"
    assert client.get("overview", run="job/a", worker="worker1", span="1").status_code == 200


def test_new_runs_and_spans_appear(plugin_client: Make, logdir: Path) -> None:
    client = plugin_client(logdir)
    assert len(client.json("runs")["runs"]) == 1
    (logdir / "later").mkdir()
    small_trace().write(logdir / "later" / "w.1.pt.trace.json")
    shutil.copy(
        logdir / "job" / "a" / "worker1.100.pt.trace.json",
        logdir / "job" / "a" / "worker1.300.pt.trace.json",
    )
    client.plugin.watcher.rescan()
    runs = client.json("runs")["runs"]
    assert [r["name"] for r in runs] == ["job/a", "later"]
    assert [s["name"] for s in runs[0]["workers"][1]["spans"]] == ["1", "2"]


def test_is_active_is_sticky_and_cheap(plugin_client: Make, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    client = plugin_client(empty)
    assert client.plugin.is_active() is False
    small_trace().write(empty / "w.1.pt.trace.json")
    client.plugin.watcher.rescan()
    assert client.plugin.is_active() is True
    (empty / "w.1.pt.trace.json").unlink()
    client.plugin.watcher.rescan()
    assert client.plugin.is_active() is True


def test_static_files_and_traversal(plugin_client: Make, logdir: Path) -> None:
    client = plugin_client(logdir)
    for bad in ("../plugin.py", "..%2Fplugin.py", "", "nope.js"):
        assert client.get(f"static/{bad}").status_code == 404
    response = client.get("static/index.js")
    if response.status_code == 404:
        pytest.skip("frontend not built (npm run build)")
    assert response.headers["Content-Type"].startswith("text/javascript")
    assert b"render" in response.get_data()


def test_frontend_metadata(plugin_client: Make, logdir: Path) -> None:
    meta = plugin_client(logdir).plugin.frontend_metadata()
    assert meta.tab_name == "PyTorch Profiler"
    assert meta.es_module_path == "/static/index.js"


def test_unbuilt_frontend_says_what_to_run(
    plugin_client: Make, logdir: Path, tmp_path: Path
) -> None:
    # A clone installed before `npm run build`: the package has no static/dist.
    client = plugin_client(logdir)
    client.plugin.static_root = tmp_path / "no-dist"
    response = client.get("static/index.js")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/javascript")
    body = response.get_data(as_text=True)
    assert "export function render()" in body and "npm run build" in body
    assert client.get("static/chunk-ABC.js").status_code == 404  # only entry modules


def test_the_span_the_page_opens_first_loads_before_it_is_asked(
    plugin_client: Make, logdir: Path
) -> None:
    """TensorBoard's start begins loading the first run's first worker and span (what the
    page shows first); no other span loads unasked."""
    client = plugin_client(logdir)
    store = client.plugin.store
    first = str(logdir / "job" / "a" / "worker0.100.pt.trace.json.gz")
    for _ in range(500):
        if store.holds(first):
            break
        time.sleep(0.02)
    assert store.holds(first)
    assert not store.holds(str(logdir / "job" / "a" / "worker0.200.pt.trace.json.gz"))
    assert not store.holds(str(logdir / "job" / "a" / "worker1.100.pt.trace.json"))


def test_the_first_span_answers_its_first_page_once_loaded(
    plugin_client: Make, logdir: Path
) -> None:
    """Once the span the page opens first is loaded, its first page (the Overview) is
    computed before the page asks, and before the cache entry is written; the route then
    answers it from the store, the same JSON as a store without the plugin computes. No
    other view of it, and no other span, is computed unasked."""
    client = plugin_client(logdir)
    store = client.plugin.store
    first = str(logdir / "job" / "a" / "worker0.100.pt.trace.json.gz")
    deadline = time.monotonic() + 60
    while not (store.holds(first) and store.state_for(first).published.is_set()):
        assert time.monotonic() < deadline, "the first span never loaded"
        time.sleep(0.02)
    state = store.state_for(first)
    assert [name.split("-v")[0] for name in state.views] == ["overview"]
    answered = next(iter(state.views.values()))
    assert client.get("overview", run="job/a", worker="worker0", span="1").data == answered
    alone = TraceStore()
    try:
        alone.loaded(first)
        assert ENDPOINTS["overview"].answer_json(alone, first, {}) == answered
    finally:
        alone.close()
    assert not store.holds(str(logdir / "job" / "a" / "worker0.200.pt.trace.json.gz"))


def test_the_first_page_has_the_health_built_beside_it(tmp_path: Path) -> None:
    """While the Overview (the first page) computes, the trace health (the route the page
    asks beside it, for the side bar's marks; the Overview reads it too) is built in a
    second thread: afterwards the model holds it and only tables the Overview reads, and
    the Overview and the health answer as on a model that built them alone. A first page
    that does not read the health starts no thread."""
    path = tmp_path / "worker0.100.pt.trace.json"
    small_trace(3).write(path)
    model = build_model(str(path))
    thread = build_beside("overview", model)
    assert thread is not None
    thread.join(60)
    assert not thread.is_alive()
    built = set(model.__dict__.get("_derived_keys", ()))
    assert "_health_view" in built
    assert built <= TABLE_USES["overview"]
    alone = build_model(str(path))
    assert health_of(model) == health_of(alone)
    assert overview(model) == overview(build_model(str(path)))
    assert build_beside("memory", build_model(str(path))) is None
