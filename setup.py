"""Packaging for kinetoscope: the import package lives in tb_plugin/, the handler in handlers/."""

from __future__ import annotations

from setuptools import Extension, find_packages, setup

# The buffer helpers of the compiled passes' entry points, included by several of them.
CBUF = "_cbuf.h"


def optional_c(module: str, depends: list[str], flags: list[str] | None = None) -> Extension:
    """The C module `kinetoscope.<module>` from tb_plugin/<module path>.c, rebuilt when it or
    one of its headers (`depends`, paths under tb_plugin/) changes. Optional: where it
    cannot be built (no C compiler), its Python twin gives the same answers, only slower."""
    return Extension(
        f"kinetoscope.{module}",
        [f"tb_plugin/{module.replace('.', '/')}.c"],
        depends=[f"tb_plugin/{path}" for path in depends],
        optional=True,
        extra_compile_args=flags or ["-O2"],
    )


setup(
    name="kinetoscope",
    version="0.1.0",
    description="TensorBoard plugin and trace handler for PyTorch profiler (Kineto) traces",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    license="BSD-3-Clause",
    python_requires=">=3.9",
    package_dir={"kinetoscope": "tb_plugin", "kinetoscope.handlers": "handlers"},
    # Every subpackage of tb_plugin/, found rather than listed, so none is left out.
    packages=["kinetoscope", "kinetoscope.handlers"]
    + ["kinetoscope." + p for p in find_packages("tb_plugin")],
    package_data={"kinetoscope": ["static/dist/*", "static/dist/**/*", "data/*.json"]},
    include_package_data=False,
    # The compiled event scanner (ingest/native_chunk.py). Optional: where it cannot be
    # built (no C compiler), the same columns come from the msgspec path, only slower.
    ext_modules=[
        optional_c("ingest._scan", depends=["ingest/_scan_json.h", "ingest/_scan_rows.h"]),
        # The compiled parent search of nested ranges (analysis/core/tree_arrays.py).
        # Optional too: without it numpy's passes give the same parents. No fused
        # multiply-adds: its sums round as numpy's do, bit for bit.
        optional_c("analysis.core._nesting", depends=[CBUF], flags=["-O2", "-ffp-contract=off"]),
        # The compiled read of a sparse column (model/sparse_column.py). Optional too:
        # without it numpy's steps give the same values.
        optional_c("model._sparse", depends=[CBUF]),
        # The compiled evaluation of a critical path graph (analysis/critical_path/
        # retime.py): a what-if re-times the graph once per change. Optional too: its
        # Python loop gives the same doubles (no fused multiply-adds here either).
        optional_c(
            "analysis.critical_path._retime", depends=[CBUF], flags=["-O2", "-ffp-contract=off"]
        ),
        # The compiled passes of the critical path's host pieces (analysis/critical_path/
        # host.py). Optional too: without it numpy's steps give the same pieces.
        optional_c("analysis.critical_path._pieces", depends=[CBUF]),
        # The compiled passes of the trace view's windows (counter series, block order:
        # trace_view/counters.py, window.py). Optional too: without it numpy's passes give
        # the same answers.
        optional_c("trace_view._passes", depends=[CBUF], flags=["-O2", "-ffp-contract=off"]),
        # The compiled Perfetto reader (ingest/perfetto/native.py). Optional too: without
        # it the protobuf runtime's reader (ingest/perfetto/events.py) gives the same model.
        # -O3: its reading thread's CPU on a 253 MB trace's packets 0.86 -> 0.77 s.
        optional_c(
            "ingest.perfetto._native",
            depends=[
                f"ingest/perfetto/_pf_{part}.h"
                for part in (
                    "annot",
                    "args",
                    "base",
                    "check_cache",
                    "core",
                    "dispatch",
                    "event_args",
                    "events",
                    "module",
                    "packet",
                    "prepare",
                    "reader",
                    "rows",
                    "store",
                    "text",
                    "tracks",
                    "wire",
                )
            ],
            flags=["-O3"],
        ),
    ],
    install_requires=[
        "tensorboard>=2.11",
        "werkzeug>=2.0",
        "numpy>=1.22",
        "msgspec>=0.18",
        # The trace view's numeric columns written as JSON from numpy (`json_columns`).
        "orjson>=3.9",
        "isal>=1.5",
        # Perfetto protobuf traces (`ingest/perfetto`); TensorBoard needs it too.
        "protobuf>=4.21",
    ],
    extras_require={
        # Cloud logdirs (s3://, gs://, az://): fsspec and the store's backend.
        "s3": ["fsspec>=2023.1", "s3fs>=2023.1"],
        "gcs": ["fsspec>=2023.1", "gcsfs>=2023.1"],
        "azure": ["fsspec>=2023.1", "adlfs>=2023.1"],
        # Per-rank summaries on a Dask cluster (`KINETOSCOPE_DASK_SCHEDULER`, `--dask`).
        "dask": ["dask[distributed]>=2023.1"],
        # `kinetoscope.open(...)`: views as DataFrames (the notebook API; docs/python_api.md).
        "notebook": ["pandas>=1.4"],
        # `kinetoscope mcp LOGDIR`: the views as MCP tools for AI agents (docs/agents.md).
        "mcp": ["mcp>=2.3", "uvicorn>=0.30"],
        "dev": [
            "pandas>=1.4",
            "import-linter>=2.13",
            "mcp>=2.3",
            "pytest>=7",
            "pytest-timeout",
            "pytest-xdist>=3",  # tests/run.sh: two workers
            "hypothesis>=6",
            "ruff>=0.5",
            "mypy>=1.8",
            # tests/test_cloud_logdir.py: a real S3 API served locally
            "fsspec>=2023.1",
            "s3fs>=2023.1",
            "moto[server]>=5",
            "dask[distributed]>=2023.1",
        ],
    },
    entry_points={
        "tensorboard_plugins": [
            "kinetoscope = kinetoscope.serve.loader:KinetoscopeLoader",
            # Old `#pytorch_profiler` links (the deleted torch-tb-profiler's tab) open ours.
            "kinetoscope_old_links = kinetoscope.serve.loader:OldLinksLoader",
        ],
        "console_scripts": ["kinetoscope = kinetoscope.__main__:run"],
    },
)
