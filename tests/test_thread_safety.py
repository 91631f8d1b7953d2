"""Work shared by threads: decoders built at the same moment must not crash, and views
computed side by side answer as one after another.

msgspec fills a type's decoding info on first use (`decode(..., type=T)` caches it on
the type); two threads doing that at once crashed the process now and then. The package
builds its decoders once, before threads share them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from builders import TraceBuilder
from corpus import CORPUS, corpus_missing

PACKAGE = Path(__file__).resolve().parents[1] / "tb_plugin"

STRESS = """
import sys, threading
from kinetoscope.analysis.distributed.rank_summaries import rank_summary
from kinetoscope.model.decoders import decoders_for
from kinetoscope.ingest.schema import CoreArgs

path, cache_dir = sys.argv[1], sys.argv[2]
threads = 16
barrier = threading.Barrier(threads)

def work():
    barrier.wait()
    rank_summary(path, cache_dir)  # read back from the cache: the summary decoder
    decoders_for(CoreArgs)[0].decode(b"[{}]")

pool = [threading.Thread(target=work) for _ in range(threads)]
for t in pool:
    t.start()
for t in pool:
    t.join()
print("ok")
"""


def test_threads_reading_rank_summaries_at_once_do_not_crash(tmp_path: Path) -> None:
    t = TraceBuilder()
    t.step(1, 0, 100)
    t.op("aten::mm", 10, 50)
    path = str(t.write(tmp_path / "w.1.pt.trace.json"))
    cache_dir = str(tmp_path / "cache")
    from kinetoscope.analysis.distributed.rank_summaries import rank_summary

    rank_summary(path, cache_dir)  # the summary is on disk: every thread decodes it
    for _ in range(10):  # each run is a fresh process: the first use is what races
        proc = subprocess.run(
            [sys.executable, "-c", STRESS, path, cache_dir],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, (proc.returncode, proc.stderr[-1000:])
        assert proc.stdout.strip() == "ok"


def test_no_decoder_is_built_per_call_with_a_type() -> None:
    """`msgspec.json.decode(data, type=T)` and `Decoder(T)` inside functions are what
    raced; decoders are module-level or come from `model.decoders_for`."""
    per_call = re.compile(r"msgspec\.json\.decode\([^)]*type=|^\s+\w+ = msgspec\.json\.Decoder\(")
    offenders = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in PACKAGE.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if per_call.search(line) and "decoders_for" not in line
    ]
    assert offenders == []


def test_closing_the_store_ends_the_waits_on_loads_that_never_ran(tmp_path: Path) -> None:
    """A load still queued when the store closes never runs: whoever waits on it (a run
    job's rank summary) gets an error instead of blocking, so the interpreter can exit."""
    from kinetoscope.store.trace_store import LoadFailed, TraceStore

    paths = []
    for i in range(3):
        t = TraceBuilder()
        t.op("aten::mm", 0, 10)
        paths.append(t.write(tmp_path / f"w{i}.pt.trace.json"))
    store = TraceStore(None, workers=0)  # no load slot: every load stays queued
    for p in paths:
        store.status(str(p))
    waits: list[BaseException | None] = []

    def wait_for_first() -> None:
        try:
            store.wait(str(paths[0]))
            waits.append(None)
        except LoadFailed as exc:
            waits.append(exc)

    waiter = threading.Thread(target=wait_for_first, daemon=True)
    waiter.start()
    store.close()
    waiter.join(10)
    assert not waiter.is_alive(), "the wait outlived the store"
    assert len(waits) == 1 and isinstance(waits[0], LoadFailed)
    assert store.status(str(paths[1]))["state"] == "error"


def write_three_steps(path: Path) -> None:
    """A trace of three steps, each with an op that launches a kernel."""
    t = TraceBuilder()
    for i in range(3):
        t.step(i + 1, i * 100, 100)
        op = t.op("aten::mm", i * 100 + 10, 50)
        t.launch(i * 100 + 20, 5, op, gpu_ts=i * 100 + 30, gpu_dur=40)
    t.write(path)


BERT = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"


@pytest.mark.parametrize("source", ["built", "corpus"])
def test_views_computed_side_by_side_answer_as_one_after_another(
    tmp_path: Path, source: str
) -> None:
    """`kinetoscope report` with its views in two threads (KINETOSCOPE_VIEW_THREADS=2)
    prints what one thread prints: the model's derived tables are built once, whichever
    thread needs one first, and each view's answer is its own."""
    run = tmp_path / "logs" / "run"
    run.mkdir(parents=True)
    if source == "corpus":
        if not (CORPUS / BERT).exists():
            corpus_missing(BERT)
        shutil.copy(CORPUS / BERT, run / "worker0.1.pt.trace.json.gz")
    else:
        write_three_steps(run / "worker0.1.pt.trace.json")
    outputs = []
    for threads in ("1", "2"):
        command = ["report", str(tmp_path / "logs"), "--format", "json", "--no-cache"]
        proc = subprocess.run(
            [sys.executable, "-m", "kinetoscope", *command],
            capture_output=True,
            timeout=300,
            env={**os.environ, "KINETOSCOPE_VIEW_THREADS": threads},
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert b'"overview"' in outputs[0] and b'"kernels"' in outputs[0]


def test_a_report_takes_two_view_threads_from_its_row_threshold_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unset, KINETOSCOPE_VIEW_THREADS is the trace's rows' rule: two threads from
    `VIEW_THREADS_MIN_ROWS` rows on, one below; set, it is what it says."""
    from kinetoscope.api import report as report_module
    from kinetoscope.ingest.build import build_model

    write_three_steps(tmp_path / "worker0.1.pt.trace.json")
    model = build_model(str(tmp_path / "worker0.1.pt.trace.json"))
    monkeypatch.setattr(report_module, "VIEW_THREADS", 0)
    monkeypatch.setattr(report_module, "VIEW_THREADS_MIN_ROWS", len(model))
    assert report_module._view_threads(model) == 2
    monkeypatch.setattr(report_module, "VIEW_THREADS_MIN_ROWS", len(model) + 1)
    assert report_module._view_threads(model) == 1
    monkeypatch.setattr(report_module, "VIEW_THREADS", 3)
    assert report_module._view_threads(model) == 3
