r"""`kinetoscope flamegraph LOGDIR --run R [--worker W --span S] --metric cpu|gpu
[--format folded|speedscope]`: the `flamegraph` route's numbers as files other tools read.

- `folded` (the default): one line per call path with time of its own,
  `frame;frame;...;frame value`, value in µs with up to 3 decimals (flamegraph.pl,
  inferno, speedscope and Perfetto read it). A Python frame prints as
  `function (file:line)`; `;` inside a name becomes `,` (it separates frames), and
  each control character (U+0000 to U+001F and U+007F: NUL, TAB, CR, LF, ...) is
  written `\xHH` (TAB `\x09`, CR `\x0d`): a raw one would cut or shift a line for the
  tools that read it.
- `speedscope`: a speedscope file (https://www.speedscope.app/file-format-schema.json),
  one "sampled" profile whose samples are the call paths and whose weights are their
  times in microseconds; frames carry `file` and `line` where known.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from typing import TYPE_CHECKING, Any

import msgspec

from ..api.dispatch import Dispatch
from ..api.endpoints import VIEWS
from ..api.lower import LoadFailed
from ..api.resolve import NotFound
from ..api.session import FixedListing, Session
from .errors import EXIT_LOAD, EXIT_USAGE, ParamRefused, ReportError
from .targets import targets

if TYPE_CHECKING:  # a name only: the view is not imported
    from ..analysis.flamegraph.types import FlameFrame

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def run_flamegraph(args: argparse.Namespace) -> int:
    with contextlib.closing(Session(FixedListing(()), cache=not args.no_cache)) as session:
        try:
            view, label = _view(session, args)
        except ParamRefused as exc:  # a usage error
            print(f"kinetoscope: {exc}", file=sys.stderr)
            return EXIT_USAGE
        except ReportError as exc:
            print(f"kinetoscope: {exc}", file=sys.stderr)
            return EXIT_LOAD
    if args.format == "speedscope":
        doc = speedscope(view, f"{label} ({args.metric})")
        sys.stdout.buffer.write(msgspec.json.encode(doc) + b"\n")
    else:
        sys.stdout.write("".join(line + "\n" for line in folded(view)))
    return 0


def _view(session: Session, args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """The route's answer for the chosen span, and a label naming it."""
    _, runs = targets(args, session)
    if len(runs) > 1:
        names = ", ".join(r.name for r in runs)
        raise ParamRefused(f"{args.logdir}: several runs ({names}): choose one with --run")
    run = runs[0]
    asked = {"run": run.name, "worker": args.worker, "span": args.span}
    call = Dispatch(VIEWS["flamegraph"], session, asked, {"metric": args.metric})
    try:
        view = call.ready().json()
    except NotFound as exc:
        raise ReportError(str(exc)) from None
    except LoadFailed as exc:
        raise ReportError(exc.error["message"]) from None
    target = call.targets[0]
    return view, f"{run.name}:{target.worker.name}:{target.span.name}"


def frame_label(frame: FlameFrame) -> str:
    """A frame as one folded-stack field."""
    name = frame["name"]
    if frame["file"] is not None:
        name += f" ({frame['file']}:{frame['line']})" if frame["line"] is not None else ""
    return _CONTROLS.sub(_hex, name.replace(";", ","))


_CONTROLS = re.compile(r"[\x00-\x1f\x7f]")


def _hex(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def _paths(view: dict[str, Any]) -> list[tuple[list[int], float]]:
    """(frame indices from the root, own time) of each node with time of its own."""
    parent, frame, own = view["node_parent"], view["node_frame"], view["node_self_us"]
    path_of: list[list[int]] = []
    out: list[tuple[list[int], float]] = []
    for i, p in enumerate(parent):  # pre-order: a parent comes first
        path = [*path_of[p], frame[i]] if p >= 0 else [frame[i]]
        path_of.append(path)
        if own[i] > 0:
            out.append((path, own[i]))
    return out


def folded(view: dict[str, Any]) -> list[str]:
    labels = [frame_label(f) for f in view["frames"]]
    return [f"{';'.join(labels[f] for f in path)} {_number(value)}" for path, value in _paths(view)]


def _number(value: float) -> str:
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def speedscope(view: dict[str, Any], name: str) -> dict[str, Any]:
    frames = []
    for f in view["frames"]:
        out: dict[str, Any] = {"name": f["name"]}
        if f["file"] is not None:
            out["file"] = f["file"]
        if f["line"] is not None:
            out["line"] = f["line"]
        frames.append(out)
    paths = _paths(view)
    total = sum(v for _, v in paths)
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "shared": {"frames": frames},
        "profiles": [
            {
                "type": "sampled",
                "name": name,
                "unit": "microseconds",
                "startValue": 0,
                "endValue": total,
                "samples": [path for path, _ in paths],
                "weights": [v for _, v in paths],
            }
        ],
        "name": name,
        "activeProfileIndex": 0,
        "exporter": "kinetoscope",
    }
