"""What an endpoint is: one entry per HTTP route. Each view folder of analysis declares its
own (`<view>/endpoint.py`, `ENDPOINTS`); `api/endpoints.py` collects them with the routes
above analysis (listing, trace view, files) into the table.

An endpoint names its scope (what the query addresses), its request type (the query
parameters, decoded once by `requests.decode_request`), its response type (the contract:
TypeScript types and the docs' examples are checked against it), its compute function
(pure: no I/O, no HTTP) or else how the handler answers it, how its answers are cached, a
version that keys the cache, and the page that lists it in `status.views` (or a run's
`views`)."""

from __future__ import annotations

import enum
import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from .requests import NoParams, Params, decode_request, request_fields
from .rules import data_version, load

if TYPE_CHECKING:
    from ...model.trace_model import TraceModel
    from ...store.run_context import RunContext
    from ...store.trace_store import TraceStore


class Scope(enum.Enum):
    """What `run`, `worker`/`workers` and `span` address; the handler resolves it."""

    LOGDIR = "logdir"  # nothing: the whole logdir
    RUN = "run"  # ?run=R (span S of every worker for run-level views)
    WORKER = "worker"  # ?run=R&worker=W
    SPAN = "span"  # ?run=R&worker=W[&span=S]: one trace file
    SPANS = "spans"  # ... or ?run=R&workers=W1,W2[&span=S]: several, on one time axis
    # Two spans, base and target: ?run=R&worker=W[&span=S]&target_run=R2&target_worker=W2
    # [&target_span=S2]; the compute function gets both models (base first).
    PAIR = "pair"
    STATIC = "static"  # files of the built frontend


# The query names each scope takes, written once: (name, whether the browser must give it;
# the others default: the first worker, the first span), and what the scope is. The MCP
# tools' inputs and the browser's generated scope types are made from it; the dispatcher
# resolves the names (`api/dispatch.py`).
SCOPE_NAMES: dict[Scope, tuple[str, tuple[tuple[str, bool], ...]]] = {
    Scope.LOGDIR: ("The whole logdir: no name.", ()),
    Scope.RUN: (
        "Run-level: every worker of the run; `span` defaults to the first.",
        (("run", True), ("span", False)),
    ),
    Scope.WORKER: ("One worker of a run.", (("run", True), ("worker", True))),
    Scope.SPAN: (
        "One worker-span (`span` missing: the worker's first).",
        (("run", True), ("worker", True), ("span", False)),
    ),
    Scope.SPANS: (
        "One worker-span, or `workers` (comma-separated) on one time axis.",
        (("run", True), ("worker", False), ("workers", False), ("span", False)),
    ),
    Scope.PAIR: (
        "Two worker-spans: the base, and `target_*` the target (`target_span` missing: its "
        "first).",
        (
            ("run", True), ("worker", True), ("span", False),
            ("target_run", True), ("target_worker", True), ("target_span", False),
        ),
    ),
}  # fmt: skip


class Answer(enum.Enum):
    """How the handler makes the answer once it has resolved the scope."""

    COMPUTE = "compute"  # the compute function of what the scope resolved (with the params)
    STATUS = "status"  # the span's load state in the store, as it is now (never 202)
    RUN_JOB = "run_job"  # the store's background job over the run's ranks (202 with progress)
    FILE = "file"  # a file, not JSON: the span's trace file, or one of the built frontend


class Cache(enum.Enum):
    ALL = "all"  # every parameter form, in memory and on disk with the trace
    DEFAULT_FORM = "default_form"  # only the form without parameters (what a page shows first)
    NONE = "none"  # computed per request (windows, ranges, progress)


def _always(target: Any) -> bool:
    return True


def has_events(model: Any) -> bool:
    """Offered for a trace with any event (the Overview's sections)."""
    return len(model) > 0


class _SpanStatus:
    """The body of a span view's 202 while its trace loads: the span's load status, whose
    type (`api.contract.StatusResponse`) lives above analysis with the `status` route that
    answers it. A view folder names it by this marker; `api.endpoints` puts the type in
    its place when it collects the folders' endpoints."""

    def __repr__(self) -> str:
        return "SPAN_STATUS"


SPAN_STATUS: Any = _SpanStatus()


class Lazy(msgspec.Struct, frozen=True):
    """A module's attribute, named by path and imported when first read: the table lists
    every route without importing the modules of the routes a command never answers
    (`kinetoscope report` reads one trace's views, not the trace view's or a logdir's)."""

    module: str
    name: str

    def get(self) -> Any:
        return getattr(importlib.import_module(self.module), self.name)


