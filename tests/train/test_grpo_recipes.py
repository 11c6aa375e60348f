"""Every recipe's GRPO runs 2 steps on the tiny random VLM through TRL with its real
rubric: the reward functions get the dataset columns (images included) and the
parameters move."""

import json

import pytest

pytest.importorskip("trl")

from PIL import Image  # noqa: E402

from groundrl.recipes import builtin_recipe_names, get_recipe  # noqa: E402

# valid fields for each built-in recipe, from its own examples (Recipe.examples): a new built-in
# is covered; an installed plugin is not (issue 39 item 8)
FIELDS = {name: get_recipe(name).example_fields() for name in builtin_recipe_names()}


class Probe:
    """A dense reward (completion length) that records what TRL passed in."""

    __name__ = "probe"

    def __init__(self):
        self.kwargs = None

    def __call__(self, prompts=None, completions=None, **kw):
        self.kwargs = kw
        return [len(c[0]["content"] if isinstance(c, list) else c) / 24.0 for c in completions]


@pytest.mark.slow
@pytest.mark.parametrize("recipe", list(FIELDS))
def test_recipe_grpo_two_steps(recipe, tmp_path, tiny_vlm_dir):
    import torch

    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    img = tmp_path / "frame.png"
    Image.new("RGB", (64, 64), (20, 120, 200)).save(img)
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(
            json.dumps({"prompt": f"task {i}", "images": [str(img)], **FIELDS[recipe]}) + "\n"
            for i in range(4)
        )
    )
    cfg = {"model": str(tiny_vlm_dir), "data": str(data), "output_dir": str(tmp_path / "out")}
    if get_recipe(recipe).example_options:  # e.g. reinforced_planning's bundled action map
        cfg["recipe_options"] = dict(get_recipe(recipe).example_options)
    probe = Probe()
    trainer = build_trainer(
        recipe, stage_settings(cfg, recipe), extra_reward_funcs=[probe], extra_weights=[1.0]
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    assert set(FIELDS[recipe]) <= set(probe.kwargs)
    assert "images" in probe.kwargs and isinstance(probe.kwargs["images"][0][0], Image.Image)
    changed = [n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())]
    assert changed and any("visual" in n for n in changed)
    logged = {k for h in trainer.state.log_history for k in h}
    rubric = get_recipe(recipe).rubric(**cfg.get("recipe_options", {}))
    expected = ["reward"] if rubric.aggregate == "gated_mean" else rubric.names
    assert {f"rewards/{n}/mean" for n in expected} <= logged


@pytest.mark.slow
def test_train_cli_with_bundled_cpu_config(tmp_path, run_once):
    import torch
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    # the docs' and the README tour's training of this config: run once for the suite
    # (tests/conftest.py RunOnce), its 2 SFT and 4 GRPO steps as the file gives them
    r = run_once(run_once.TRAIN_TINY)
    assert r.returncode == 0, r.output
    out = r.folder / "runs" / "train-reinforced_planning"
    assert "[grpo] step 4/4 (100%)" in r.output and (out / "final").is_dir()
    # a random model never passes the online filter: said on the console and first in the report
    assert "[grpo] NO LEARNING SIGNAL: all 4 steps had zero gradient" in r.output
    # the hint fits a stage that SFT trained first (issue 39): not "start from an SFT checkpoint"
    assert "no prompt group" in r.output and "though stage sft trained it first" in r.output
    report = (out / "report.md").read_text().splitlines()
    assert report[2].startswith("> **No learning signal** in stage `grpo`")
    assert (out / "sft" / "final").is_dir()  # SFT -> GRPO from the one preset
    rows = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    logged = {k for row in rows for k in row}
    assert {
        "online_filter/kept_frac",
        "online_filter/buffer_size",
        "online_filter/groups_generated",
        "rewards/accuracy_filtered/mean",
        "rewards/accuracy_original/mean",
    } <= logged
    # the preset freezes the vision tower and projector (RR): their weights did not move
    from safetensors.torch import load_file

    before = load_file(str(next((out / "sft" / "tiny-model").glob("*.safetensors"))))
    after = load_file(str(next((out / "final").glob("*.safetensors"))))
    visual = [k for k in before if "visual" in k]
    assert visual and all(torch.equal(before[k], after[k]) for k in visual)
    bad = tmp_path / "bad.yaml"
    bad.write_text("modle: tiny\n")
    r = CliRunner().invoke(app, ["train", "reinforced_planning", "--config", str(bad)])
    assert r.exit_code != 0 and "unknown key" in r.output


def test_step_grpo_hints_shorten_gold_and_extend_prompt():
    from groundrl.train.grpo import apply_step_hints

    recs = [
        {"prompt": "Put the apple away.", "gold": ["find a Apple", "pick up the Apple", "find a Fridge"]}
        for _ in range(200)
    ]
    recs.append(
        {"prompt": "EB", "gold": "<actions>[['Pick', 'Apple'], ['Place', 'Apple', 'Fridge']]</actions>"}
    )
    out = apply_step_hints(recs, p=0.5, seed=1)
    hinted = [r for r in out[:200] if r["prompt"] != "Put the apple away."]
    # hinted with p = 0.5, and k uniform over 0..2: prompts visibly change for k ≥ 1 (≈ 200·0.5·2/3)
    assert 45 < len(hinted) < 90
    for r in hinted:
        k = 3 - len(r["gold"])
        assert r["gold"] == recs[0]["gold"][k:] and "Guided precursors" in r["prompt"]
        assert all(f"{i + 1}. {s}" in r["prompt"] for i, s in enumerate(recs[0]["gold"][:k]))
    assert apply_step_hints(recs, p=0.0) == recs
    eb = apply_step_hints([recs[-1]], p=1.0, seed=3)[0]
    assert eb["gold"] == recs[-1]["gold"]  # EmbodiedBrain: the gold (the GRM's reference) stays whole
