"""Facts of the machine a benchmark runs on, recorded beside its numbers, and the
byte-compiling of the product before it is measured."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Optional

from _anchors import versions
from _results import REPO, rel


def meminfo_total() -> Optional[int]:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _cpu_model() -> Optional[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def _cmd_out(cmd: list[str]) -> Optional[str]:
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=30, check=True, stdin=subprocess.DEVNULL
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip() or None


_SCANNER_CHECK = "from kinetoscope.ingest import native_chunk as n; print(n.scanner_enabled())"


def machine_facts(product_python: Path) -> dict[str, Any]:
    """What the results file records of the machine, the product and the checkout."""
    gzip_version = _cmd_out(["gzip", "--version"])
    dirty = _cmd_out(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"])
    return {
        "nproc": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "mem_total_bytes": meminfo_total(),
        "cpu_model": _cpu_model(),
        "platform": platform.platform(),
        "harness_python": platform.python_version(),
        "product_python": rel(product_python) if product_python.is_relative_to(REPO) else None,
        "product": versions(
            product_python,
            ["kinetoscope", "numpy", "msgspec", "pandas", "tensorboard", "isal", "werkzeug"],
        ),
        "gzip": gzip_version.splitlines()[0] if gzip_version else None,
        # Whether loads used the compiled event scanner (a build without a C compiler
        # reads every chunk with msgspec, about twice as slow).
        "compiled_scanner": _cmd_out([str(product_python), "-c", _SCANNER_CHECK]),
        "git_commit": _cmd_out(["git", "-C", str(REPO), "rev-parse", "HEAD"]),
        "git_dirty": bool(dirty) if dirty is not None else None,
        "env": {
            k: v
            for k, v in os.environ.items()
            if k.startswith(("OPENBLAS_", "KINETOSCOPE_")) or k == "PYTHONDONTWRITEBYTECODE"
        },
        "loadavg_start": list(os.getloadavg()),
    }


def compile_product(product_python: Path) -> Optional[str]:
    """Byte-compile the product's sources, as installing a wheel does. Without it, an
    editable install under PYTHONDONTWRITEBYTECODE=1 compiles every module at every start
    (~0.1 s of CPU, a third of a warm run), a cost no installed user pays."""
    sources = [str(REPO / "tb_plugin"), str(REPO / "handlers")]
    cmd = [str(product_python), "-m", "compileall", "-q", *sources]
    try:
        subprocess.run(cmd, check=True, timeout=300, stdin=subprocess.DEVNULL, capture_output=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"compileall failed: {exc}"
    return None
