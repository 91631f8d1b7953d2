"""The anchors: the old ``torch-tb-profiler`` plugin and HTA, in a venv of their own.

Neither anchor is ever imported by the harness or the product: they are installed into
``<work>/anchors-venv`` (made with ``python -m venv``) and run there as child processes.

Install notes (found out on Python 3.11, TensorBoard 2.21, pandas 3, numpy 2):

* ``torch-tb-profiler==0.4.3`` needs only ``pandas`` and ``tensorboard``; it imports neither
  ``torch`` nor ``pkg_resources`` (TensorBoard >= 2.x finds plugins through
  ``importlib.metadata``), so no ``setuptools`` pin is needed. TensorBoard is pinned to the
  version of the product's venv so both plugins run under the same server.
* ``holistictraceanalysis`` declares ``jupyterlab`` and ``pytest`` as hard requirements but
  imports neither; it is installed with ``--no-deps`` plus the libraries it really imports
  (numpy, pandas, networkx, plotly, pydot, psutil, pyyaml). It does not need ``torch``.
  If it fails to install or import, ``traceinsight`` (a fork with the same ``hta`` module)
  is tried instead.
* Nothing here depends on ``torch``, so pip never pulls a CUDA build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from _http import get, get_json, path_with
from _proc import Child, measures, outcome_error, run_measured
from _traces import TraceFile

TB_PROFILER = "torch-tb-profiler==0.4.3"
HTA_CANDIDATES = ("holistictraceanalysis==0.5.0", "traceinsight")
HTA_DEPS = ("numpy", "pandas", "networkx", "plotly", "pydot", "psutil", "pyyaml")
SPEC_VERSION = 1
OLD_PLUGIN = "/data/plugin/pytorch_profiler"
CHECK_TB = "import torch_tb_profiler.plugin, tensorboard"
CHECK_HTA = "from hta.trace_analysis import TraceAnalysis"

VERSIONS_CODE = """
import json, sys
from importlib import metadata
out = {"python": sys.version.split()[0]}
for name in %r:
    try:
        out[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        out[name] = None
print(json.dumps(out))
"""

HTA_CODE = """
import json, sys, time
t0 = time.perf_counter()
from hta.trace_analysis import TraceAnalysis
t1 = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
t2 = time.perf_counter()
df = analysis.get_temporal_breakdown(visualize=False)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "breakdown_s": t3 - t2,
                  "rows": int(len(df)), "columns": [str(c) for c in df.columns]}))
"""


@dataclass
class AnchorEnv:
    """The anchors' venv and what could be installed in it."""

    venv: Path
    versions: dict[str, Optional[str]] = field(default_factory=dict)
    tb_profiler_error: Optional[str] = None
    hta_error: Optional[str] = None
    hta_dist: Optional[str] = None
    install_seconds: float = 0.0
    reused: bool = False

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def tensorboard(self) -> Path:
        return self.venv / "bin" / "tensorboard"


def _run(cmd: list[str], log: Path, timeout: float) -> Optional[str]:
    """Run an install step, appending its output to ``log``: None or an error line."""
    with open(log, "ab") as f:
        f.write(("\n$ " + " ".join(cmd) + "\n").encode())
        f.flush()
        try:
            proc = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired:
            return f"timeout after {timeout:.0f} s: {' '.join(cmd)}"
        except OSError as e:
            return f"{e}: {' '.join(cmd)}"
    if proc.returncode != 0:
        return f"exit code {proc.returncode}: {' '.join(cmd)} (see {log.name})"
    return None


def _pip(env: AnchorEnv, args: list[str], log: Path, timeout: float) -> Optional[str]:
    return _run(
        [str(env.python), "-m", "pip", "install", "--disable-pip-version-check", *args],
        log,
        timeout,
    )


def _imports(env: AnchorEnv, module_code: str, log: Path) -> Optional[str]:
    return _run([str(env.python), "-c", module_code], log, 300)


def versions(python: Path, names: list[str]) -> dict[str, Optional[str]]:
    """Installed versions of ``names`` in the interpreter ``python`` (None when absent)."""
    try:
        out = subprocess.run(
            [str(python), "-c", VERSIONS_CODE % (names,)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
            check=True,
        ).stdout
        doc = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}
    return {str(k): (None if v is None else str(v)) for k, v in doc.items()}


