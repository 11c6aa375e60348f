"""groundrl's household agent (integrations/openrlhf_household.py) inside the real
OpenRLHF 0.11 multi-turn machinery, in the cluster environment (.venv-cluster): the file
is loaded by OpenRLHF's own ``_load_agent_executor``, samples go through the real
``RolloutRayActor.generate_responses`` and ``MultiTurnAgentExecutor``, and back through
the real ``_process_response_into_experience`` (the action mask); a scripted engine
stands in for vLLM and the tokenizer is trained locally. Expected values are worked by
hand from the task: two cloths on a shelf, both to go in the bathtub basin (two goal
conditions, one per cloth)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest
from cluster_support import ROOT, drive, needs_cluster_env

pytestmark = needs_cluster_env

INVALID = "\nFeedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:"
GOLD = (
    "find a Cloth\npick up the Cloth\nfind a BathtubBasin\nput down the object in hand\n"
    "find a Shelf\npick up the Cloth\nfind a BathtubBasin\nput down the object in hand"
)
LOG_KEYS = ["env_success", "env_progress", "env_turns", "env_steps", "env_context_cut"]


@pytest.fixture(scope="module")
def episodes():
    return drive("openrlhf_household.py", "episodes")


def test_dataset_row_reaches_the_agent_as_openrlhf_reads_it(episodes):
    """write_prompt_dataset's row, read by OpenRLHF's preprocess_data with a chat
    template: the prompt is the templated instruction and the label stays JSON text."""
    assert episodes["openrlhf_version"].startswith("0.11")
    # the scripted engine has the real RolloutRayActor.generate's parameters
    assert episodes["engine_signature"]["stub"] == episodes["engine_signature"]["real"]
    assert episodes["rows"] == 1 and episodes["row_keys"] == ["id", "input", "label"]
    assert episodes["prompt"] == (
        "<|im_start|>user\nInstruction: Put two Cloths in the BathtubBasin.\n"
        "Scene: Cloth in Shelf; Cloth in Shelf\nPlan:<|im_end|>\n<|im_start|>assistant\n"
    )
    assert episodes["label_is_text"]


def test_loaded_by_openrlhf_and_replans_after_feedback(episodes):
    """Turn 1 is unreadable (one invalid step), the feedback goes back into the context
    with action mask 0, turn 2 runs the 8-action plan and succeeds. Reward ("plan", bonus
    1, turn penalty 0.25): progress 1 + bonus 1 - 0.25·(2 turns - 1) = 1.75. Two samples
    of the prompt play two separate episodes."""
    run = episodes["replan"]
    lengths = episodes["token_lengths"]
    assert len(run["samples"]) == 2
    for s in run["samples"]:
        assert s["type"] == "groundrl.integrations.openrlhf_household.AgentExecutor"
        assert s["reward"] == pytest.approx(1.75) and s["scores"] == pytest.approx(1.75)
        assert s["extra_logs"] == {
            "env_success": 1.0,
            "env_progress": 1.0,
            "env_turns": 2.0,
            "env_steps": 9.0,  # 1 invalid step + 8 actions
            "env_context_cut": 0.0,
        }
        # token layout: prompt | turn 1 (+EOS) | feedback | turn 2 (+EOS), nothing after
        p = s["prompt_tokens"]
        (a1, b1), (a2, b2) = s["ranges"]
        assert (a1, b1 - a1, b2 - a2) == (p, lengths["nonsense"], lengths["gold"])
        assert s["feedback_texts"] == [INVALID]
        assert s["feedback_mask"] == [0] * (a2 - b1) and a2 - b1 > 0
        assert s["action_mask_sum"] == lengths["nonsense"] + lengths["gold"]
        assert s["n_tokens"] == b2 and s["tail"] == GOLD + "<|im_end|>"
        # what the trainer's Experience carries
        assert s["exp_reward"] == [pytest.approx(1.75)]
        assert set(LOG_KEYS) <= set(s["exp_info"]) and s["exp_info"]["env_turns"] == [2.0]
    # the engine saw the feedback at the end of the second turn's context
    second = [c for c in run["engine_calls"] if "\nFeedback:" in c["context"]]
    assert len(run["engine_calls"]) == 4 and len(second) == 2
    assert all(c["context"] == episodes["prompt"] + "nonsense<|im_end|>" + INVALID for c in second)


def test_max_turns_stops_with_the_progress_payout(episodes):
    """Never succeeds: turn 1 puts one cloth in the basin then looks for a Plunger the
    scene lacks; turn 2 is unreadable; max_turns 2 ends the episode (the engine is not
    asked a third time). "plan": 0 + (0 - 0.25 + progress ½) = 0.25; "sparse" pays no
    progress: -0.25."""
    for name, reward in (("max_turns", 0.25), ("max_turns_sparse", -0.25)):
        run = episodes[name]
        (s,) = run["samples"]
        assert len(run["engine_calls"]) == 2
        assert s["reward"] == pytest.approx(reward) and s["exp_reward"] == [pytest.approx(reward)]
        assert s["extra_logs"] == {
            "env_success": 0.0,
            "env_progress": 0.5,
            "env_turns": 2.0,
            "env_steps": 6.0,  # 4 actions + the failed find, then 1 invalid step
            "env_context_cut": 0.0,
        }
        assert s["feedback_texts"] == [
            "\nFeedback: find a Plunger: Last action is invalid. no 'Plunger' in this scene\nPlan:"
        ]
        assert set(s["feedback_mask"]) == {0} and s["tail"] == "nonsense<|im_end|>"


def test_full_context_is_settled_like_max_turns(episodes):
    """--data.max_len leaves room for the first turn only: the executor stops without a
    `done`; the agent's executor settles the episode as a cut one (progress ½ paid) and
    logs env_context_cut."""
    run = episodes["context_full"]
    (s,) = run["samples"]
    assert len(run["engine_calls"]) == 1
    assert s["reward"] == pytest.approx(0.5) and s["scores"] == pytest.approx(0.5)
    assert s["extra_logs"] == {
        "env_success": 0.0,
        "env_progress": 0.5,
        "env_turns": 1.0,
        "env_steps": 5.0,
        "env_context_cut": 1.0,
    }
    assert s["exp_reward"] == [pytest.approx(0.5)]


def test_default_feedback_is_a_user_turn_with_logprob_0(episodes):
    """The default role (user) with logprobs requested: the context the engine re-plans
    from is, decoded, exactly the chat template of the prompt, the policy's turn and the
    feedback as a user message (worked by hand and as the tokenizer renders it); the
    feedback tokens have action mask 0 and rollout logprob 0 (the policy's: the engine's
    -0.5); the reward is the raw run's."""
    run = episodes["chat"]
    fb = INVALID.strip()
    want = (
        episodes["prompt"]
        + "nonsense<|im_end|>\n<|im_start|>user\n"
        + fb
        + "<|im_end|>\n<|im_start|>assistant\n"
    )
    assert episodes["chat_template"] == want
    second = [c["context"] for c in run["engine_calls"] if "\nFeedback:" in c["context"]]
    assert second == [want]
    (s,) = run["samples"]
    assert s["reward"] == pytest.approx(1.75) and s["feedback_texts"] == [
        "\n<|im_start|>user\n" + fb + "<|im_end|>\n<|im_start|>assistant\n"
    ]
    (a1, b1), (a2, b2) = s["ranges"]
    assert s["feedback_mask"] == [0] * (a2 - b1)
    lp = s["rollout_log_probs"]
    assert lp[:a1] == [0.0] * a1 and lp[a1:b1] == [-0.5] * (b1 - a1)
    assert lp[b1:a2] == [0.0] * (a2 - b1) and lp[a2:b2] == [-0.5] * (b2 - a2) and len(lp) == b2


