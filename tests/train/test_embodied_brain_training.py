"""EmbodiedBrain training mechanisms on the tiny VLM: Step-GRPO hints drawn per sampling,
the GRM reward from the judge configuration, the task-type router."""

import json

import pytest

from groundrl.recipes import get_recipe
from groundrl.train.step_grpo import StepGRPOConfig, StepHinter

GOLD = "<actions>[['Navigate', 'Kitchen'], ['Pick', 'Apple'], ['Navigate', 'Fridge'], ['Place', 'Apple', 'Fridge']]</actions>"


def _chat(text):
    return [{"role": "user", "content": [{"type": "text", "text": text}]}]


FULL_GOLD = (
    "<response>Sure, I will put the apple in the fridge.</response><plans>1.[Navigate] Go to the kitchen\n"
    "2.[Manipulate] Pick up the apple\n3.[Navigate] Go to the fridge\n4.[Manipulate] Put the apple in the "
    "fridge</plans>" + GOLD
)
PLAN_LINES = [
    "1.[Navigate] Go to the kitchen",
    "2.[Manipulate] Pick up the apple",
    "3.[Navigate] Go to the fridge",
]


def test_hints_are_drawn_per_sampling_and_shared_by_a_group():
    hinter = StepHinter(StepGRPOConfig(p=1.0, seed=0))
    row = {"prompt": _chat("Put the apple in the fridge."), "gold": FULL_GOLD}
    ks = []
    for _ in range(6):  # the same prompt sampled six times, G = 2
        rows, k = hinter([dict(row), dict(row)], 2)
        assert rows[0]["prompt"] == rows[1]["prompt"] and rows[0]["gold"] == rows[1]["gold"]
        ks += k
        text = rows[0]["prompt"][0]["content"][0]["text"]
        # the hint is the first k <plans> lines as written [EmbodiedBrain §4.2.2: planning-step level]
        assert text.endswith("\n".join(["fridge.", *PLAN_LINES[: k[0]]][-max(k[0], 1) :]))
        assert ("Go to the fridge" in text) == (k[0] == 3) and "['Pick'" not in text
        # the gold (the GRM's reference) stays whole: <response>, <plans> and <actions>
        assert rows[0]["gold"] == FULL_GOLD
    assert len(set(ks)) > 1  # two draws of the same prompt differ
    assert row["gold"] == FULL_GOLD  # the data set row is never changed
    # a gold with no <plans>: plan-step lines built from the actions
    rows, k = StepHinter(StepGRPOConfig(p=1.0, seed=3))([{"prompt": "Do it.", "gold": GOLD}], 1)
    shown = ["1.[Navigate] Kitchen", "2.[Pick] Apple", "3.[Navigate] Fridge"][: k[0]]
    assert rows[0]["prompt"].endswith("\n".join(["Do it.", *shown][-max(k[0], 1) :]))
    assert rows[0]["gold"] == GOLD


def test_router_sends_each_task_type_to_its_parts():
    rubric = get_recipe("embodied_brain").rubric(router=True)
    samples = [
        {"task_type": "planning", "gold": GOLD},
        {"task_type": "spatial_mcq", "answer": "B"},
        {"task_type": "spatial_descriptive", "answer": "two"},
        {"task_type": "detection", "boxes": [{"label": "cup", "bbox_2d": [0, 0, 10, 10]}]},
        {"task_type": "counting", "answer": 3},
        {"task_type": "instruction", "answer": "yes"},
    ]
    completions = [
        "<response>ok</response><plans>1.[Navigate] go</plans><actions>[['Navigate', 'Kitchen']]</actions>",
        "<answer>B</answer>",
        "<answer>three</answer>",
        '[{"label": "cup", "bbox_2d": [0, 0, 10, 5]}]',
        "<answer>3</answer>",
        "<answer>yes</answer>",
    ]
    verdicts = rubric.score_batch(completions, samples)
    applied = [{n for n, s in v.parts.items() if s.value is not None} for v in verdicts]
    assert applied == [
        {"format", "plan_f1"},
        {"spatial_mcq.accuracy"},
        {"spatial_descriptive.accuracy"},
        {"detection.iou"},
        {"counting.accuracy"},
        {"instruction.accuracy"},
    ]
    # hand-worked: MCQ B = B -> 1; "three" vs "two" -> 0; box IoU 50/100 = 0.5; 3 = 3 -> 1
    assert verdicts[1].parts["spatial_mcq.accuracy"].value == 1.0
    assert verdicts[2].parts["spatial_descriptive.accuracy"].value == 0.0
    assert verdicts[3].parts["detection.iou"].value == pytest.approx(0.5)
    assert verdicts[4].parts["counting.accuracy"].value == 1.0
    assert verdicts[5].parts["instruction.accuracy"].value == 1.0
    with pytest.raises(ValueError, match="record 2: task_type 'ocr' has no reward"):
        rubric.check_samples([samples[0], {"task_type": "ocr"}])
    with pytest.raises(ValueError, match="needs field 'boxes'"):
        rubric.check_samples([{"task_type": "detection"}])


