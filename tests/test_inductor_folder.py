"""The `inductor_code/` folder beside a compiled trace is listed through the storage layer:
only inside the trace's folder (or a KINETOSCOPE_SOURCE_ROOTS folder), and bounded."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from kinetoscope.analysis.kernels import kernels
from kinetoscope.ingest import storage
from kinetoscope.ingest.build import build_model

H100_COMPILED = Path(__file__).parent / "data" / "h100" / "compiled"
GELU = "triton_poi_fused_gelu_view_2"
FROM_WRAPPER = ["aten::view", "aten::gelu"]  # the wrapper's `Original ATen` order
FROM_NAME = ["aten::gelu", "aten::view"]  # the kernel name's order


def _trace_beside(folder: Path) -> str:
    src = next(H100_COMPILED.glob("*.pt.trace.json.gz"))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, folder / src.name)
    return str(folder / src.name)


def _gelu_ops(path: str) -> list[str]:
    rows = {r["name"]: r for r in kernels(build_model(path), "name")["rows"]}
    return rows[GELU]["fused_ops"]


def test_a_copied_inductor_folder_is_read(tmp_path: Path) -> None:
    path = _trace_beside(tmp_path / "run")
    shutil.copytree(H100_COMPILED / "inductor_code", tmp_path / "run" / "inductor_code")
    assert _gelu_ops(path) == FROM_WRAPPER


def test_an_inductor_folder_link_leading_out_is_not_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KINETOSCOPE_SOURCE_ROOTS", raising=False)
    monkeypatch.delenv("KINETOSCOPE_FOLLOW_SYMLINKS", raising=False)
    outside = tmp_path / "elsewhere"
    shutil.copytree(H100_COMPILED / "inductor_code", outside)
    path = _trace_beside(tmp_path / "run")
    (tmp_path / "run" / "inductor_code").symlink_to(outside, target_is_directory=True)
    with pytest.raises(storage.OutsideLogdirError):
        storage.list_small(str(tmp_path / "run" / "inductor_code"), 100, [str(tmp_path / "run")])
    assert _gelu_ops(path) == FROM_NAME
    # the folder it leads to named as a source root on purpose: listed and read
    monkeypatch.setenv("KINETOSCOPE_SOURCE_ROOTS", str(outside))
    assert _gelu_ops(path) == FROM_WRAPPER


def test_a_huge_folder_is_listed_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "inductor_code"
    folder.mkdir()
    for i in range(300):
        (folder / f"c{i:04d}.py").write_text("")
    names = storage.list_small(str(folder), 40, [str(tmp_path)])
    assert len(names) == 40 and names == sorted(names)
    assert set(names) <= {f"c{i:04d}.py" for i in range(300)}
    assert len(storage.list_small(str(folder), 1000, [str(tmp_path)])) == 300
    assert storage.list_small("s3://bucket/inductor_code", 10) == []


def test_the_view_lists_at_most_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Kernels view's listing takes the bound: with none left, no wrapper is listed."""
    from kinetoscope.analysis.kernels import compiled as compiled_kernels

    path = _trace_beside(tmp_path / "run")
    shutil.copytree(H100_COMPILED / "inductor_code", tmp_path / "run" / "inductor_code")
    monkeypatch.setattr(compiled_kernels, "MAX_INDUCTOR_FILES", 0)
    assert _gelu_ops(path) == FROM_NAME