def test_bad_settings_fail_when_openrlhf_loads_the_agent():
    out = drive("openrlhf_household.py", "errors")
    assert out["max_turns_0"] == "ValueError: GROUNDRL_ENV_MAX_TURNS must be an integer ≥ 1, got '0'"
    assert out["unknown_name"].startswith("ValueError: GROUNDRL_ENV_MAX_TURN is not a setting")
    assert "GROUNDRL_ENV_MAX_TURNS" in out["unknown_name"]
    assert (
        out["reward_kind"]
        == "ValueError: GROUNDRL_ENV_REWARD must be one of sparse, progress, plan, got 'dense'"
    )
    assert "GROUNDRL_ENV_TURN_PENALTY must be a finite number ≥ 0" in out["negative_penalty"]
    assert "GROUNDRL_ENV_FEEDBACK_TEMPLATE must contain '{feedback}'" in out["template"]
    assert "set GROUNDRL_ENV_FEEDBACK_ROLE=raw" in out["template_without_raw"]
    assert "GROUNDRL_ENV_FEEDBACK_ROLE must be one of user, raw" in out["role"]
    assert out["no_label"].startswith("ValueError: the label must be a household task as JSON")
    assert "--data.label_key label" in out["no_label"]


def test_example_script_flags_parse_with_openrlhf():
    """examples/openrlhf/household_multiturn.sh (dry run): its arguments pass the
    installed train_ppo_ray.py's parser and checks; the agent file and the dataset keys
    are the ones this module needs; GROUNDRL_ENV_* go to the job's runtime_env."""
    env = {
        **os.environ,
        "GROUNDRL_DRY_RUN": "1",
        "PYTHON": sys.executable,
        "GROUNDRL_ENV_MAX_TURNS": "4",
        "PYTHONPATH": str(ROOT / "src"),
    }
    r = subprocess.run(
        ["bash", str(ROOT / "examples/openrlhf/household_multiturn.sh"), "--train.seed", "7"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    cmd = shlex.split(r.stdout.replace("\\\n", " "))  # the printed command, `\`-continued
    assert cmd[:3] == ["ray", "job", "submit"]
    assert '--runtime-env-json={"env_vars": {"GROUNDRL_ENV_MAX_TURNS": "4"}}' in cmd
    args = cmd[cmd.index("openrlhf.cli.train_ppo_ray") + 1 :]
    parsed = drive("openrlhf_household.py", "flags", *args)["parsed"]
    assert parsed["train.agent_func_path"] == str(ROOT / "src/groundrl/integrations/openrlhf_household.py")
    assert parsed["data.input_key"] == "input" and parsed["data.label_key"] == "label"
    assert parsed["data.apply_chat_template"] is True and parsed["train.seed"] == 7
    assert parsed["rollout.n_samples_per_prompt"] == 8