def ensure_anchors(
    work: Path, base_python: str, tensorboard_version: Optional[str], timeout: float
) -> AnchorEnv:
    """Create or reuse ``<work>/anchors-venv`` with both anchors installed."""
    started = time.perf_counter()
    env = AnchorEnv(venv=work / "anchors-venv")
    log = work / "logs" / "anchors-install.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    tb_req = f"tensorboard=={tensorboard_version}" if tensorboard_version else "tensorboard"
    spec = {"v": SPEC_VERSION, "tb_profiler": TB_PROFILER, "tensorboard": tb_req}
    marker = env.venv / "kinetoscope-anchors.json"
    if not _reuse(env, spec, marker, log):
        if env.venv.exists():
            shutil.rmtree(env.venv)
        err = _run([base_python, "-m", "venv", str(env.venv)], log, 600)
        if err is not None:
            env.tb_profiler_error = env.hta_error = f"venv: {err}"
            env.install_seconds = time.perf_counter() - started
            return env
        err = _pip(env, [TB_PROFILER, tb_req], log, timeout)
        env.tb_profiler_error = err if err is not None else _imports(env, CHECK_TB, log)
        _install_hta(env, log, timeout)
        with open(marker, "w", encoding="utf-8") as f:
            json.dump({"spec": spec, "hta_dist": env.hta_dist, "hta_error": env.hta_error}, f)
    names = ["torch-tb-profiler", "tensorboard", "pandas", "numpy", "torch"]
    if env.hta_dist:
        names.append(env.hta_dist)
    env.versions = versions(env.python, names)
    if env.versions.get("torch") and env.tb_profiler_error is None:
        # Not an error, but worth knowing: nothing here should have pulled torch in.
        env.versions["torch_note"] = "torch got installed in the anchors venv"
    env.install_seconds = time.perf_counter() - started
    return env


def _reuse(env: AnchorEnv, spec: dict[str, Any], marker: Path, log: Path) -> bool:
    """Whether the venv was made for ``spec`` and its old plugin imports (then what its
    marker says of HTA is taken over)."""
    try:
        with open(marker, encoding="utf-8") as f:
            saved = json.load(f)
    except (OSError, ValueError):
        return False
    if not (
        isinstance(saved, dict)
        and saved.get("spec") == spec
        and env.python.exists()
        and _imports(env, CHECK_TB, log) is None
    ):
        return False
    env.reused = True
    env.hta_dist = saved.get("hta_dist")
    if env.hta_dist is None or _imports(env, CHECK_HTA, log) is not None:
        env.hta_error = saved.get("hta_error") or "HTA not importable"
    return True


def _install_hta(env: AnchorEnv, log: Path, timeout: float) -> None:
    """HTA's libraries, then the first of ``HTA_CANDIDATES`` that installs and imports."""
    errors: list[str] = []
    err = _pip(env, list(HTA_DEPS), log, timeout)
    if err is not None:
        errors.append(err)
    else:
        for candidate in HTA_CANDIDATES:
            dist = candidate.split("==")[0]
            err = _pip(env, ["--no-deps", candidate], log, timeout) or _imports(env, CHECK_HTA, log)
            if err is None:
                env.hta_dist = dist
                break
            errors.append(f"{dist}: {err}")
            _run([str(env.python), "-m", "pip", "uninstall", "-y", dist], log, 300)
    if env.hta_dist is None:
        env.hta_error = "; ".join(errors)


def _fresh_tmp(tool: str) -> Path:
    # In the system's temporary folder, not under the work folder: the old plugin's
    # multiprocessing Manager binds a Unix socket in TMPDIR, and a socket path over 107
    # bytes (a work folder named after a long trace) fails with "AF_UNIX path too long".
    return Path(tempfile.mkdtemp(prefix=f"kinetoscope-bench-{tool}-"))


@dataclass
class _Timeline:
    """When the old plugin first answered, listed the run, and served an Overview."""

    first_answer: Optional[float] = None
    listed: Optional[float] = None
    ready: Optional[float] = None


def measure_tb_profiler(
    env: AnchorEnv, tf: TraceFile, work: Path, port: int, timeout: float, rss_cap: int
) -> dict[str, Any]:
    """Start TensorBoard with the old plugin; time until its Overview answers with data."""
    if env.tb_profiler_error:
        return {"error": f"not installed: {env.tb_profiler_error}"}
    tmp = _fresh_tmp("tbprof")
    logf = work / "logs" / f"{tf.key}-torch_tb_profiler.log"
    child_env = dict(os.environ, TMPDIR=str(tmp))
    cmd = [str(env.tensorboard), "--logdir", str(tf.logdir), "--port", str(port)]
    cmd += ["--host", "127.0.0.1"]
    child = Child(
        cmd, timeout=timeout + 60, rss_cap_bytes=rss_cap, env=child_env, cwd=tmp, stderr=logf
    )
    result: dict[str, Any] = {"port": port}
    seen = _Timeline()
    try:
        error = _wait_for_overview(child, port, tf, timeout, seen, result)
    finally:
        outcome = child.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    result.update(
        measures(outcome),
        seconds=seen.ready,
        first_http_answer_s=seen.first_answer,
        run_listed_s=seen.listed,
        log=str(logf),
    )
    if seen.ready is None:
        result["error"] = error or "no answer"
        result["stderr_tail"] = outcome.stderr_tail[-600:]
    return result


