"""Reinforced Reasoning's online filter on the tiny VLM: rejected groups never reach the
loss, the buffer is refilled with fresh prompts until a full batch of kept groups is
ready, and the paper's metrics are logged."""

import json

import pytest

pytest.importorskip("trl")

from PIL import Image  # noqa: E402

from groundrl.train.online_filter import OnlineFilterConfig, check_group_layout  # noqa: E402

G = 4


def accuracy_probe(prompts=None, completions=None, kind=None, **kw):
    """Per group of G: `easy` all 1 (dropped, 4/4 > 0.9), `hard` all 0 (dropped),
    `mixed` 1, 0, 1, 0 (kept: 2/4)."""
    return [1.0 if k == "easy" else 0.0 if k == "hard" else float(i % 2 == 0) for i, k in enumerate(kind)]


def test_group_layout_refused_up_front_naming_settings():
    check_group_layout(8, 1, 4)
    check_group_layout(2, 2, 4)
    with pytest.raises(ValueError, match="per_device_train_batch_size × steps_per_generation = 2 × 1 = 2"):
        check_group_layout(2, 1, 4)
    with pytest.raises(ValueError, match="when_exhausted"):
        OnlineFilterConfig.from_mapping({"when_exhausted": "skip"})
    with pytest.raises(ValueError, match="unknown key"):
        OnlineFilterConfig.from_mapping({"low": 0.1})
    assert OnlineFilterConfig.from_mapping({}).criterion == "paper"


@pytest.mark.slow
def test_buffer_refills_and_loss_sees_only_kept_groups(tmp_path, tiny_vlm_dir, monkeypatch):
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer
    from groundrl.train.trainer import ground_grpo_trainer_class

    img = tmp_path / "f.png"
    Image.new("RGB", (64, 64), (200, 30, 30)).save(img)
    data = tmp_path / "d.jsonl"
    kinds = ["mixed", "easy", "hard", "easy", "mixed", "hard"]
    data.write_text(
        "".join(
            json.dumps({"prompt": f"{k} task {i}", "images": [str(img)], "kind": k, "gold": ["a"]}) + "\n"
            for i, k in enumerate(kinds)
        )
    )
    cfg = {
        "model": str(tiny_vlm_dir),
        "data": str(data),
        "output_dir": str(tmp_path / "out"),
        "recipe_options": {},
        "online_filter": {"reward": "accuracy_probe", "max_rounds": 50, "seed": 1},
        "grpo": {
            "max_steps": 3,
            "per_device_train_batch_size": 2 * G,
            "num_generations": G,
            "max_completion_length": 6,
        },
    }
    cls = ground_grpo_trainer_class()
    seen = []
    orig = cls.compute_loss  # the Trainer's public override point: every batch the loss sees

    def spy(self, model, inputs, *args, **kwargs):
        seen.append(
            (inputs["prompt_ids"].clone(), inputs["advantages"].clone(), inputs["image_grid_thw"].shape[0])
        )
        return orig(self, model, inputs, *args, **kwargs)

    monkeypatch.setattr(cls, "compute_loss", spy)
    trainer = build_trainer(
        "reinforced_planning",
        stage_settings(cfg, "reinforced_planning"),
        extra_reward_funcs=[accuracy_probe],
        extra_weights=[1.0],
    )
    trainer.train()
    # 3 optimisation steps × 2 kept groups × G rows reached the loss, nothing else
    assert trainer.loss_rows == 3 * 2 * G and len(seen) == 3
    tok = trainer.processing_class.tokenizer
    for ids, adv, n_images in seen:
        texts = tok.batch_decode(ids, skip_special_tokens=True)
        assert all("mixed" in t for t in texts), texts
        assert bool((adv != 0).all())  # no zero-advantage row
        assert n_images == 2 * G  # one image per row survived the concatenation
    logs = [h for h in trainer.state.log_history if "online_filter/kept_frac" in h]
    assert len(logs) == 3
    for h in logs:
        # hand-worked: a kept group is 1,0,1,0 -> accuracy 0.5; kept/generated = kept_frac
        assert h["rewards/accuracy_filtered/mean"] == pytest.approx(0.5)
        assert h["online_filter/buffer_size"] >= 2
        assert h["online_filter/kept_frac"] == pytest.approx(
            h["online_filter/buffer_size"] / h["online_filter/groups_generated"]
        )
        # easy/hard groups were generated and dropped along the way
        assert 0.0 <= h["rewards/accuracy_original/mean"] <= 1.0
    assert sum(h["online_filter/groups_generated"] for h in logs) > 3 * 2


