"""A real small or read-only filesystem for fault tests: a tmpfs mounted in a private
mount namespace (`unshare -rm`, no root needed); tests skip where none can be made."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_CANNOT_MOUNT = 77


def run_on_small_tmpfs(
    tmp_path: Path, mount_options: str, script: str, *args: str, fill: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run Python `script` with argv [mount point, *args] on a fresh tmpfs mounted with
    `mount_options` (`fill`: filled up first). The files left on it are listed, one
    per line, after the script's own output."""
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        pytest.skip("needs unshare (Linux) to mount a small filesystem")
    script_path = tmp_path / "fault_script.py"
    script_path.write_text(script)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    fill_cmd = 'cat /dev/zero > "$1/fill" 2>/dev/null; ' if fill else ""
    shell = (
        f'mount -t tmpfs -o {mount_options} tmpfs "$1" || exit {_CANNOT_MOUNT}; {fill_cmd}'
        'mnt=$1; shift; "$@"; rc=$?; find "$mnt" -mindepth 1 -printf "%P\\n"; exit $rc'
    )
    command = [sys.executable, str(script_path), str(mnt), *args]
    proc = subprocess.run(
        ["unshare", "-rm", "sh", "-c", shell, "sh", str(mnt), *command],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if proc.returncode == _CANNOT_MOUNT or "unshare failed" in proc.stderr:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()[-200:]}")
    return proc
