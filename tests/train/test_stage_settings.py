"""Issue 40 item 1: a stage runner receives a typed stage, never a mapping, and the
train modules import one another without a circle."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from groundrl.train.config import build_train_config
from groundrl.train.hardware import PeftSettings
from groundrl.train.stage_kinds import StageKind, register_stage_kind, unregister_stage_kind
from groundrl.train.stage_settings import StageSettings

TRAIN = Path(__file__).resolve().parents[2] / "src" / "groundrl" / "train"


def test_a_runner_receives_the_typed_settings(tmp_path: Path) -> None:
    from groundrl.train.stages import run_config

    seen: list[object] = []

    def run(recipe, st, out, prev_data, **_):
        seen.append(st)
        return {"data": st.data, "notes": {}}

    register_stage_kind(StageKind("t_seen", run, blocks={"keep": int}, needs_data=False))
    try:
        data = tmp_path / "d.jsonl"
        data.write_text(json.dumps({"prompt": "p"}) + "\n")
        raw = {
            "recipe": "reinforced_planning",
            "output_dir": str(tmp_path / "run"),
            "data": str(data),
            "peft": {"r": 4},
            "stages": [{"name": "s", "kind": "t_seen", "keep": 3, "online_filter": {"lo": 0.2}}],
        }
        run_config(None, build_train_config(raw), echo=lambda m: None)
    finally:
        unregister_stage_kind("t_seen")
    (st,) = seen
    assert isinstance(st, StageSettings)  # a mapping before (st["data"])
    assert st.output_dir == str(tmp_path / "run" / "s") and st.data == str(data)
    assert (
        st.hardware.peft == PeftSettings(r=4) and st.online_filter is not None and st.online_filter.lo == 0.2
    )
    assert st.blocks == {"keep": 3}  # a plugin kind's own block, parsed by its parser


def test_a_built_in_kind_declares_its_blocks_as_fields() -> None:
    from groundrl.train.cgrpo import CGRPOConfig
    from groundrl.train.rm_data import RMInputConfig

    raw = {
        "recipe": "eqa_rm",
        "data": "x.jsonl",
        "stages": [{"kind": "cgrpo", "image": {"max_pixels": 3136}}],
    }
    st = build_train_config(raw).stages[0].settings
    assert type(st).__name__ == "CGRPOStageSettings"
    assert st.cgrpo == CGRPOConfig()  # left out: the paper's defaults, typed at load
    assert st.inputs == RMInputConfig(max_pixels=3136)  # image bounds reach the inputs


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(x)
        for n in ast.walk(tree)
        if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"
        for x in ast.walk(n)
    }
    return {
        n.module.split(".")[2]
        for n in ast.walk(tree)
        if id(n) not in typing_only
        and isinstance(n, ast.ImportFrom)
        and n.module
        and n.module.startswith("groundrl.train.")
    }


def test_no_import_circle_inside_train() -> None:
    """Function-level imports count (builders → config → grpo → builders was one)."""
    graph = {p.stem: _imports(p) for p in TRAIN.glob("*.py")}

    def reach(start: str) -> set[str]:
        seen: set[str] = set()
        todo = list(graph.get(start, ()))
        while todo:
            m = todo.pop()
            if m not in seen:
                seen.add(m)
                todo.extend(graph.get(m, ()))
        return seen

    assert sorted(m for m in graph if m in reach(m)) == []