def test_router_type_without_reward_is_a_load_error(tmp_path):
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prompt": "p", "task_type": "ocr"}) + "\n")
    cfg = {
        "model": "/nonexistent",
        "data": str(data),
        "output_dir": str(tmp_path / "o"),
        "recipe_options": {"router": True},
    }
    with pytest.raises(ValueError, match="'ocr' has no reward"):
        build_trainer(
            "embodied_brain", stage_settings(cfg, "embodied_brain")
        )  # fails before the (missing) model is loaded


class Probe:
    __name__ = "probe"

    def __init__(self):
        self.seen = []

    def __call__(self, prompts=None, completions=None, gold=None, **kw):
        self.seen += [
            (p[-1]["content"][-1]["text"] if isinstance(p, list) else p, g)
            for p, g in zip(prompts, gold, strict=True)
        ]
        return [len(c[0]["content"] if isinstance(c, list) else c) / 24.0 for c in completions]


@pytest.mark.slow
def test_step_grpo_and_router_in_training(tmp_path, tiny_vlm_dir, chat_server):
    """Step-GRPO from the config: the same prompt reaches the rewards with different hints
    across steps, each with its remaining gold; the GRM (judge config, 0.8) and rule (0.2)
    parts are logged per type; judge calls run concurrently; failures are logged."""
    pytest.importorskip("trl")
    from groundrl.train.config import stage_settings
    from groundrl.train.grpo import build_trainer

    chat_server.responder = lambda msgs, body: "<think>fine</think><score>0.75</score>"
    chat_server.delay = 0.05
    data = tmp_path / "d.jsonl"
    data.write_text(
        json.dumps({"prompt": "Put the apple in the fridge.", "task_type": "planning", "gold": GOLD})
        + "\n"
        + json.dumps({"prompt": "How many cups?", "task_type": "counting", "answer": 2})
        + "\n"
    )
    cfg = {
        "model": str(tiny_vlm_dir),
        "data": str(data),
        "output_dir": str(tmp_path / "o"),
        "recipe_options": {"router": True},
        "judge": {"backend": "openai", "model": "grm", "url": chat_server.base_url, "concurrency": 8},
        "step_grpo": {"p": 1.0, "seed": 0},
        "grpo": {
            "max_steps": 4,
            "per_device_train_batch_size": 8,
            "num_generations": 4,
            "max_completion_length": 6,
        },
    }
    probe = Probe()
    trainer = build_trainer(
        "embodied_brain",
        stage_settings(cfg, "embodied_brain"),
        extra_reward_funcs=[probe],
        extra_weights=[0.0],
    )
    weights = dict(zip(trainer.reward_func_names, trainer.reward_weights.tolist(), strict=True))
    assert weights["format"] == pytest.approx(0.2) and weights["grm"] == pytest.approx(0.8)
    trainer.train()
    planning = [(p, g) for p, g in probe.seen if p.startswith("Put the apple")]
    hinted = {p for p, _ in planning}
    assert len(hinted) > 1  # the same prompt with different hints across samplings
    for p, g in planning:
        k = p.count("\n") - 2 if "Guided precursors" in p else 0
        assert g.count("[") - 1 == 4 - k
    logs = {k: v for h in trainer.state.log_history for k, v in h.items()}
    assert logs["rewards/grm/mean"] == pytest.approx(0.75)
    assert "rewards/counting.accuracy/mean" in logs and "step_grpo/hinted_frac" in logs
    assert logs["judge/grm/failed_frac"] == 0.0
    assert chat_server.max_in_flight > 1


def test_judge_failures_are_logged(chat_server):
    """Two of four GRM calls fail (HTTP 500, no retries): they score 0 (the paper's
    fallback) and judge/grm/failed_frac = 2/4 is logged."""
    import asyncio

    from groundrl.integrations.trl import reward_funcs
    from groundrl.train.grpo import count_judge_failures

    chat_server.responder = lambda msgs, body: "<score>1.0</score>"
    chat_server.fail_next = [500, 500]
    rubric = get_recipe("embodied_brain").rubric(
        judge={
            "backend": "openai",
            "model": "grm",
            "url": chat_server.base_url,
            "retries": 0,
            "concurrency": 1,
        }
    )
    funcs, _ = reward_funcs(rubric)
    grm = count_judge_failures(next(f for f in funcs if f.__name__ == "grm"))
    logged = {}
    completions = [[{"role": "assistant", "content": "<actions>[['Pick', 'Apple']]</actions>"}]] * 4
    out = asyncio.run(
        grm(
            prompts=["p"] * 4,
            completions=completions,
            gold=[GOLD] * 4,
            log_metric=lambda k, v: logged.__setitem__(k, v),
            log_extra=lambda k, v: None,
        )
    )
    assert sorted(out) == [0.0, 0.0, 1.0, 1.0]
    assert logged == {"judge/grm/failed_frac": 0.5}
    rubric.close()
