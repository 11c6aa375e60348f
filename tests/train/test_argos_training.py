"""Argos in training: points_masks from the data reach the rewards as masks, so the
spatial part applies during GRPO; the agentic verifier can be the reward. The policy's
text is replaced by a canned grounded answer (a random tiny model never cites points);
everything else is the real TRL path."""

from pathlib import Path

import pytest

pytest.importorskip("trl")

ROOT = Path(__file__).resolve().parents[2]
# mug point (10, 12) inside the mug box [0, 0, 32, 32]; "sink" point (10, 10) outside [32, 0, 64, 32]
CANNED = (
    'The <point x="10" y="12" alt="mug">mug</point> is left of the '
    '<point x="10" y="10" alt="sink">sink</point>. <answer>A</answer>'
)


@pytest.fixture
def canned(monkeypatch):
    import groundrl.integrations.trl as trl_adapter

    monkeypatch.setattr(trl_adapter, "completion_text", lambda c: CANNED)


def _cfg(tmp_path, tiny_vlm_dir, **extra):
    return {
        "model": str(tiny_vlm_dir),
        "data": str(ROOT / "configs/data/argos_grounded.jsonl"),
        "output_dir": str(tmp_path / "o"),
        "grpo": {"max_steps": 1, "max_completion_length": 4},
        **extra,
    }


@pytest.mark.slow
def test_spatial_part_applies_with_masks_from_the_data(tmp_path, tiny_vlm_dir, canned):
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    trainer = build_trainer("argos", stage_settings(_cfg(tmp_path, tiny_vlm_dir), "argos"))
    trainer.train()
    h = next(h for h in trainer.state.log_history if "reward" in h)
    # hand-worked: spatial 1/2 points inside, the only grounding category -> G = 0.5;
    # outcome A = A -> 1 ≥ tau, total mean(1, 0.5)
    assert h["rewards/grounding/mean"] == pytest.approx(0.5)
    assert h["rewards/outcome/mean"] == 1.0 and h["reward"] == pytest.approx(0.75)


@pytest.mark.slow
def test_agentic_verifier_is_the_reward(tmp_path, tiny_vlm_dir, canned):
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    trainer = build_trainer(
        "argos", stage_settings(_cfg(tmp_path, tiny_vlm_dir, verifier={"tau": 0.5}), "argos")
    )
    assert trainer.reward_func_names == ["verifier"]
    trainer.train()
    h = next(h for h in trainer.state.log_history if "reward" in h)
    assert h["rewards/verifier/mean"] == pytest.approx(0.75)


def test_verifier_block_is_checked():
    from groundrl.train.grpo import make_verifier

    with pytest.raises(ValueError, match="unknown key"):
        make_verifier({"gate": 0.5})
    with pytest.raises(ValueError, match="outcome tool is the gate"):
        make_verifier({"tools": ["spatial"]})
    with pytest.raises(ValueError, match="unknown term"):
        make_verifier({"weights": {"spatial": 2.0}})


def test_mask_providers_selectable_in_yaml(tmp_path):
    from groundrl.train.grpo import make_verifier
    from groundrl.verify.masks import BoxMaskProvider, DetectorSegmenterMasks

    v = make_verifier({"masks": {"provider": "detector_segmenter", "detector": "d/", "segmenter": "s/"}})
    provider = v.mask_provider
    assert isinstance(provider, DetectorSegmenterMasks) and provider.threshold == 0.2
    assert (provider.detector_path, provider.segmenter_path) == ("d/", "s/")
    assert isinstance(make_verifier({"masks": "boxes"}).mask_provider, BoxMaskProvider)
    assert isinstance(make_verifier({}).mask_provider, BoxMaskProvider)
    with pytest.raises(ValueError, match="needs segmenter"):
        make_verifier({"masks": {"provider": "detector_segmenter", "detector": "d/"}})
    with pytest.raises(ValueError, match="provider must be one of boxes, detector_segmenter"):
        make_verifier({"masks": "sam"})
    with pytest.raises(ValueError, match="threshold"):
        make_verifier(
            {"masks": {"provider": "detector_segmenter", "detector": "d", "segmenter": "s", "threshold": 2}}
        )


def test_verifier_teachers_come_from_the_judge_config(chat_server):
    from groundrl.judges.config import JudgeConfig
    from groundrl.train.grpo import make_verifier

    judge = JudgeConfig.from_mapping({"backend": "openai", "model": "teacher", "url": chat_server.base_url})
    v = make_verifier({"weights": {"grounding": 2.0}}, judge)
    assert [t.name for t in v.tools] == [
        "outcome",
        "spatial",
        "frame_grounding",
        "segment_grounding",
        "reasoning",
    ]
    assert v.weights == {"outcome": 1.0, "grounding": 2.0, "reasoning": 1.0}
    rule_only = make_verifier({"tools": ["outcome", "spatial"]})
    assert [t.name for t in rule_only.tools] == ["outcome", "spatial"]
