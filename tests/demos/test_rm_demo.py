"""``groundrl demo rm`` in its reduced form: every stage runs from the CLI, the perturbed
frames reach the grader in C-GRPO and in the evaluation, and the report says what it measured."""

import json

import pytest

pytest.importorskip("trl")

from groundrl.demos import rm_demo_world as W  # noqa: E402


def test_eval_rows_carry_the_perturbations_cgrpo_uses():
    from groundrl.demos.rm_demo import RMDemoConfig, eval_rows

    eps = W.make_episodes(40, 0, "t")
    rows = eval_rows(eps, RMDemoConfig.quick())
    assert [r["perturbation"] for r in rows[:3]] == ["none", "temporal", "spatial"]
    hidden = 0
    for i in range(0, len(rows), 3):
        orig, temporal, spatial = rows[i : i + 3]
        assert orig["id"] == temporal["id"] == spatial["id"]
        seen = [W.read_frame(f) for f in orig["images"]]
        assert seen == list(eps[i // 3].blocks)
        # shuffled: the same frames in another order (distinct frames always move)
        assert sorted(W.read_frame(f) for f in temporal["images"]) == sorted(seen)
        if len(set(seen)) > 1:
            assert [f.tobytes() for f in temporal["images"]] != [f.tobytes() for f in orig["images"]]
        # masked: a block is hidden only where a zeroed patch covers it; nothing else changes
        masked = [W.read_frame(f) for f in spatial["images"]]
        assert all(m in (s, W.EMPTY) for m, s in zip(masked, seen, strict=True))
        hidden += sum(m != s for m, s in zip(masked, seen, strict=True))
        assert all(not any(p == (0, 0, 0) for p in f.getdata()) for f in orig["images"])
    assert hidden > 0  # 40 episodes × ~2.5 blocks × 1/8: some block is hidden


def test_the_contrast_is_scored_on_grader_outputs_with_the_recipe_reward():
    from groundrl.demos.rm_demo import grader_metrics, paired_sensitivity_gain

    def row(i, none, temporal, spatial, gold=9, kind="first"):
        return {
            "id": i,
            "gold": gold,
            "kind": kind,
            "none": none,
            "temporal": temporal,
            "spatial": spatial,
            "format": none is not None,
        }

    sft = [row("a", 9, 9, 9), row("b", 2, 2, 2, gold=2), row("c", None, 9, 9)]
    cg = [row("a", 9, 2, 9), row("b", 2, 9, 2, gold=2), row("c", 9, 2, 2)]
    m = grader_metrics(cg, 0)
    assert m["accuracy"] == 1.0 and m["format_rate"] == 1.0
    # drops: a 7, b −7, c 7 (shuffled); a 0, b 0, c 7 (masked)
    assert m["sensitivity_temporal"] == pytest.approx(7 / 3)
    assert m["sensitivity_spatial"] == pytest.approx(7 / 3)
    assert grader_metrics(sft, 0)["accuracy"] == pytest.approx(2 / 3)  # a missing score is wrong
    gain = paired_sensitivity_gain(sft, cg, "temporal", 0)
    assert gain["n"] == 2 and gain["mean"] == pytest.approx(0.0)  # c has no SFT score: left out


def test_eval_rows_prefer_a_perturbation_that_changes_the_true_score():
    """Of eval_draws draws the first that changes what a right reader scores is used, so
    tracking has pairs; with one draw the share of changed masks is what a single mask gives."""
    from groundrl.demos.rm_demo import RMDemoConfig, eval_rows, true_score

    eps = W.make_episodes(60, 0, "t")

    def changed(cfg):
        rows = eval_rows(eps, cfg)
        out = {"temporal": 0, "spatial": 0}
        for i in range(0, len(rows), 3):
            ep, gold = eps[i // 3], true_score(eps[i // 3], rows[i]["images"])
            for row in rows[i + 1 : i + 3]:
                out[row["perturbation"]] += true_score(ep, row["images"]) != gold
        return out

    one, many = changed(RMDemoConfig.quick(eval_draws=1)), changed(RMDemoConfig.quick(eval_draws=8))
    assert many["spatial"] > 2 * one["spatial"] and many["temporal"] >= one["temporal"]
    assert true_score(eps[0], eval_rows(eps[:1], RMDemoConfig.quick())[0]["images"]) == eps[0].gt_score


def test_tracking_is_the_share_of_the_true_change_a_grader_follows():
    from groundrl.demos.rm_demo import compare, grader_metrics

    def row(i, none, temporal, spatial, gold=9):
        return {
            "id": i,
            "gold": gold,
            "kind": "first",
            "none": none,
            "temporal": temporal,
            "spatial": spatial,
        }

    truth = [
        row("a", 9, 2, 9),
        row("b", 2, 9, 2, gold=2),
        row("c", 9, 9, 2),
    ]  # a, b change on shuffle; c on mask
    reader = [row("a", 9, 2, 9), row("b", 2, 9, 2, gold=2), row("c", 9, 9, 2)]
    blind = [row("a", 9, 9, 9), row("b", 2, 2, 2, gold=2), row("c", 9, 9, 9)]
    half = [row("a", 9, 5.5, 9), row("b", 4, 2, 2, gold=2), row("c", 9, 9, 9)]  # b moves the wrong way
    assert grader_metrics(reader, 0, truth)["tracking_temporal"] == pytest.approx(1.0)
    assert grader_metrics(blind, 0, truth)["tracking_temporal"] == pytest.approx(0.0)
    m = grader_metrics(half, 0, truth)
    # a: (5.5 − 9)/(2 − 9) = 0.5; b: (2 − 4)/(9 − 2) = −2/7
    assert m["tracking_temporal"] == pytest.approx((0.5 - 2 / 7) / 2) and m["tracking_temporal_n"] == 2
    assert m["tracking_spatial"] == pytest.approx(0.0) and m["tracking_spatial_n"] == 1
    c = compare(blind, reader, truth, 0)
    assert c["tracking_temporal"]["mean"] == pytest.approx(1.0) and c["tracking_temporal"]["n"] == 2
    assert c["accuracy"]["mean"] == pytest.approx(0.0) and c["accuracy"]["n"] == 3


def test_demo_rm_runs_from_the_cli_and_perturbed_frames_reach_the_grader(tmp_path):
    import torch
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    seen = []

    def on_forward(module, args, kwargs):  # every vision-tower call: its pixel rows
        if type(module).__name__.startswith("Qwen2_5_VisionTransformer"):
            seen.append((args[0] if args else kwargs["hidden_states"]).detach().clone())

    handle = torch.nn.modules.module.register_module_forward_pre_hook(lambda m, a: on_forward(m, a, {}))
    try:
        res = CliRunner().invoke(
            app, ["demo", "rm", "--quick", "--steps", "1", "--episodes", "5", "-o", str(tmp_path)]
        )
    finally:
        handle.remove()
    assert res.exit_code == 0, res.output
    m = json.loads((tmp_path / "metrics.json").read_text())
    assert m["config"]["cgrpo_steps"] == 1 and m["config"]["n_eval"] == 5
    for name in ("teacher", "sft", "cgrpo"):
        assert m[name]["n"] == 5 and 0 <= m[name]["format_rate"] <= 1
    pairs = {
        "accuracy",
        "temporal",
        "spatial",
        "temporal_right",
        "spatial_right",
        "tracking_temporal",
        "tracking_spatial",
    }
    assert set(m["cgrpo_minus_sft"]) == pairs
    # the μ = 0 control ran from the same SFT grader and is compared pair by pair (issue 38 item 2)
    assert m["cgrpo_mu0"]["n"] == 5 and set(m["cgrpo_minus_mu0"]) == pairs
    assert len(m["cgrpo_mu0_curve"]) == 1 and (tmp_path / "cgrpo-mu0").is_dir()
    assert all(c.get("cgrpo/boost_rate/temporal", 0) == 0 for c in m["cgrpo_mu0_curve"]) or all(
        c.get("rewards/contrastive/mean", 0) == 0 for c in m["cgrpo_mu0_curve"]
    )
    assert m["rft"]["sampled"] == 48 * 4 and 0 < m["rft"]["kept"] < m["rft"]["sampled"]
    report = (tmp_path / "report.md").read_text()
    assert "RFT → SFT → C-GRPO" in report and "**Smoke run.**" in report  # --quick says so (issue 39)
    assert (
        "C-GRPO with μ = 0 (control)" in report
        and "C-GRPO − μ = 0 (the boost's own effect), accuracy" in report
    )
    assert "Target: not judged: this is a smoke run (--quick)" in report and "NOT met" not in report
    assert (tmp_path / "sensitivity.png").stat().st_size > 10_000
    for d in ("sft", "cgrpo-final"):
        assert (tmp_path / d / "config.json").exists()
    # C-GRPO's one generation batch: 2 instances × G=2 originals, then G rows per instance
    # for each of the 2 perturbation types, 3 frames × 16 patches each (the evaluation's
    # batches hold 5 episodes × 3 inputs: another size)
    cgrpo_batches = [p for p in seen if p.shape[0] == 12 * 3 * 16]
    assert cgrpo_batches, sorted({p.shape[0] for p in seen})
    pix = cgrpo_batches[0].reshape(12, 3, 16, -1)
    orig, temporal, spatial = pix[0], pix[4], pix[8]  # the first instance's row of each kind
    assert not temporal.equal(orig)
    assert sorted(f.sum().item() for f in temporal) == pytest.approx(sorted(f.sum().item() for f in orig))
    assert not spatial.equal(orig)
    changed = [(spatial[k] != orig[k]).any(dim=-1).sum().item() for k in range(3)]
    assert all(0 < c < 16 for c in changed)  # per frame some patches, not all, differ (2 of 16 zeroed)


def test_sft_sees_the_positions_generation_uses():
    """The SFT forward of (prompt, completion) gives, at every completion position, the
    logits generation gave when it wrote that completion: the same M-RoPE positions (a
    forward without the image-token marks uses 1-D ones, and the grader trained on it
    decoded garbage)."""
    import torch

    from groundrl.demos.rm_demo import (
        RMDemoConfig,
        build_grader,
        demo_corpus,
        encode_pair,
        instance_row,
        sft_batch,
    )

    torch.manual_seed(0)
    eps = W.make_episodes(6, 0, "t")
    model, processor = build_grader(demo_corpus(eps), RMDemoConfig.quick(hidden=32))
    model.eval()
    row = instance_row(eps[0])
    enc = processor(
        text=[processor.apply_chat_template(row["prompt"], add_generation_prompt=True, tokenize=False)],
        images=[row["images"]],
        return_tensors="pt",
    )
    with torch.inference_mode():
        gen = model.generate(
            **enc, max_new_tokens=6, do_sample=False, output_scores=True, return_dict_in_generate=True
        )
    new = gen.sequences[0, enc["input_ids"].shape[1] :].tolist()
    p, _, pix, grid, types = encode_pair(processor, row, "")
    batch = sft_batch([(p, new, pix, grid, types)], processor.tokenizer.pad_token_id)
    with torch.inference_mode():
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits[0]
    for j, score in enumerate(gen.scores):
        assert torch.allclose(logits[len(p) - 1 + j], score[0], atol=1e-4), j
    # and without the marks the positions differ: the check above can fail
    batch.pop("mm_token_type_ids")
    with torch.inference_mode():
        plain = model(**{k: v for k, v in batch.items() if k != "labels"}).logits[0]
    assert not torch.allclose(plain[len(p) - 1], gen.scores[0][0], atol=1e-4)
