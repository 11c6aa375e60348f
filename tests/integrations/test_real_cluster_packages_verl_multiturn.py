"""groundrl's household agent loop (groundrl.integrations.verl_agent_loop) inside the real
verl 0.8 AgentLoopWorker, in .venv-cluster: rows from household_rows through Parquet and
verl's RLHFDataset, the loop found by verl's registry from the agent-loop YAML, a scripted
policy in place of the LLM server, and verl's own postprocessing into the DataProto it
trains on. One driver run (tests/integrations/cluster/verl_household_loop.py) feeds every
test; expected values are worked by hand. Skips, saying why, without that environment.

Config of the run: max_turns 3, turn_penalty 0.25, reward "plan" (success bonus 1),
feedback_role raw (its token counts are worked by hand) and data.max_response_length
R = 192. Rows: A re-plans to success, B is cut by the response budget, C is cut by
max_turns. A second run plays row A with the default feedback_role (user) and a server
that returns logprobs. The scripted server checks every call against the real
LLMServerClient.generate and vLLM server signatures."""

from __future__ import annotations

import pytest
from cluster_support import ROOT, drive, needs_cluster_env

pytestmark = needs_cluster_env

FB_INVALID_WHY = "No action could be read in any vocabulary."


@pytest.fixture(scope="module")
def out():
    return drive("verl_household_loop.py", str(ROOT))


def test_loop_is_found_through_verls_registry_and_instantiate(out):
    """(a) importing the module registers it with verl's @register; AgentLoopWorker loads
    the agent-loop YAML into the same registry (options included) and builds the loop
    with hydra.utils.instantiate; the example YAML builds with its options."""
    target = "groundrl.integrations.verl_agent_loop.HouseholdAgentLoop"
    assert out["registered_by_decorator"] == {"_target_": target}
    assert out["registry_after_worker"] == {
        "_target_": target,
        "name": "groundrl_household",
        "max_turns": 3,
        "turn_penalty": 0.25,
        "feedback_role": "raw",
    }
    assert out["built"]["cls"] == target
    assert out["built"]["options"] == {
        "max_turns": 3,
        "reward": "plan",
        "success_bonus": 1.0,
        "invalid_penalty": 0.0,
        "turn_penalty": 0.0,
        "max_steps": 30,
        "max_invalid": 10,
        "vocab": "auto",
        "max_tokens_per_turn": None,
        "feedback_role": "user",
    }
    # every row is routed to the loop by its agent_name column
    assert out["agent_names"] == ["groundrl_household"] * 3
    # the task JSON string in extra_info survives Parquet + RLHFDataset exactly
    assert out["task_json_roundtrip"] == [True, True, True]


def test_fail_then_replan_feedback_is_masked_and_reward_is_the_episodes(out):
    """(b) row A: turn 1 " nonsense" (one invalid step), the environment's feedback, turn
    2 the expert plan (4 actions) succeeds. Response = turn 1 + feedback + turn 2, mask
    1/0/1; verl's num_turns = prompt + 2 policy turns + 1 feedback = 4; reward = progress
    1 + success bonus 1 - 0.25 for the second turn = 1.75."""
    a, p = out["rows"]["a"], out["pieces"]
    t1, fb, t2 = p["nonsense"], p["fb_invalid"], p["plan_a"]
    assert a["response"] == t1 + fb + t2
    assert a["mask"] == [1] * len(t1) + [0] * len(fb) + [1] * len(t2) + [0] * (out["R"] - len(a["response"]))
    assert a["num_turns"] == 4
    assert a["env"] == {
        "env_success": 1.0,
        "env_progress": 1.0,
        "env_turns": 2.0,
        "env_steps": out["gold_len_a"] + 1.0,  # the invalid step counts
        "env_cut": 0.0,
    }
    assert a["turn_scores"] == [0.0, 2.0] and a["env_end"] == "success"
    # the second turn was generated from prompt + turn 1 + the feedback, as token ids
    ta = out["task_ids"][0]
    assert out["contexts"][f"{ta}#2"] == out["expected_prompts"][0] + t1 + fb
    assert a["prompt"] == out["expected_prompts"][0]


def test_reward_reaches_rm_scores_at_the_last_response_token(out):
    """(c) verl's _postprocess puts reward_score into rm_scores at the last response token
    (what verl trains on when rm_scores is in the batch): A 1.75 at 41 (2 + 20 + 20 tokens),
    B 0.25 at 191 (the full budget), C -0.5 at 45 (3 turns of 2 + 2 feedbacks of 20)."""
    rows = out["rows"]
    assert rows["a"]["rm_scores_nonzero"] == {"41": 1.75}
    assert rows["b"]["rm_scores_nonzero"] == {"191": 0.25}
    assert rows["c"]["rm_scores_nonzero"] == {"45": -0.5}
    for r in rows.values():
        assert r["rm_scores_nonzero"] == {str(len(r["response"]) - 1): r["rm_scores_sum"]}
    # the per-sample values reach verl's reward_extra_info columns (logged in validation)
    assert out["reward_extra_keys"] == ["env_success", "env_progress", "env_turns", "env_steps", "env_cut"]