def _resolved(value: Any) -> Any:
    return value.get() if isinstance(value, Lazy) else value


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module's `__getattr__` (PEP 562) for the names it exports from others (`where`:
    name -> the module under `package` defining it), each imported when first read: a
    view folder's `__init__`, so importing its endpoint or types does not import its
    compute; the contract's names of view types."""

    def exported(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return exported


class Endpoint(msgspec.Struct, frozen=True):
    name: str
    scope: Scope
    # A TypedDict: the JSON body of a 200; None when not JSON (or a `Lazy` of it: `response`)
    response_ref: Any
    # None: `answer` says how the handler answers (or a `Lazy` of it: `compute`)
    compute_ref: Callable[..., Any] | Lazy | None = None
    # A TypedDict of the query parameters besides the scope's (or a `Lazy` of it: `request`)
    request_ref: Any = NoParams
    version: str = "1"
    cache: Cache = Cache.NONE
    page: str | None = None  # the page that lists it (`status.views`, a run's `views`)
    supports: Callable[[Any], bool] = _always  # of the model (run-level: of the Run)
    # The body of its 202 while the data loads (or a `Lazy` of it: `loading`); None: never
    loading_ref: Any = None
    answer: Answer = Answer.COMPUTE
    # A page's view is part of `kinetoscope report` unless this says not (an export with
    # a command of its own); `--view NAME` still asks for it.
    report: bool = True
    # Scope.SPANS: a function like the compute function's answering its JSON (encoded
    # once while kept: `trace_view.workers.kept_json`), or a `Lazy` of it; None: none
    kept_ref: Callable[..., Any] | Lazy | None = None
    # The view's CLI text, `(view JSON, width) -> str` (or a `Lazy` of it: `text`); None:
    # the view has none
    text_ref: Callable[..., str] | Lazy | None = None
    # The view's notebook frames by the notebook method that returns them, each
    # `(view JSON) -> DataFrame` (or a `Lazy` of it: `frame(name)`)
    frames_ref: Mapping[str, Callable[..., Any] | Lazy] = msgspec.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.answer is Answer.COMPUTE and self.compute_ref is None:
            raise TypeError(f"endpoint {self.name!r} is answered by a compute function: give one")

    @property
    def response(self) -> Any:
        return _resolved(self.response_ref)

    @property
    def compute(self) -> Callable[..., Any] | None:
        return _resolved(self.compute_ref)  # type: ignore[no-any-return]

    @property
    def request(self) -> Any:
        return _resolved(self.request_ref)

    @property
    def loading(self) -> Any:
        return _resolved(self.loading_ref)

    @property
    def text(self) -> Callable[[Any, int], str] | None:
        return _resolved(self.text_ref)  # type: ignore[no-any-return]

    def frame(self, name: str) -> Callable[..., Any]:
        return _resolved(self.frames_ref[name])  # type: ignore[no-any-return]

    def decode(self, args: Params) -> dict[str, Any]:
        """The query's parameters as an instance of the request type, each parsed once
        (ViewParamError, 400, on a bad one); the compute function reads them typed. An
        empty query is the empty instance (the type is not even imported)."""
        return decode_request(self.request, args) if args else {}

    def _function(self) -> Callable[..., Any]:
        compute = self.compute
        if compute is None:
            raise TypeError(f"endpoint {self.name!r} has no compute function")
        return compute

    # One typed entry per scope: what each compute function is given, said once here.

    def of_span(self, model: TraceModel, params: Mapping[str, Any]) -> Any:
        """Scope.SPAN: one trace's model and the decoded query."""
        return self._function()(model, params)

    def of_traces(self, traces: Sequence[Any], params: Mapping[str, Any]) -> Any:
        """Scope.SPANS: the trace view's workers (`trace_view.workers.WorkerTrace`, one
        time axis) and the decoded query."""
        return self._function()(traces, params)

    def traces_json(self, traces: Sequence[Any], params: Mapping[str, Any]) -> bytes:
        """Scope.SPANS: `of_traces`'s JSON; a kept answer's own (`kept_ref`)."""
        if self.kept_ref is not None:
            json: bytes = _resolved(self.kept_ref)(traces, params)
            return json
        return msgspec.json.encode(self.of_traces(traces, params))

    def of_pair(self, base: TraceModel, target: TraceModel, params: Mapping[str, Any]) -> Any:
        """Scope.PAIR: the base's model, the target's, and the decoded query."""
        return self._function()(base, target, params)

    def of_context(self, context: RunContext) -> Any:
        """A run-level or logdir-level job (`Answer.RUN_JOB`): one RunContext."""
        return self._function()(context)

    def of_listing(self, *names: Any) -> Any:
        """The listing routes: (runs) for the logdir, (run) for a run, (run, worker)."""
        return self._function()(*names)

    @property
    def memory_cost(self) -> float:
        """Its memory beside the models it reads, over their bytes (`data/view_costs.json`)."""
        costs = load("view_costs")
        return float(costs["cost"].get(self.name, costs["default"]))

    def run_need(self, files: Iterable[tuple[str, int]]) -> int:
        """A run-level job's memory, in bytes, from its trace files (path, size), one a
        rank: its cost over the models they load into, estimated from each file's size
        and form, and at least its cost a rank (a run of many small ranks joined from
        summaries holds more a rank than its models' bytes say)."""
        costs = load("view_costs")
        per_byte = costs["model_bytes_per_file_byte"]
        plain = (".json", ".jsonl")
        files = list(files)
        models = sum(
            size * per_byte["json" if path.endswith(plain) else "compressed"]
            for path, size in files
        )
        per_rank = float(costs.get("rank_cost", {}).get(self.name, 0))
        return int(max(self.memory_cost * models, per_rank * len(files)))

    @property
    def params(self) -> tuple[str, ...]:
        """Query parameters it reads besides run/worker/span."""
        return request_fields(self.request)

    @property
    def in_report(self) -> bool:
        """Part of `kinetoscope report` by default (`status.views` lists every page)."""
        return self.page is not None and self.report

    def caches(self, params: Mapping[str, Any]) -> bool:
        """Whether its answer to these decoded parameters is kept with the trace (in the
        store's views, and on disk): every form, or only the one without parameters."""
        return self.cache is Cache.ALL or (self.cache is Cache.DEFAULT_FORM and not params)

    def answer_json(self, store: TraceStore, path: str, params: Mapping[str, Any]) -> bytes:
        """Its JSON for the trace at `path` and these decoded parameters: kept with the
        trace when `caches(params)`, else computed each time. The one way the plugin, the
        CLI and the notebook get a span view (the store's NotReady while it loads)."""

        def compute(model: Any) -> Any:
            return self.of_span(model, params)

        cost = self.memory_cost
        if self.caches(params):
            return store.view(path, self.cache_name(params), compute, cost)
        return store.computed(store.model(path), path, self.cache_name(params), compute, cost)

    def cache_name(self, params: Mapping[str, Any]) -> str:
        """The cache entry of an answer: name, versions and a digest of the decoded
        parameters given (integers and choices print as their query text does)."""
        given = self.params if params else ()  # no parameters: the type is not imported
        used = [f"{k}={params[k]}" for k in given if params.get(k) not in (None, "")]
        suffix = "&".join(used)
        # The kernel taxonomy's version keys every view: all of them read its classes.
        version = f"{self.version}t{data_version('kernel_taxonomy')}"
        return f"{self.name}-v{version}" + (f"@{_digest(suffix)}" if suffix else "")


def _digest(text: str) -> str:
    import hashlib  # here: OpenSSL's load (~3 ms) only for an answer with parameters

    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def span_view(
    name: str,
    response: Any,
    compute: Any,
    request: Any,
    version: str,
    cache: Cache,
    page: str | None = None,
    supports: Callable[[Any], bool] = _always,
    report: bool = True,
    text: Callable[..., str] | Lazy | None = None,
    frames: Mapping[str, Callable[..., Any] | Lazy] | None = None,
) -> Endpoint:
    """A pure function of one span's model; 202 with the span's status while it loads;
    `text` and `frames` its CLI text and notebook frames, kept in its folder."""
    return Endpoint(
        name,
        Scope.SPAN,
        response,
        compute,
        request,
        version,
        cache,
        page,
        supports,
        SPAN_STATUS,
        report=report,
        text_ref=text,
        frames_ref=dict(frames or {}),
    )


def overview_section(
    name: str,
    module: str,
    version: str,
    supports: Callable[[Any], bool],
    text: Callable[..., str] | Lazy | None = None,
    frames: Mapping[str, Callable[..., Any] | Lazy] | None = None,
) -> Endpoint:
    """A section of the Overview page (its `page`, so `kinetoscope report` prints it and
    `status.views` stays as it was): `<module>.<Name>View`, `<module>.<name>_view`, both
    imported when first used; `text` its CLI text, `frames` its notebook frames."""
    response = Lazy(module, "".join(p.title() for p in name.split("_")) + "View")
    compute = Lazy(module, f"{name}_view")
    return span_view(
        name,
        response,
        compute,
        NoParams,
        version,
        Cache.ALL,
        page="overview",
        supports=supports,
        text=text,
        frames=frames,
    )
