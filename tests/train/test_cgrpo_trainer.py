"""C-GRPO mechanism: what reaches the model, what is contrasted together, what is logged."""

import json
import math
from pathlib import Path

import pytest
import yaml

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "configs" / "data" / "eqa_rm_episodes.jsonl"


def score(s):
    return f"<critique>c</critique><score>{s}</score>"


def _stage(tmp_path, **cgrpo):
    return {
        "model": "tiny",
        "data": str(DATA),
        "output_dir": str(tmp_path / "cg"),
        "image": {"min_pixels": 3136, "max_pixels": 3136},
        "inputs": {"keyframes": 5},
        "cgrpo": cgrpo,
        "grpo": {
            "max_steps": 1,
            "num_generations": 2,
            "per_device_train_batch_size": 4,
            "max_completion_length": 4,
        },
    }


def test_perturbed_rows_reach_the_model_and_stay_with_their_instance(tmp_path):
    from groundrl.train.config import build_train_config
    from groundrl.train.rm_stages import run_cgrpo

    raw = _stage(tmp_path)
    stage = {"name": "cg", "kind": "cgrpo", "inputs": raw.pop("inputs"), "cgrpo": raw.pop("cgrpo")}
    st = (
        build_train_config({**raw, "stages": [stage]}, "eqa_rm").stages[0].settings
    )  # typed, as a run passes it
    res = run_cgrpo("eqa_rm", st, tmp_path / "cg", None)
    trainer = res.trainer
    seen = {}

    def on_vision(module, args, kwargs):  # the vision tower: pixel values of every image
        seen.setdefault("pixel_values", (args[0] if args else kwargs["hidden_states"]).detach().clone())

    def on_embed(module, args):  # the token embedding: the prompt ids of every row
        if args[0].shape[0] == 16:
            seen.setdefault("input_ids", args[0].detach().clone())

    model = trainer.model
    hooks = [
        model.model.visual.register_forward_pre_hook(on_vision, with_kwargs=True),
        model.get_input_embeddings().register_forward_pre_hook(on_embed),
    ]
    trainer.train()
    for h in hooks:
        h.remove()
    rows = trainer.last_expanded
    g, n = 2, 4  # 2 instances × G=2 originals, then one group of G per instance and type
    assert [r["perturbation"] for r in rows] == ["none"] * 4 + ["temporal"] * 4 + ["spatial"] * 4 + [
        "reasoning"
    ] * 4
    # an instance and all its copies are in this one generation batch, G rows each
    by_id = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(r["perturbation"])
    assert len(by_id) == 2
    assert all(sorted(v) == sorted(["none", "temporal", "spatial", "reasoning"] * g) for v in by_id.values())
    # … and the contrastive reward saw exactly that batch
    assert trainer.contrastive.last["kinds"] == [r["perturbation"] for r in rows]
    # what the model received: per row 5 images × 16 patches of 56×56 pixels
    # what the model received at generation: 16 rows × 5 images × 16 patches (56×56 pixels)
    assert seen["input_ids"].shape[0] == 16 and seen["pixel_values"].shape[0] == 16 * 5 * 16
    pix = seen["pixel_values"].reshape(16, 5, 16, -1)
    ids = seen["input_ids"]
    orig, temporal, spatial, reasoning = 0, n, 2 * n, 3 * n  # first instance's first row of each kind
    # temporal: the same five frames, in another order
    assert not pix[temporal].equal(pix[orig])
    assert sorted(map(lambda t: t.sum().item(), pix[temporal])) == pytest.approx(
        sorted(map(lambda t: t.sum().item(), pix[orig]))
    )
    assert ids[temporal].equal(ids[orig])
    # spatial: other pixel values in every frame, same text
    assert all(not pix[spatial][k].equal(pix[orig][k]) for k in range(5)) and ids[spatial].equal(ids[orig])
    # reasoning: same pixels, other text
    assert pix[reasoning].equal(pix[orig]) and not ids[reasoning].equal(ids[orig])
    # perturbed evaluations do not reach the loss (only the 4 original rows do)
    assert trainer.loss_rows == n


