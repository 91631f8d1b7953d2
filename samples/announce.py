"""Prints the kinetoscope tab's link once TensorBoard answers, so that it is the last line
a user sees after `samples/demo.sh` (TensorBoard prints its own banner, a plain URL, as it
starts serving). Run in the background by demo.sh:

    python samples/announce.py HOST PORT &

It asks TensorBoard's plugin listing, which answers only once the server loop runs (after
the banner); it gives up quietly when the process that started it (TensorBoard, after
demo.sh's `exec`) is gone, or after `--wait-s` seconds."""

from __future__ import annotations

import argparse
import os
import time
import urllib.error
import urllib.request


def tab_link(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"http://{shown}:{port}/#kinetoscope"


def wait_until_up(host: str, port: int, wait_s: float) -> bool:
    """Whether TensorBoard at host:port answered within `wait_s` while our parent lived."""
    parent = os.getppid()
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::', '') else host}:{port}"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and os.getppid() == parent:
        try:
            with urllib.request.urlopen(f"{url}/data/plugins_listing", timeout=2) as reply:
                if reply.status == 200:
                    return True
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.3)
    return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--wait-s", type=float, default=600.0)
    args = parser.parse_args()
    if wait_until_up(args.host, args.port, args.wait_s):
        link = tab_link(args.host, args.port)
        print(f'\nkinetoscope: open {link} (the "PyTorch Profiler" tab)', flush=True)


if __name__ == "__main__":
    main()
