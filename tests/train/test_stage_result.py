"""Issue 40: a stage runner returns a typed :class:`StageResult` (the mapping form stays for
plugins), and what ``run_config`` writes does not depend on which form a runner used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from groundrl.train.stage_kinds import StageKind, StageResult, register_stage_kind, unregister_stage_kind


def _head(typed: bool):
    """A data stage (trains nothing): the first ``keep`` records, passed on as data."""

    def run(recipe, st, out, prev_data, **_):
        out.mkdir(parents=True, exist_ok=True)
        rows = Path(prev_data or st.data).read_text().splitlines()[: st.blocks["keep"]]
        (out / "head.jsonl").write_text("\n".join(rows) + "\n")
        res = {"data": out / "head.jsonl", "notes": {"kept": len(rows)}, "echo": f"kept {len(rows)}"}
        return StageResult(**{**res, "data": str(res["data"])}) if typed else res

    return run


def _run(tmp_path: Path, typed: bool) -> tuple[dict[str, bytes], list[str]]:
    """Two head stages (2 of 5, then 1 of those 2) run into the same folder; every file
    written, as bytes, and what the run printed."""
    from groundrl.train.config import build_train_config
    from groundrl.train.stages import run_config

    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"prompt": f"q{i}"}) + "\n" for i in range(5)))
    out = tmp_path / "run"
    shutil.rmtree(out, ignore_errors=True)
    stages = [{"name": "a", "kind": "t_head", "keep": 2}, {"name": "b", "kind": "t_head", "keep": 1}]
    raw = {"recipe": "reinforced_planning", "data": str(data), "output_dir": str(out), "stages": stages}
    said: list[str] = []
    register_stage_kind(StageKind("t_head", _head(typed), blocks={"keep": int}, produces_data=True))
    try:
        run_config(None, build_train_config(raw), echo=said.append)
    finally:
        unregister_stage_kind("t_head")
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
    return files, said


def test_run_config_writes_the_same_bytes_for_either_form(tmp_path):
    typed, said_typed = _run(tmp_path, typed=True)
    plain, said_plain = _run(tmp_path, typed=False)
    assert typed == plain and said_typed == said_plain
    # what it wrote, worked by hand: stage b read stage a's data, not the top-level file
    assert typed["a/head.jsonl"] == b'{"prompt": "q0"}\n{"prompt": "q1"}\n'
    assert typed["b/head.jsonl"] == b'{"prompt": "q0"}\n'
    assert {"config.yaml", "report.md"} <= set(typed)
    assert said_typed == ["[a] t_head: kept 2", "[b] t_head: kept 1"]


def test_a_mapping_with_another_key_or_another_type_is_refused():
    assert StageResult.of({"notes": {"n": 1}}) == StageResult(notes={"n": 1})
    assert StageResult.of({"data": Path("x.jsonl")}).data == "x.jsonl"
    with pytest.raises(TypeError, match=r"unknown key 'note'; allowed: trainer, data, notes, echo"):
        StageResult.of({"note": {}})
    with pytest.raises(TypeError, match="returns a StageResult or a mapping, got list"):
        StageResult.of([1])  # type: ignore[arg-type]
