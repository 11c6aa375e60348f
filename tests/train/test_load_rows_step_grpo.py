"""load_rows' offline Step-GRPO hints take the typed settings (StepGRPOConfig), or the
``{p, seed}`` block parsed by the same rules (issue 40: config blocks are typed)."""

import json

import pytest

from groundrl.train.grpo import load_dataset_records, load_rows
from groundrl.train.step_grpo import StepGRPOConfig

GOLD = ["find a Apple", "pick up the Apple", "find a Fridge"]


def _data(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps({"prompt": f"task {i}", "gold": GOLD}) + "\n" for i in range(40)))
    return path


def _prompts(rows):
    return [r["prompt"][0]["content"][-1]["text"] for r in rows]


def test_typed_settings_and_the_block_give_the_same_hints(tmp_path):
    path = _data(tmp_path)
    typed = load_dataset_records(path, StepGRPOConfig(p=1.0, seed=3))
    block = load_dataset_records(path, {"p": 1.0, "seed": 3})
    plain = load_dataset_records(path)
    assert _prompts(typed) == _prompts(block)
    # p = 1: every record drew a hint; k ≥ 1 steps show in the prompt and leave the gold
    hinted = [t for t, p in zip(_prompts(typed), _prompts(plain), strict=True) if t != p]
    assert hinted and all("Guided precursors" in t for t in hinted)
    assert all(r["gold"] == GOLD[3 - len(r["gold"]) :] for r in typed)


def test_no_block_or_an_empty_one_hints_nothing(tmp_path):
    path = _data(tmp_path)
    plain = _prompts(load_rows(path)[0])
    assert _prompts(load_rows(path, {})[0]) == plain
    assert _prompts(load_rows(path, None)[0]) == plain


def test_a_misspelt_key_in_the_block_names_it(tmp_path):
    with pytest.raises(ValueError, match="prob"):
        load_rows(_data(tmp_path), {"prob": 1.0})
