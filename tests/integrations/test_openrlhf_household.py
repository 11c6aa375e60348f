"""The OpenRLHF household agent's parts that need no OpenRLHF: the prompt dataset, the
label, the GROUNDRL_ENV_* settings, the stand-in when OpenRLHF is absent, and the
episode accounting — the same episode reward as the TRL rollout (EnvRollout) for the
same turns. The agent inside the real OpenRLHF executor is tested in
test_real_cluster_packages_openrlhf_multiturn.py."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

import groundrl.integrations.openrlhf_household as oh
from groundrl.integrations.openrlhf_household import (
    AgentInstance,
    HouseholdAgentConfig,
    prompt_records,
    task_from_label,
    task_label,
    write_prompt_dataset,
)
from groundrl.sim.generate import generate_tasks
from groundrl.sim.tasks import Task

# A hand-built task: two cloths on a shelf, put both in the bathtub basin
# (pick_two_obj_and_place: 2 goal conditions, one per cloth in the basin); shared with
# the cluster driver cluster/openrlhf_household.py through cluster/two_cloths.json.
_FIXTURE = json.loads((Path(__file__).resolve().parent / "cluster" / "two_cloths.json").read_text())
TWO_CLOTHS = _FIXTURE["task"]
ONE_CLOTH = _FIXTURE["one_cloth"]
GOLD = ONE_CLOTH + _FIXTURE["second_cloth"]
PARTIAL = ONE_CLOTH + _FIXTURE["partial_tail"]  # one cloth placed, then an object the scene lacks


# ------------------------------------------------------------------ dataset and label


def test_prompt_dataset_rows_are_prompt_and_task_json_text(tmp_path):
    from groundrl.sim.episode_prompt import prompt

    tasks = generate_tasks(3, seed=1)
    path = tmp_path / "sub" / "household.jsonl"
    assert write_prompt_dataset(tasks, path) == 3
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [sorted(r) for r in rows] == [["id", "input", "label"]] * 3
    for task, row in zip(tasks, rows, strict=True):
        assert row["id"] == task.id and row["input"] == prompt(task)
        assert isinstance(row["label"], str)
        assert task_from_label(row["label"]).to_json() == task.to_json()


def test_prompt_records_take_dicts_custom_keys_and_prompts():
    (row,) = prompt_records(
        [TWO_CLOTHS], lambda t: [{"role": "user", "content": t.instruction}], input_key="q"
    )
    assert row["q"] == [{"role": "user", "content": "Put two Cloths in the BathtubBasin."}]
    assert json.loads(row["label"]) == Task.from_json(TWO_CLOTHS).to_json()
    with pytest.raises(ValueError, match="must differ"):
        prompt_records([TWO_CLOTHS], input_key="x", label_key="x")


def test_label_may_be_a_decoded_dict_and_bad_labels_say_what_to_do():
    assert task_from_label(TWO_CLOTHS).id == "two-cloths"
    assert task_from_label(task_label(Task.from_json(TWO_CLOTHS))).id == "two-cloths"
    for bad in ("", None, "not json", "[1, 2]"):
        with pytest.raises(ValueError, match="--data.label_key label"):
            task_from_label(bad)
    with pytest.raises(ValueError, match="does not load"):
        task_from_label('{"id": "x"}')


# ------------------------------------------------------------------ settings


def test_settings_from_environment_variables():
    assert HouseholdAgentConfig.from_env({}) == HouseholdAgentConfig()
    cfg = HouseholdAgentConfig.from_env(
        {
            "GROUNDRL_ENV_MAX_TURNS": "4",
            "GROUNDRL_ENV_REWARD": "progress",
            "GROUNDRL_ENV_SUCCESS_BONUS": "0.5",
            "GROUNDRL_ENV_INVALID_PENALTY": "0.1",
            "GROUNDRL_ENV_TURN_PENALTY": "0.25",
            "GROUNDRL_ENV_MAX_STEPS": "12",
            "GROUNDRL_ENV_MAX_INVALID": "3",
            "GROUNDRL_ENV_VOCAB": "eb_alfred",
            "GROUNDRL_ENV_FEEDBACK_TEMPLATE": "<u>{feedback}</u>",
            "GROUNDRL_ENV_FEEDBACK_ROLE": "raw",
            "GROUNDRL_STOP_TOKENS": '["<eot>"]',
            "GROUNDRL_RECIPE": "ignored here",
        }
    )
    assert cfg == HouseholdAgentConfig(
        4, "progress", 0.5, 0.1, 0.25, 12, 3, "eb_alfred", "<u>{feedback}</u>", ("<eot>",), "raw"
    )
    assert cfg.env_kwargs() == {
        "reward": "progress",
        "success_bonus": 0.5,
        "invalid_penalty": 0.1,
        "max_steps": 12,
        "max_invalid": 3,
        "vocab": "eb_alfred",
    }


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("MAX_TURNS", "0", "GROUNDRL_ENV_MAX_TURNS must be an integer ≥ 1, got '0'"),
        ("MAX_TURNS", "two", "GROUNDRL_ENV_MAX_TURNS must be an integer ≥ 1, got 'two'"),
        ("MAX_STEPS", "-3", "GROUNDRL_ENV_MAX_STEPS must be an integer ≥ 1"),
        ("REWARD", "dense", "GROUNDRL_ENV_REWARD must be one of sparse, progress, plan, got 'dense'"),
        ("SUCCESS_BONUS", "nan", "GROUNDRL_ENV_SUCCESS_BONUS must be a finite number ≥ 0"),
        ("TURN_PENALTY", "-0.1", "GROUNDRL_ENV_TURN_PENALTY must be a finite number ≥ 0, got '-0.1'"),
        ("INVALID_PENALTY", "inf", "GROUNDRL_ENV_INVALID_PENALTY must be a finite number ≥ 0"),
        ("VOCAB", "klingon", "GROUNDRL_ENV_VOCAB must be 'auto' or one of"),
        ("FEEDBACK_TEMPLATE", "Feedback:", "GROUNDRL_ENV_FEEDBACK_TEMPLATE must contain '{feedback}'"),
        ("MAX_TURN", "3", "GROUNDRL_ENV_MAX_TURN is not a setting of the household agent"),
    ],
)
def test_bad_settings_name_the_variable(name, value, message):
    with pytest.raises(ValueError) as e:
        HouseholdAgentConfig.from_env({f"GROUNDRL_ENV_{name}": value})
    assert message in str(e.value)


def test_current_config_follows_the_process_environment(monkeypatch):
    monkeypatch.setenv("GROUNDRL_ENV_MAX_TURNS", "5")
    assert oh.current_config().max_turns == 5
    monkeypatch.setenv("GROUNDRL_ENV_MAX_TURNS", "2")
    assert oh.current_config().max_turns == 2
    assert AgentInstance().config.max_turns == 2


# ------------------------------------------------------------------ loading


def test_loaded_by_path_reuses_the_installed_classes():
    """OpenRLHF execs the file under another module name (not in sys.modules)."""
    spec = importlib.util.spec_from_file_location("agent_module", oh.__file__)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.AgentExecutor is oh.AgentExecutor and mod.AgentInstance is oh.AgentInstance


@pytest.mark.skipif(oh._OPENRLHF_ERROR is None, reason="OpenRLHF is installed here")
def test_without_openrlhf_the_executor_says_so():
    with pytest.raises(ImportError, match="install openrlhf"):
        oh.AgentExecutor()


# ------------------------------------------------------------------ the episode


def _play_agent(task: dict, script: list[str], cfg: HouseholdAgentConfig):
    async def run():
        agent = AgentInstance(config=cfg)
        reset = await agent.reset({"observation": "PROMPT", "label": json.dumps(task)})
        steps = []
        for text in script:
            steps.append(await agent.step({"action_text": text, "sampling_params": "SP"}))
            if steps[-1]["done"]:
                break
        return agent, reset, steps

    return asyncio.run(run())


def test_step_results_as_the_executor_reads_them():
    """Hand-worked: "nonsense" is one invalid step (feedback text below), then the plan
    with a trailing EOS succeeds: 0, then progress 1 + bonus 1 - turn penalty 0.5."""
    cfg = HouseholdAgentConfig(turn_penalty=0.5, feedback_role="raw")
    agent, reset, steps = _play_agent(TWO_CLOTHS, ["nonsense", GOLD + "<|im_end|>"], cfg)
    assert reset == {"observation": "PROMPT"}
    first, second = steps
    assert first["rewards"].item() == 0.0 and first["done"] is False and first["sampling_params"] == "SP"
    assert first["environment_feedback"] == (
        "\nFeedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:"
    )
    assert second["rewards"].item() == 1.5 and second["scores"] == 1.5 and second["done"] is True
    assert second["environment_feedback"] == ""  # nothing appended after the last turn
    assert second["extra_logs"] == {
        "env_success": 1.0,
        "env_progress": 1.0,
        "env_turns": 2.0,
        "env_steps": 9.0,
        "env_context_cut": 0.0,
    }
    with pytest.raises(RuntimeError, match="over"):
        agent.turn("find a Cloth")


def test_feedback_template_wraps_the_feedback():
    cfg = HouseholdAgentConfig(
        feedback_template="<|im_start|>user{feedback}<|im_end|>\n<|im_start|>assistant\n", feedback_role="raw"
    )
    _, _, steps = _play_agent(TWO_CLOTHS, ["nonsense", GOLD], cfg)
    assert steps[0]["environment_feedback"] == (
        "<|im_start|>user\nFeedback: Last action is invalid. No action could be read in any vocabulary."
        "\nPlan:<|im_end|>\n<|im_start|>assistant\n"
    )


def test_default_feedback_is_a_user_turn_of_the_chat_template():
    """With the default role the feedback continues the chat template: after a turn that
    ended with its EOS (<|im_end|>) come the template's newline, the user turn and the
    assistant prompt; a template setting without the raw role is refused, naming both."""
    from groundrl.models.tiny_vlm import build_tokenizer

    tok = build_tokenizer(seed=0)

    async def run():
        agent = AgentInstance(config=HouseholdAgentConfig(), tokenizer=tok)
        await agent.reset({"observation": "PROMPT", "label": json.dumps(TWO_CLOTHS)})
        return await agent.step({"action_text": "nonsense<|im_end|>"})

    fb = "Feedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:"
    msgs = [{"role": "user", "content": "PROMPT"}, {"role": "assistant", "content": "nonsense"}]
    want = tok.apply_chat_template(
        [*msgs, {"role": "user", "content": fb}], tokenize=False, add_generation_prompt=True
    )
    before = tok.apply_chat_template(msgs, tokenize=False)  # ends "nonsense<|im_end|>\n"
    step = asyncio.run(run())
    assert before[: -len("\n")] + step["environment_feedback"] == want
    with pytest.raises(ValueError, match="FEEDBACK_ROLE=raw"):
        HouseholdAgentConfig.from_env({"GROUNDRL_ENV_FEEDBACK_TEMPLATE": "<u>{feedback}</u>"})
    with pytest.raises(ValueError, match="needs the tokenizer"):
        _play_agent(TWO_CLOTHS, ["nonsense"], HouseholdAgentConfig())


def test_settle_pays_progress_once():
    """A context-full stop after a turn that placed one cloth: "plan" pays ½."""
    agent, _, steps = _play_agent(
        TWO_CLOTHS, [PARTIAL], HouseholdAgentConfig(max_turns=3, feedback_role="raw")
    )
    assert steps[0]["done"] is False and agent.total == 0.0
    assert agent.settle() == 0.5 and agent.total == 0.5
    assert agent.logs()["env_context_cut"] == 1.0 and agent.done


class CharTok:
    """One token per character; 0 is EOS (the TRL rollout only needs these three)."""

    eos_token_id = 0

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [ord(c) for c in text]}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(i) for i in ids if i)


SCRIPTS = {
    "fail_then_succeed": ["nonsense", GOLD, GOLD],
    "partial_then_nonsense": [PARTIAL, "nonsense", "nonsense"],
    "succeed_at_once": [GOLD, GOLD, GOLD],
    "empty_turns": ["", "", ""],
    "two_partials": [PARTIAL, "find a Shelf\npick up the Cloth\nfind a Plunger", GOLD],
}


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("reward", ["plan", "progress", "sparse"])
@pytest.mark.parametrize(
    ("max_turns", "turn_penalty", "max_invalid"), [(1, 0.0, 10), (2, 0.25, 10), (3, 0.1, 2)]
)
def test_episode_reward_equals_the_trl_rollouts(script, reward, max_turns, turn_penalty, max_invalid):
    """The agent's step rewards sum (as the executor sums them) to EnvRollout's episode
    reward for the same turns, with the same success, progress, turns and steps."""
    from groundrl.train.multiturn import EnvRollout

    texts = SCRIPTS[script]

    def generate(model, tok, contexts, max_new_tokens, trainer=None):
        return [
            tok(texts[tok.decode(c).count("\nFeedback:")])["input_ids"] + [tok.eos_token_id] for c in contexts
        ]

    task = Task.from_json(TWO_CLOTHS)
    rollout = EnvRollout(
        {"P": task},
        max_turns=max_turns,
        turn_penalty=turn_penalty,
        generate_fn=generate,
        reward=reward,
        max_invalid=max_invalid,
    )
    (ep,) = rollout.play(None, CharTok(), ["P"], 10_000)
    cfg = HouseholdAgentConfig(  # raw feedback, as EnvRollout gives a text prompt
        max_turns=max_turns,
        reward=reward,
        turn_penalty=turn_penalty,
        max_invalid=max_invalid,
        feedback_role="raw",
    )
    agent, _, steps = _play_agent(TWO_CLOTHS, texts, cfg)
    assert steps[-1]["done"]
    assert sum(s["rewards"].item() for s in steps) == pytest.approx(ep.reward)
    assert steps[-1]["scores"] == pytest.approx(ep.reward)
    logs = steps[-1]["extra_logs"]
    assert (logs["env_success"], logs["env_progress"], logs["env_turns"], logs["env_steps"]) == (
        float(ep.success),
        ep.progress,
        float(ep.turns),
        float(ep.steps),
    )