def test_response_length_cap_is_respected_and_the_cut_pays_progress(out):
    """(d) row B: turn 1 places the first of two objects (4 actions, progress 1/2), turn 2
    the server ignores max_tokens and returns 4·R tokens. The loop asked for 192 then
    192 - 20 - 18 = 154 tokens, kept exactly 154, and the next feedback did not fit: cut.
    Reward: plan's progress 0.5 paid at the cut - 0.25 for the second turn = 0.25."""
    b, p, R = out["rows"]["b"], out["pieces"], out["R"]
    tb = out["task_ids"][1]
    asked = {c["turn"]: c["max_tokens"] for c in out["calls"] if c["task"] == tb}
    n1, nfb = len(p["half_b"]), len(p["fb_put"])
    assert (n1, nfb) == (20, 18)
    assert asked == {1: R, 2: R - n1 - nfb}
    assert len(b["response"]) == b["response_width"] == R
    assert b["response"] == p["half_b"] + p["fb_put"] + p["junk_token"] * (R - n1 - nfb)
    assert b["mask"] == [1] * n1 + [0] * nfb + [1] * (R - n1 - nfb)
    assert b["env"] == {
        "env_success": 0.0,
        "env_progress": 0.5,
        "env_turns": 2.0,
        "env_steps": 5.0,
        "env_cut": 1.0,
    }
    assert b["num_turns"] == 4 and b["env_end"] == "response_length"


def test_max_turns_cut_no_feedback_after_the_last_turn(out):
    """Row C: three unreadable plans with max_turns 3: 3 invalid steps, feedback after
    turns 1 and 2 only, each turn asked for the budget left (192, 170, 148); reward
    progress 0 - 2·0.25 = -0.5; num_turns 1 + 3 + 2 = 6."""
    c, p = out["rows"]["c"], out["pieces"]
    n, fb = p["nonsense"], p["fb_invalid"]
    assert c["response"] == n + fb + n + fb + n
    assert c["mask"][: len(c["response"])] == [1] * 2 + [0] * 20 + [1] * 2 + [0] * 20 + [1] * 2
    tc = out["task_ids"][2]
    assert [x["max_tokens"] for x in out["calls"] if x["task"] == tc] == [192, 170, 148]
    assert c["num_turns"] == 6 and c["env_end"] == "max_turns"
    assert c["env"]["env_steps"] == 3.0 and c["env"]["env_cut"] == 1.0


def test_bad_option_raises_when_verl_builds_the_loop(out):
    """A typo'd key in the agent-loop YAML (max_turn) fails the rollout, naming the key,
    the options and where to change them (hydra wraps our ValueError)."""
    err = out["bad_error"]
    assert err["cause"] == "ValueError"
    assert "unknown option(s) ['max_turn']" in err["message"]
    assert "agent_loop_config_path" in err["message"] and "'max_turns'" in err["message"]


def test_example_script_overrides_compose_with_verls_config(out):
    """examples/verl/household_multiturn.sh (dry run) composes with verl 0.8's ppo_trainer
    config: the example YAML as the agent-loop config, groundrl_household as the default
    loop, GRPO, and no custom reward function."""
    ex = out["example"]
    assert ex["agent_loop_config_path"] == str(ROOT / "examples" / "verl" / "household_multiturn.yaml")
    assert ex["default_agent_loop"] == "groundrl_household"
    assert ex["adv_estimator"] == "grpo" and ex["custom_reward_path"] is None
    assert ex["n_overrides"] == 23  # 14 of the loop + 9 of the batch geometry (common.sh)


def test_default_feedback_is_a_user_turn_of_the_chat_template_with_logprob_0(out):
    """Row A with feedback_role user (the default): the context of turn 2, decoded, is the
    chat template of prompt + turn 1 + the feedback as a user message; the feedback tokens
    have mask 0 and rollout logprob 0, the policy's the server's -0.5; same reward."""
    c, p = out["chat"], out["pieces"]
    assert c["context_decoded"] == c["template"]
    assert c["template"].endswith(
        "<|im_end|>\n<|im_start|>user\nFeedback: Last action is invalid. " + FB_INVALID_WHY + "\nPlan:"
        "<|im_end|>\n<|im_start|>assistant\n"
    )
    t1, t2 = p["nonsense"], p["plan_a"]
    n_fb = len(c["response"]) - len(t1) - len(t2)
    assert c["response"][: len(t1)] == t1 and c["response"][-len(t2) :] == t2 and n_fb > 0
    assert c["mask"] == [1] * len(t1) + [0] * n_fb + [1] * len(t2)
    assert c["logprobs"] == [-0.5] * len(t1) + [0.0] * n_fb + [-0.5] * len(t2)
    assert c["rm_scores_sum"] == 1.75 and c["checked"] == 2


def test_scripted_server_is_held_to_the_real_signatures(out):
    """Every call the loop made was bound to verl's LLMServerClient.generate (and its
    pass-through keywords to vLLM's server generate); a renamed keyword (images= for
    image_data=) fails that check."""
    assert out["renamed_keyword_rejected"]
    assert out["signature_checked_calls"] == len(out["calls"]) == 7
