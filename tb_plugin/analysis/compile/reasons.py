"""The texts torch writes about a compile, read into parts: a recompile reason (which guard
failed, of what kind, from which user line) and a graph break's reason (where, why, the
hints, the user's frames).

Recompile reasons (`recompile_reasons` artifact, `recompile_reason` metric) are one line per
cache entry the frame failed, `"<compile id>: <guard failure>"`, the newest entry first;
a guard on a Python value adds `# <source code>  # <file>:<line> in <function>` and a
`User stack trace:` below it. Shapes read as `tensor 'x' size mismatch at index 0. expected
8, actual 4` (torch's `TensorGuards` text).

A graph break (`dynamo_graph_break_reason`) reads
`Graph break in user code at <file>:<line>`, `Graph Break Reason: ...`, then the break's
type, `Explanation:`, `Hint:` lines, and `User code traceback:` with `File "...", line N, in
f` frames (outermost first)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.python_stacks import is_library_file
from .types import SourceLine

_ENTRY = re.compile(r"^(!?[\d/]+(?:_\d+)?): (.*)$", re.S)
_SIZE = re.compile(
    r"tensor '(?P<name>[^']+)' (?P<what>size|stride) mismatch at index (?P<dim>\d+)\. "
    r"expected (?P<expected>\S+), actual (?P<actual>\S+)"
)
_TENSOR = re.compile(r"tensor '[^']+' (dtype|device|requires_grad|dispatch key set|rank)")
# The guard's user line, `# <file>:<line> in <function>`, then maybe torch's hint in
# parentheses (ints on an nn.Module); torch cuts a long file to its last characters.
_SOURCE = re.compile(
    r"#\s*(?P<file>[^#\s][^#]*?):(?P<line>\d+) in (?P<name>[^\s(]+)"
    r"\s*(?:\(HINT: (?P<hint>.*)\))?\s*$"
)
_COMPARED = re.compile(r"^(?P<subject>.+?)\s*(?:==|!=)\s*(?P<value>.+)$")
_INT = re.compile(r"^-?\d+$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<name>.+?)\s*$')
_COMMENT = re.compile(r"\s+#\s")  # the guard's source comment: `x == 1  # if x: ...`
_BREAK_AT = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$")


@dataclass
class RecompileReason:
    kind: str  # shape, stride, tensor, value, type, id, length, other
    guard: str  # the failed guard, without its cache entry's id
    of_entry: str | None  # the compile id of the cache entry that failed it
    detail: str | None  # "tensor 'x' dim 0: 8 → 4"
    tensor: str | None  # shape/stride: the tensor's name
    dim: int | None
    source: SourceLine | None
    sizes: tuple[str, str] | None = None  # shape/stride: (expected, actual)
    hint: str | None = None  # torch's own hint on the guard, when it gave one
    subject: str | None = None  # a value guard's expression (`n`, `self.k`), not its value
    int_value: bool = False  # the value guarded is an int (torch can make an argument dynamic)


def recompile_reason(text: str) -> RecompileReason:
    """One reason's parts; whatever the text, a reason (kind `other` when unknown). Given
    with its user stack (the lines after the first), the source's file is the stack's."""
    first, _, stack = text.strip().partition("\n")
    m = _ENTRY.match(first)
    entry, guard = (m.group(1), m.group(2)) if m else (None, first)
    guard = guard.strip()
    size = _SIZE.search(guard)
    if size:
        detail = (
            f"tensor '{size['name']}' {size['what']} of dim {size['dim']}: "
            f"{size['expected']} → {size['actual']}"
        )
        kind = "shape" if size["what"] == "size" else "stride"
        sizes = (size["expected"], size["actual"])
        tensor, dim = size["name"], int(size["dim"])
        return RecompileReason(kind, guard, entry, detail, tensor, dim, None, sizes)
    code = _COMMENT.split(guard, maxsplit=1)[0].strip()
    source = _SOURCE.search(guard)
    where = (
        SourceLine(file=source["file"], line=int(source["line"]), name=source["name"])
        if source
        else None
    )
    if where is not None:
        where = _stack_file(where, stack)
    compared = _COMPARED.match(code)
    reason = RecompileReason(_guard_kind(code), code, entry, None, None, None, where)
    reason.hint = source["hint"] if source else None
    reason.subject = compared["subject"].strip() if compared else None
    reason.int_value = bool(compared and _INT.match(compared["value"].strip()))
    return reason


def _stack_file(where: SourceLine, stack: str) -> SourceLine:
    """The source line with its whole file, from the user stack's frame of that line and
    function (torch's comment keeps a long path's last characters only)."""
    for line in stack.splitlines():
        frame = _FRAME.match(line)
        if (
            frame
            and int(frame["line"]) == where["line"]
            and frame["name"] == where["name"]
            and frame["file"].endswith(where["file"] or "")
        ):
            return SourceLine(file=frame["file"], line=where["line"], name=where["name"])
    return where


def _guard_kind(code: str) -> str:
    if _TENSOR.search(code):
        return "tensor"
    if "___check_type_id" in code or "type(" in code:
        return "type"
    if "___check_obj_id" in code or " is " in code:
        return "id"
    if code.startswith("len(") or "len(" in code.split("==")[0]:
        return "length"
    if any(op in code for op in (" == ", " != ", " < ", " > ", " <= ", " >= ")):
        return "value"
    return "other"


@dataclass
class GraphBreakText:
    file: str | None
    line: int | None
    reason: str
    explanation: str | None
    hints: list[str] = field(default_factory=list)
    stack: list[SourceLine] = field(default_factory=list)

    @property
    def user(self) -> SourceLine | None:
        """The innermost frame of the user's own code (not torch, not the standard
        library, not an installed package); None when every frame is library code."""
        return next((f for f in reversed(self.stack) if not is_library_file(f["file"] or "")), None)


def graph_break_text(text: str) -> GraphBreakText:
    """A `dynamo_graph_break_reason` payload, or a `restart_reasons` entry (older torch
    writes only the reason: no place, no stack)."""
    lines = text.strip().splitlines()
    out = GraphBreakText(None, None, "", None)
    body: list[str] = []
    in_stack = False
    for line in lines:
        at = _BREAK_AT.match(line)
        if at and out.file is None:
            out.file, out.line = at["file"], int(at["line"])
        elif line.startswith("User code traceback:"):
            in_stack = True
        elif in_stack:
            frame = _FRAME.match(line)
            if frame:
                out.stack.append(
                    SourceLine(file=frame["file"], line=int(frame["line"]), name=frame["name"])
                )
        elif not line.startswith("Graph Break Reason:"):
            body.append(line)
    _read_body(out, body, lines)
    return out


def _read_body(out: GraphBreakText, body: list[str], lines: list[str]) -> None:
    """The break's type (its first line), explanation and hints."""
    for line in body:
        text = line.strip()
        if text.startswith("Explanation:"):
            out.explanation = text[len("Explanation:") :].strip()
        elif text.startswith("Hint:"):
            out.hints.append(text[len("Hint:") :].strip())
        elif text and not out.reason and not text.startswith(("Developer debug", "For more")):
            out.reason = text.strip("'\"")
    if not out.reason:
        general = next((x for x in lines if x.startswith("Graph Break Reason:")), "")
        out.reason = general[len("Graph Break Reason:") :].strip() or "graph break"