def test_boosts_and_totals_on_a_fixed_batch():
    from groundrl.integrations.trl import reward_funcs
    from groundrl.recipes.resolve import resolve_rubric
    from groundrl.train.cgrpo import contrastive_reward

    funcs, weights = reward_funcs(resolve_rubric("eqa_rm", None))
    contrast = contrastive_reward()
    funcs, weights = [*funcs, contrast], [*weights, 1.0]
    kinds = ["none", "none", "temporal", "temporal", "spatial", "spatial", "reasoning", "reasoning"]
    comps = [score(s) for s in (7, 0, 2, 3, 0, 1, 7, 7)]
    logged = {}
    cols = {"perturbation": kinds, "gt_score": [7.0] * 8, "log_metric": logged.__setitem__}
    values = [f(prompts=[""] * 8, completions=comps, **cols) for f in funcs]
    # accuracies 1 − (|s − 7|/10)²: originals 1.0, 0.51 (mean 0.755); temporal 0.75, 0.84
    # (0.795: 0.755 < 0.95·0.795 = 0.75525 → no boost); spatial 0.51, 0.64 (0.575 → boost 0.3
    # for both, each ≥ 0.1); reasoning 1, 1 (no boost). Boost = (0 + 0.3 + 0) / 3 = 0.1.
    assert values[-1][:2] == pytest.approx([0.1, 0.1]) and values[-1][2:] == [None] * 6
    totals = [
        sum(w * v for w, v in zip(weights, col, strict=True) if v is not None)
        for col in zip(*values, strict=True)
    ]
    assert totals[:2] == pytest.approx([1.0 + 1 + 0.1, 0.51 + 1 + 0.1])
    assert totals[2:4] == pytest.approx([0.75 + 1, 0.84 + 1])  # perturbed: accuracy + format only
    assert logged == pytest.approx(
        {
            "cgrpo/accuracy/original": 0.755,
            "cgrpo/accuracy/temporal": 0.795,
            "cgrpo/accuracy/spatial": 0.575,
            "cgrpo/accuracy/reasoning": 1.0,
            "cgrpo/boost_rate/temporal": 0.0,
            "cgrpo/boost_rate/spatial": 1.0,
            "cgrpo/boost_rate/reasoning": 0.0,
        }
    )


def test_cli_run_with_a_perturbation_switched_off(tmp_path):
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    cfg = {k: v for k, v in _stage(tmp_path, types=["temporal", "reasoning"]).items()}
    cfg.pop("inputs")
    stage = {"name": "cgrpo", "kind": "cgrpo", "inputs": {"keyframes": 5}, "cgrpo": cfg.pop("cgrpo")}
    cfg["stages"] = [stage]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["train", "eqa_rm", "--config", str(path)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in (tmp_path / "cg" / "log.jsonl").read_text().splitlines()]
    step = next(r for r in rows if "loss" in r)
    assert step["stage"] == "cgrpo"
    for name in ("original", "temporal", "reasoning"):
        assert math.isfinite(step[f"cgrpo/accuracy/{name}"])
    assert "cgrpo/boost_rate/temporal" in step and "cgrpo/boost_rate/reasoning" in step
    assert not any("spatial" in k for r in rows for k in r)
    assert (tmp_path / "cg" / "final").is_dir() and (tmp_path / "cg" / "report.md").is_file()


def test_config_errors_name_the_allowed_keys():
    from groundrl.train.cgrpo import CGRPOConfig

    with pytest.raises(ValueError, match="allowed: types"):
        CGRPOConfig.from_mapping({"typo": 1})
    with pytest.raises(ValueError, match="at most once"):
        CGRPOConfig.from_mapping({"types": ["temporal", "colour"]})
    assert CGRPOConfig.from_mapping({"types": ["reasoning", "temporal"]}).types == ("temporal", "reasoning")
