"""A real `tensorboard` process for a test, on a port the system picks when TensorBoard
binds it (`--port 0`; the port read from its banner). A port found free beforehand can be
taken by another process (a Dask scheduler, another test worker's server) before
TensorBoard binds it, and TensorBoard then exits ("could not bind"): seen in CI."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

BANNER = re.compile(r"TensorBoard \S+ at http://127\.0\.0\.1:(\d+)/")


class TensorBoard:
    """The process, its port, and everything it printed so far (read by a thread, so a
    full pipe never stalls it)."""

    def __init__(self, logdir: str, env: dict[str, str] | None = None) -> None:
        tensorboard = Path(sys.executable).with_name("tensorboard")
        self.proc = subprocess.Popen(
            [str(tensorboard), "--logdir", logdir, "--host", "127.0.0.1", "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.port = self._banner_port(timeout=90)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.append(raw.decode("utf-8", "replace").rstrip())

    def _banner_port(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                found = BANNER.search(line)
                if found:
                    return int(found.group(1))
            assert self.proc.poll() is None or self._reader.is_alive(), self.output()
            time.sleep(0.1)
        raise AssertionError(f"no TensorBoard banner in {timeout} s:\n{self.output()}")

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def running(self) -> bool:
        return self.proc.poll() is None

    def output(self) -> str:
        return "\n".join(self.lines)

    def stop(self) -> None:
        if self.running():
            os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=20)
        self._reader.join(timeout=5)