@pytest.mark.slow
def test_exhausted_buffer_errors_or_trains_on_nothing(tmp_path, tiny_vlm_dir):
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(json.dumps({"prompt": f"hard {i}", "kind": "hard", "gold": ["a"]}) + "\n" for i in range(3))
    )
    base = {
        "model": str(tiny_vlm_dir),
        "data": str(data),
        "grpo": {
            "max_steps": 1,
            "per_device_train_batch_size": G,
            "num_generations": G,
            "max_completion_length": 4,
        },
    }
    cfg = {
        **base,
        "output_dir": str(tmp_path / "a"),
        "online_filter": {"reward": "accuracy_probe", "max_rounds": 2},
    }
    trainer = build_trainer(
        "reinforced_planning",
        stage_settings(cfg, "reinforced_planning"),
        extra_reward_funcs=[accuracy_probe],
        extra_weights=[1.0],
    )
    with pytest.raises(RuntimeError, match="2 generation rounds kept 0 of 2 prompt groups"):
        trainer.train()
    cfg = {
        **base,
        "output_dir": str(tmp_path / "b"),
        "online_filter": {"reward": "accuracy_probe", "max_rounds": 2, "when_exhausted": "repeat"},
    }
    trainer = build_trainer(
        "reinforced_planning",
        stage_settings(cfg, "reinforced_planning"),
        extra_reward_funcs=[accuracy_probe],
        extra_weights=[1.0],
    )
    trainer.train()
    h = next(h for h in trainer.state.log_history if "online_filter/empty_steps" in h)
    assert h["online_filter/empty_steps"] == 1.0 and h["online_filter/groups_generated"] == 2.0
    assert h["online_filter/kept_frac"] == 0.0 and h["rewards/accuracy_original/mean"] == 0.0


def test_buffer_geometry_b_and_n_follow_each_other():
    from groundrl.train.online_filter import steps_per_buffer

    # hand-worked: 8 rows a step (per_device 4 × accum 2 × 1 process); G = 4
    cfg = OnlineFilterConfig.from_mapping({"buffer_groups": 6})
    assert steps_per_buffer(cfg, 4, 2, 1, G) == 3  # 6 × 4 = 24 rows = 3 steps of 8
    assert steps_per_buffer(OnlineFilterConfig.from_mapping({"steps_per_buffer": 5}), 4, 2, 1, G) == 5
    assert steps_per_buffer(OnlineFilterConfig.from_mapping({}), 4, 2, 1, G) == 1
    # the paper's run [RR App. C.2 Table 5]: 128 prompts × 8 samples, train batch 128 -> 8 steps
    paper = OnlineFilterConfig.from_mapping({"buffer_groups": 128, "steps_per_buffer": 8})
    assert steps_per_buffer(paper, 1, 16, 8, 8) == 8
    with pytest.raises(ValueError, match="buffer_groups = 5 prompt groups"):
        steps_per_buffer(OnlineFilterConfig.from_mapping({"buffer_groups": 5}), 4, 2, 1, G)
    with pytest.raises(ValueError, match="steps_per_buffer = 2 disagrees"):
        steps_per_buffer(
            OnlineFilterConfig.from_mapping({"buffer_groups": 6, "steps_per_buffer": 2}), 4, 2, 1, G
        )
    with pytest.raises(ValueError, match="online_filter.steps_per_buffer must be an int"):
        OnlineFilterConfig.from_mapping({"steps_per_buffer": 0})


