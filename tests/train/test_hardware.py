"""Real-hardware blocks of a train config on the tiny VLM: a frozen vision tower and
projector take no update while the language model does; a `peft:` block trains LoRA
adapters only (on the language model); image pixel bounds reach the processor."""

import json

import pytest

pytest.importorskip("trl")

from PIL import Image  # noqa: E402


def probe(prompts=None, completions=None, **kw):
    """A dense reward (completion length) so the gradient is not zero."""
    return [len(c[0]["content"] if isinstance(c, list) else c) / 24.0 for c in completions]


def _cfg(tmp_path, tiny_vlm_dir, **extra):
    img = tmp_path / "f.png"
    Image.new("RGB", (64, 64), (10, 200, 30)).save(img)
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            json.dumps({"prompt": f"t {i}", "images": [str(img)], "answer": "B"}) + "\n" for i in range(4)
        )
    )
    return {
        "model": str(tiny_vlm_dir),
        "data": str(data),
        "output_dir": str(tmp_path / "out"),
        "grpo": {"max_steps": 2, "max_completion_length": 12, "learning_rate": 1e-2},
        **extra,
    }


def test_block_validation():
    from groundrl.train.config import build_train_config

    for bad, match in [
        ({"peft": {"rank": 8}}, "unknown key"),
        ({"freeze": {"vision_tower": "yes"}}, "true or false"),
        ({"image": {"min_pixels": 10, "max_pixels": 5}}, "min_pixels must be"),
        ({"step_grpo": {"p": 2}}, r"\[0, 1\]"),
    ]:
        with pytest.raises(ValueError, match=match):
            build_train_config(dict(bad), "argos")


@pytest.mark.slow
def test_frozen_vision_tower_and_projector(tmp_path, tiny_vlm_dir):
    import torch

    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    cfg = _cfg(
        tmp_path,
        tiny_vlm_dir,
        freeze={"vision_tower": True, "projector": True},
        image={"max_pixels": 64 * 64},
    )
    trainer = build_trainer(
        "argos", stage_settings(cfg, "argos"), extra_reward_funcs=[probe], extra_weights=[1.0]
    )
    assert trainer.processing_class.image_processor.max_pixels == 64 * 64
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    changed = {n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())}
    assert changed and not any("visual" in n for n in changed)
    assert not any(p.requires_grad for n, p in trainer.model.named_parameters() if "visual" in n)


@pytest.mark.slow
def test_peft_block_trains_lora_on_the_language_model_only(tmp_path, tiny_vlm_dir):
    import torch

    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    cfg = _cfg(tmp_path, tiny_vlm_dir, peft={"r": 4, "lora_alpha": 8})
    trainer = build_trainer(
        "argos", stage_settings(cfg, "argos"), extra_reward_funcs=[probe], extra_weights=[1.0]
    )
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    changed = {n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())}
    assert changed and all("lora_" in n for n in changed)
    lora = [n for n, _ in trainer.model.named_parameters() if "lora_" in n]
    assert lora and not any("visual" in n for n in lora)


def test_paper_presets_load_and_cite():
    """configs/papers/*.yaml pass the config checks; every setting line says where it comes from."""
    from pathlib import Path

    from groundrl.train.config import load_train_config

    root = Path(__file__).resolve().parents[2] / "configs" / "papers"
    for name in ("reinforced_planning", "embodied_brain", "argos"):
        cfg = load_train_config(root / f"{name}.yaml", name).raw
        assert cfg["stages"][-1]["kind"] == "grpo"
        text = (root / f"{name}.yaml").read_text()
        assert "[paper " in text and "[ours: " in text  # cited per value: tests/train/test_paper_presets.py
    rr = load_train_config(root / "reinforced_planning.yaml", "reinforced_planning").raw
    grpo = rr["stages"][-1]["grpo"]
    assert (grpo["num_generations"], grpo["learning_rate"], grpo["beta"], grpo["temperature"]) == (
        8,
        1e-6,
        0.0,
        1.0,
    )
    assert rr["image"]["max_pixels"] == 262144 and rr["freeze"] == {"vision_tower": True, "projector": True}
