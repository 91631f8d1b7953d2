"""The handler under real faults: a full or read-only filesystem under a real profiler
run with a schedule, and writers killed mid-write."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kinetoscope.handlers import remove_stale_temp_files, tensorboard_trace_handler
from kinetoscope.ingest.naming import format_trace_name, temp_name_for
from small_fs import run_on_small_tmpfs

pytest.importorskip("torch")

TRAINING = """
import os, sys, torch
from kinetoscope.handlers import tensorboard_trace_handler
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 4))
x = torch.randn(8, 256)
sched = torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=2)
handler = tensorboard_trace_handler(os.path.join(sys.argv[1], sys.argv[2]), worker_name="w")
with torch.profiler.profile(
    activities=[torch.profiler.ProfilerActivity.CPU], schedule=sched, on_trace_ready=handler,
    record_shapes=True, with_stack=True,
) as prof:
    for _ in range(6):
        model(x).sum().backward()
        prof.step()
print("training finished", flush=True)
"""


def train_on_small_tmpfs(
    tmp_path: Path, mount_options: str, target: str
) -> subprocess.CompletedProcess[str]:
    """A scheduled profile writing into `target` on a tmpfs mounted with `mount_options`."""
    return run_on_small_tmpfs(tmp_path, mount_options, TRAINING, target)


def test_full_disk_does_not_stop_training(tmp_path: Path) -> None:
    # 64 KiB: the traces of this model do not fit, so the profiler's own write fails.
    proc = train_on_small_tmpfs(tmp_path, "size=64k", "run")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "training finished" in proc.stdout
    assert "ENOSPC" in proc.stderr and "/run/w." in proc.stderr
    assert "bytes written" in proc.stderr
    assert "Traceback" not in proc.stderr
    # No temp file left: the folder the handler made is all that is there.
    assert proc.stdout.split("training finished", 1)[1].split() == ["run"]


def test_read_only_filesystem_does_not_stop_training(tmp_path: Path) -> None:
    proc = train_on_small_tmpfs(tmp_path, "ro,size=64k", ".")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "training finished" in proc.stdout
    assert "EROFS" in proc.stderr
    assert "Traceback" not in proc.stderr


KILLED_WRITER = """
import os, signal, sys
from kinetoscope.handlers import tensorboard_trace_handler

class DiesMidWrite:
    def export_chrome_trace(self, path):
        with open(path, "w") as f:
            f.write('{"traceEvents": [' + ' ' * 100000)
            f.flush()
        os.kill(os.getpid(), signal.SIGKILL)

tensorboard_trace_handler(sys.argv[1], worker_name="w")(DiesMidWrite())
"""


def test_temp_files_of_killed_writers_are_removed(tmp_path: Path) -> None:
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tmp_path)])
        assert proc.returncode == -signal.SIGKILL
        # Each writer removed the temp file of the one killed before it.
        assert len(os.listdir(tmp_path)) == 1

    class Writer:
        def export_chrome_trace(self, path: str) -> None:
            Path(path).write_text('{"traceEvents": []}')

    written = tensorboard_trace_handler(str(tmp_path), worker_name="w")(Writer())
    assert written is not None
    assert os.listdir(tmp_path) == [os.path.basename(written)]


def test_sweep_keeps_live_and_recent_foreign_writers(tmp_path: Path) -> None:
    host = socket.gethostname()
    final = format_trace_name("w", 1, True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        names = {
            "live": temp_name_for(final, f"{host}-{sleeper.pid}-{'a' * 12}-json"),
            "foreign_recent": temp_name_for(final, f"otherhost-1-{'b' * 12}-gz"),
            "foreign_old": temp_name_for(final, f"otherhost-1-{'c' * 12}-gz"),
            "unrelated": ".keep.tmp",
        }
        for name in names.values():
            (tmp_path / name).write_text("x")
        old = time.time() - 3 * 24 * 3600
        os.utime(tmp_path / names["foreign_old"], (old, old))
        removed = remove_stale_temp_files(str(tmp_path))
    finally:
        sleeper.kill()
        sleeper.wait()
    assert removed == [names["foreign_old"]]
    assert remove_stale_temp_files(str(tmp_path)) == [names["live"]]  # its writer is gone now