@pytest.mark.slow
def test_n_steps_over_each_filled_buffer_then_cleared(tmp_path, tiny_vlm_dir, monkeypatch):
    """B = 4 groups, 8 rows a step -> n = 2 steps per buffer; max_steps 4 -> 2 buffers.
    Hand-worked: each buffer is 4 kept groups × G = 16 rows, its two steps see 8 rows each
    and together exactly the buffer's 16 rows; 4 steps × 8 = 32 rows reach the loss."""
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer
    from groundrl.train.trainer import ground_grpo_trainer_class

    data = tmp_path / "d.jsonl"
    kinds = ["mixed", "easy", "hard", "mixed", "easy", "mixed"]
    data.write_text(
        "".join(
            json.dumps({"prompt": f"{k} task {i}", "kind": k, "gold": ["a"]}) + "\n"
            for i, k in enumerate(kinds)
        )
    )
    cfg = {
        "model": str(tiny_vlm_dir),
        "data": str(data),
        "output_dir": str(tmp_path / "out"),
        "online_filter": {"reward": "accuracy_probe", "max_rounds": 50, "seed": 2, "buffer_groups": 4},
        "grpo": {
            "max_steps": 4,
            "per_device_train_batch_size": 2 * G,
            "num_generations": G,
            "max_completion_length": 5,
            "logging_steps": 1,
        },
    }
    cls = ground_grpo_trainer_class()
    step_rows, buffer_rows = [], []
    # compute_loss: the Trainer's public override point; _filtered_batch: groundrl's buffer fill
    orig_loss, orig_fill = cls.compute_loss, cls._filtered_batch

    def rows_of(ids, comp):
        return sorted(tuple(a.tolist()) + tuple(b.tolist()) for a, b in zip(ids, comp, strict=True))

    def spy_loss(self, model, inputs, *args, **kwargs):
        step_rows.append(rows_of(inputs["prompt_ids"], inputs["completion_ids"]))
        return orig_loss(self, model, inputs, *args, **kwargs)

    def spy_fill(self, inputs):
        out = orig_fill(self, inputs)
        buffer_rows.append(rows_of(out["prompt_ids"], out["completion_ids"]))
        return out

    monkeypatch.setattr(cls, "compute_loss", spy_loss)
    monkeypatch.setattr(cls, "_filtered_batch", spy_fill)
    trainer = build_trainer(
        "reinforced_planning",
        stage_settings(cfg, "reinforced_planning"),
        extra_reward_funcs=[accuracy_probe],
        extra_weights=[1.0],
    )
    assert trainer.steps_per_buffer == 2 and trainer.args.steps_per_generation == 2
    trainer.train()
    assert trainer.state.global_step == 4
    assert len(trainer.buffers) == 2 and len(buffer_rows) == 2
    assert all(b["kept"] >= 4 and b["rows"] == 16 for b in trainer.buffers)
    assert [len(r) for r in step_rows] == [8, 8, 8, 8]
    assert trainer.loss_rows == 32
    # the two steps after a fill partition that buffer's rows: each row once, no other row
    assert sorted(step_rows[0] + step_rows[1]) == buffer_rows[0]
    assert sorted(step_rows[2] + step_rows[3]) == buffer_rows[1]
    tok = trainer.processing_class.tokenizer
    for b in buffer_rows:
        assert all("mixed" in tok.decode([t for t in r if t != tok.pad_token_id]) for r in b)
    logs = [h for h in trainer.state.log_history if "online_filter/steps_per_buffer" in h]
    assert logs and all(h["online_filter/steps_per_buffer"] == 2.0 for h in logs)


def test_steps_per_generation_clash_named(tmp_path, tiny_vlm_dir):
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prompt": "mixed", "kind": "mixed", "gold": ["a"]}) + "\n")
    cfg = {
        "model": str(tiny_vlm_dir),
        "data": str(data),
        "output_dir": str(tmp_path / "out"),
        "online_filter": {"reward": "accuracy_probe", "steps_per_buffer": 2},
        "grpo": {"per_device_train_batch_size": G, "num_generations": G, "steps_per_generation": 3},
    }
    with pytest.raises(ValueError, match="grpo.steps_per_generation = 3 conflicts"):
        build_trainer(
            "reinforced_planning",
            stage_settings(cfg, "reinforced_planning"),
            extra_reward_funcs=[accuracy_probe],
            extra_weights=[1.0],
        )
