"""The verl agent loop's verl-free parts in the main environment: the module imports
without verl, options are validated with messages that say what to change, rows carry
the task losslessly through Parquet, and the engine-agnostic episode (play_episode) with
a byte-level "tokenizer" and a scripted policy. The loop inside real verl is
test_real_cluster_packages_verl_multiturn.py."""

from __future__ import annotations

import asyncio
import importlib.util
import json

import pytest

from groundrl.integrations import verl_agent_loop as vl
from groundrl.sim.generate import generate_tasks

EXAMPLE = "examples/verl/household_multiturn.yaml"


@pytest.mark.skipif(importlib.util.find_spec("verl") is not None, reason="verl is installed here")
def test_imports_without_verl_and_says_what_is_missing():
    with pytest.raises(ImportError, match="HouseholdAgentLoop needs verl 0.8"):
        vl.HouseholdAgentLoop  # noqa: B018


def test_options_defaults_and_errors_name_the_key():
    o = vl.loop_options({})
    assert (o.max_turns, o.reward, o.success_bonus, o.feedback_role) == (3, "plan", 1.0, "user")
    bad = [
        ({"max_turns": 0}, "max_turns must be an integer ≥ 1"),
        ({"max_turns": 2.5}, "max_turns must be an integer ≥ 1"),
        ({"reward": "dense"}, "reward must be one of"),
        ({"turn_penalty": -1}, "turn_penalty must be a finite number ≥ 0"),
        ({"success_bonus": float("nan")}, "success_bonus must be a finite number ≥ 0"),
        ({"vocab": "klingon"}, "vocab must be 'auto' or one of"),
        ({"feedback_role": "assistant"}, "feedback_role must be 'user'"),
        ({"feedback_role": None}, "feedback_role must be 'user'"),
        ({"max_tokens_per_turn": 0}, "max_tokens_per_turn must be an integer ≥ 1 or null"),
        ({"max_turn": 3}, r"unknown option\(s\) \['max_turn'\]"),
    ]
    for opts, msg in bad:
        with pytest.raises(ValueError, match=msg) as e:
            vl.loop_options(opts)
        assert "agent_loop_config_path" in str(e.value)


def test_check_example_config_and_malformed_ones(tmp_path):
    got = vl.check_agent_loop_config(EXAMPLE)
    assert got == {"groundrl_household": vl.LoopOptions()}
    p = tmp_path / "x.yaml"
    p.write_text("name: groundrl_household\n")
    with pytest.raises(ValueError, match="YAML list"):
        vl.check_agent_loop_config(str(p))
    p.write_text("- name: other\n  _target_: some.Other\n")
    with pytest.raises(ValueError, match="no entry has _target_"):
        vl.check_agent_loop_config(str(p))
    p.write_text(f"- name: h\n  _target_: {vl.TARGET}\n  reward: dense\n")
    with pytest.raises(ValueError, match="reward must be one of"):
        vl.check_agent_loop_config(str(p))


def test_rows_round_trip_the_task_through_parquet(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    tasks = generate_tasks(6, seed=1)  # six subsets: scenes of different shapes
    rows = vl.household_rows(tasks, split="val", system_prompt="You plan.")
    r0 = rows[0]
    assert r0["agent_name"] == "groundrl_household" and r0["data_source"] == "groundrl/household"
    assert [m["role"] for m in r0["prompt"]] == ["system", "user"]
    assert r0["prompt"][1]["content"].startswith(f"Instruction: {tasks[0].instruction}")
    assert r0["reward_model"] == {"style": "env", "ground_truth": tasks[0].id}
    assert r0["extra_info"]["index"] == 0 and r0["extra_info"]["split"] == "val"
    path = tmp_path / "h.parquet"
    assert vl.write_rows(rows, str(path)) == 6
    back = pq.read_table(path).to_pylist()
    assert [vl.task_of_row(r["extra_info"]).to_json() for r in back] == [t.to_json() for t in tasks]
    # a dict is read too; a row without the task says how to build one
    assert vl.task_of_row({"task": tasks[0].to_json()}).id == tasks[0].id
    with pytest.raises(ValueError, match="household_rows"):
        vl.task_of_row({"index": 0})


EOS = 0


def _enc(text):
    return list(text.encode())


def _play(task, script, response_length, **opts):
    asked = []

    async def generate(context, max_tokens):
        asked.append((len(context), max_tokens))
        return script[len(asked) - 1], None

    async def encode(text, turn_ids):
        return _enc(text)

    ep = asyncio.run(
        vl.play_episode(
            task,
            _enc("P:"),
            generate=generate,
            decode=lambda ids: bytes(i for i in ids if i != EOS).decode(),
            encode_feedback=encode,
            eos_token_id=EOS,
            response_length=response_length,
            options=vl.loop_options(opts),
        )
    )
    return ep, asked


def test_play_episode_replans_after_feedback():
    task = next(t for t in generate_tasks(12, seed=0) if t.task_type == "pick_and_place_simple")
    plan = "\n".join(task.gold_plan)
    fb = "\nFeedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:"
    script = [_enc("zz") + [EOS, 99, 99], _enc(plan) + [EOS]]  # tokens after EOS are dropped
    ep, asked = _play(task, script, 1000, turn_penalty=0.5)
    assert ep.response_ids == _enc("zz") + [EOS] + _enc(fb) + _enc(plan) + [EOS]
    assert ep.response_mask == [1] * 3 + [0] * len(fb) + [1] * (len(plan) + 1)
    assert (ep.turns, ep.feedback_turns, ep.success, ep.ended, ep.cut) == (2, 1, True, True, "")
    assert ep.reward == 1 + 1 - 0.5  # progress + success bonus - one extra turn
    assert ep.logprobs is None  # the server gave none
    # each turn asked for the budget left, from prompt + everything so far
    assert asked == [(2, 1000), (2 + 3 + len(fb), 1000 - 3 - len(fb))]


def test_play_episode_per_turn_cap_and_cut_pays_progress():
    task = next(
        t for t in generate_tasks(24, seed=0) if t.task_type == "pick_two_obj_and_place" and not t.goal.sliced
    )
    k = task.gold_plan.index("put down the object in hand")
    half = "\n".join(task.gold_plan[: k + 1])
    ep, asked = _play(task, [_enc(half) + [EOS]], 1000, max_turns=1, max_tokens_per_turn=len(half) + 1)
    assert asked == [(2, len(half) + 1)]
    assert (ep.turns, ep.cut, ep.progress, ep.ended) == (1, "max_turns", 0.5, False)
    assert ep.reward == 0.5  # the "plan" reward's payout at the cut: progress 1/2
    assert json.loads(json.dumps(ep.extra_info())) == {
        "env_success": 0.0,
        "env_progress": 0.5,
        "env_turns": 1.0,
        "env_steps": 4.0,
        "env_cut": 1.0,
    }