def _wait_for_overview(
    child: Child, port: int, tf: TraceFile, timeout: float, seen: _Timeline, result: dict[str, Any]
) -> Optional[str]:
    """Poll until the Overview answers with data (None) or the server is gone (why)."""
    while True:
        error = _stopped(child, timeout)
        if error is not None:
            return error
        if seen.listed is None:
            status, doc = get_json(port, OLD_PLUGIN + "/runs", timeout=30)
            if status is not None and seen.first_answer is None:
                seen.first_answer = child.elapsed()
            if status == 200 and isinstance(doc, dict) and tf.run in (doc.get("runs") or []):
                seen.listed = child.elapsed()
            else:
                time.sleep(0.2)
                continue
        overview = _old_overview(port, tf)
        if overview is not None:
            seen.ready = child.elapsed()
            result.update(overview)
            return None
        time.sleep(0.2)


def _stopped(child: Child, timeout: float) -> Optional[str]:
    if child.elapsed() > timeout:
        return "timeout"
    if child.killed:
        return "killed: peak RSS over the cap" if child.killed == "rss_cap" else "timeout"
    code = child.poll()
    return None if code is None else f"tensorboard exited with code {code}"


def _old_overview(port: int, tf: TraceFile) -> Optional[dict[str, Any]]:
    """The old plugin's Overview of the file's first worker and span, once it has steps."""
    worker, span = tf.worker, tf.span
    status, workers = get_json(
        port, path_with(OLD_PLUGIN + "/workers", {"run": tf.run, "view": "Overview"})
    )
    if status == 200 and isinstance(workers, list) and workers:
        worker = str(workers[0])
    status, spans = get_json(
        port, path_with(OLD_PLUGIN + "/spans", {"run": tf.run, "worker": worker})
    )
    if status == 200 and isinstance(spans, list) and spans:
        span = str(spans[0])
    params = {"run": tf.run, "worker": worker, "span": span, "view": "Overview"}
    status, body, _ = get(port, path_with(OLD_PLUGIN + "/overview", params), timeout=60)
    if status != 200:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if not (isinstance(doc, dict) and "steps" in doc):
        return None
    steps = doc.get("steps")
    rows = steps.get("rows") if isinstance(steps, dict) else None
    return {
        "overview_bytes": len(body),
        "overview_step_rows": len(rows) if isinstance(rows, list) else None,
        "worker": worker,
        "span": span,
    }


def measure_hta(
    env: AnchorEnv, tf: TraceFile, work: Path, timeout: float, rss_cap: int
) -> dict[str, Any]:
    """``TraceAnalysis(trace_dir)`` then ``get_temporal_breakdown()`` in a fresh process."""
    if env.hta_error or not env.hta_dist:
        return {"error": f"not installed: {env.hta_error}"}
    tmp = _fresh_tmp("hta")
    out = work / "out" / f"{tf.key}-hta.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    logf = work / "logs" / f"{tf.key}-hta.log"
    outcome = run_measured(
        [str(env.python), "-c", HTA_CODE, str(tf.hta_dir)],
        timeout=timeout,
        rss_cap_bytes=rss_cap,
        env=dict(os.environ, TMPDIR=str(tmp)),
        cwd=tmp,
        stdout=out,
        stderr=logf,
    )
    shutil.rmtree(tmp, ignore_errors=True)
    result: dict[str, Any] = {**measures(outcome), "dist": env.hta_dist, "log": str(logf)}
    error = outcome_error(outcome)
    if error is None:
        try:
            lines = out.read_text(encoding="utf-8").strip().splitlines()
            result["phases"] = json.loads(lines[-1])
        except (OSError, ValueError, IndexError):
            error = "no result line on stdout"
    if error is not None:
        result["error"] = error
        result["seconds"] = None
        result["failed_after_s"] = outcome.seconds
        result["stderr_tail"] = outcome.stderr_tail[-600:]
    return result
