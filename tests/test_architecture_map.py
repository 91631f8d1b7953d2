"""docs/architecture.md's map is current: generated from the tree's docstrings
(`tests/architecture_map.py`), every module and folder has one, and every folder is there."""

from __future__ import annotations

from architecture_map import (
    BEGIN,
    PACKAGE,
    current,
    first_sentence,
    floors,
    folders,
    generate,
    missing_docstrings,
)

FIX = "run `python tests/architecture_map.py --write` and commit docs/architecture.md"


def test_every_module_has_a_docstring() -> None:
    assert missing_docstrings() == [], "each module says in its docstring what it is"


def test_the_map_is_current() -> None:
    text = current()
    assert text is not None, f"docs/architecture.md has no markers ({BEGIN})"
    assert text == generate(), f"the map is stale: {FIX}"


def test_every_folder_and_module_is_on_the_map() -> None:
    text = generate()
    for folder in folders():
        rel = folder.relative_to(PACKAGE).as_posix()
        assert f"- **`{rel}/`**" in text
        for module in folder.glob("*.py"):
            if module.name != "__init__.py":
                assert f"  - `{module.stem}`: " in text, f"{rel}/{module.name}"


def test_the_floors_come_from_the_contract_bottom_first() -> None:
    assert floors()[:3] == ["model", "ingest", "store"] and floors()[-1] == "serve"
    tops = [f.name for f in folders() if f.parent == PACKAGE]
    assert tops.index("model") < tops.index("analysis") < tops.index("api") < tops.index("serve")


def test_first_sentence_stops_at_a_full_stop_only() -> None:
    assert first_sentence("One. Two.") == "One."
    assert first_sentence("Read `a.json` (e.g. b.c). More.") == "Read `a.json` (e.g. b.c)."
    assert (
        first_sentence("Numbers, e.g. 1.5 and i.e. two. Rest") == "Numbers, e.g. 1.5 and i.e. two."
    )
    assert first_sentence("First line\nwraps.\n\nSecond paragraph.") == "First line wraps."
