"""Multi-turn GRPO with the household environment in the loop (TRL ``rollout_func``):
the environment's feedback reaches the next turn's context, and the episode's reward
reaches the loss. A text model and tokenizer built from config; scripted turns where
a random model could not succeed."""

import pytest

pytest.importorskip("trl")


@pytest.fixture(scope="module")
def setup():
    import torch

    from groundrl.demos.planner import build_policy, demo_tasks
    from groundrl.sim.episode_prompt import prompt
    from groundrl.train.planning_data import global_action_map, records

    torch.set_num_threads(1)
    tasks = [t for t in demo_tasks(40, seed=3) if t.task_type == "pick_and_place_simple"][:2]
    amap = global_action_map(tasks)
    recs = records(tasks, amap)
    texts = [r["prompt"] + r["completion"] for r in recs] * 4 + ["\nFeedback: Last action is invalid.\nPlan:"]
    model, tok = build_policy(texts, hidden=32, layers=1, seed=0)
    return tasks, recs, {prompt(t): t for t in tasks}, model, tok


class Script:
    """Turn 1: an unreadable plan; turn 2: the expert's plan. Records every context."""

    def __init__(self, tok, by_prompt_ids):
        self.tok, self.by_prompt_ids, self.contexts = tok, by_prompt_ids, []

    def __call__(self, model, tok, contexts, max_new_tokens, trainer=None):
        self.contexts.append([list(c) for c in contexts])
        out = []
        for c in contexts:
            key = next(k for k in self.by_prompt_ids if c[: len(k)] == list(k))
            turn = 1 if len(c) == len(key) else 2
            text = " nonsense" if turn == 1 else self.by_prompt_ids[key]
            out.append(tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id])
        return out


def test_feedback_reaches_the_next_turn_and_reward_is_the_envs(setup):
    from groundrl.sim.reward import sim_reward
    from groundrl.train.multiturn import EnvRollout

    tasks, recs, by_prompt, model, tok = setup
    by_ids = {tuple(tok(r["prompt"], add_special_tokens=False)["input_ids"]): r["completion"] for r in recs}
    script = Script(tok, by_ids)
    rollout = EnvRollout(by_prompt, max_turns=3, generate_fn=script)
    eps = rollout.play(model, tok, [recs[0]["prompt"]], 64)
    (ep,) = eps
    # two turns: the unreadable plan spent one invalid step, the expert's plan succeeded
    assert ep.turns == 2 and ep.success and ep.ended
    fb = "\nFeedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:"
    fb_ids = tok(fb, add_special_tokens=False)["input_ids"]
    t1 = tok(" nonsense", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    t2 = tok(recs[0]["completion"], add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    assert ep.completion_ids == t1 + fb_ids + t2
    assert ep.env_mask == [1] * len(t1) + [0] * len(fb_ids) + [1] * len(t2)
    # the second turn was sampled from prompt + turn 1 + the environment's feedback
    assert script.contexts[1][0] == ep.prompt_ids + t1 + fb_ids
    assert tok.decode(script.contexts[1][0]).endswith(fb)
    # "plan" reward: progress 1 + success bonus 1, as sim_reward of the expert plan
    assert ep.reward == 2.0 == sim_reward(recs[0]["completion"], recs[0]["task"]).value
    assert ep.steps == len(recs[0]["gold"]) + 1  # the invalid step counts


def test_max_turns_cuts_and_pays_progress(setup):
    from groundrl.train.multiturn import EnvRollout

    tasks, recs, by_prompt, model, tok = setup

    def junk(model, tok, contexts, n, trainer=None):
        return [
            tok(" nonsense", add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for _ in contexts
        ]

    rollout = EnvRollout(by_prompt, max_turns=2, generate_fn=junk, turn_penalty=0.25)
    (ep,) = rollout.play(model, tok, [recs[1]["prompt"]], 64)
    assert ep.turns == 2 and not ep.success and not ep.ended
    assert ep.reward == 0.0 - 0.25  # no progress, one extra turn
    assert ep.env_mask[-1] == 1  # no feedback after the last turn


def test_length_cap_counts_feedback_tokens(setup):
    """max_new_tokens 12 x 3 turns = 36 tokens for the whole completion: an 8-token turn
    and its feedback (20+ tokens) leave no room for another turn, so the episode is cut
    there (paid its progress) instead of growing past the documented cap."""
    from groundrl.train.multiturn import EnvRollout

    tasks, recs, by_prompt, model, tok = setup
    asked = []

    def junk(model, tok, contexts, n, trainer=None):
        asked.append(n)
        return [
            tok(" nonsense", add_special_tokens=False)["input_ids"] + [tok.eos_token_id] for _ in contexts
        ]

    t1 = tok(" nonsense", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
    fb = tok(
        "\nFeedback: Last action is invalid. No action could be read in any vocabulary.\nPlan:",
        add_special_tokens=False,
    )["input_ids"]
    assert len(t1) + len(fb) >= 36 > len(t1)  # the arithmetic this test relies on
    rollout = EnvRollout(by_prompt, max_turns=3, generate_fn=junk)
    (ep,) = rollout.play(model, tok, [recs[1]["prompt"]], 12)
    assert ep.turns == 1 and not ep.ended and ep.completion_ids == t1 and asked == [12]
    (ep,) = rollout.play(model, tok, [recs[1]["prompt"]], 40)  # cap 120: room for all 3 turns
    assert ep.turns == 3 and len(ep.completion_ids) == 3 * len(t1) + 2 * len(fb) <= 120


@pytest.mark.slow
def test_grpo_step_env_reward_reaches_the_loss(setup):
    """One GRPO step through TRL: per group of 4, two episodes re-plan to success (reward
    2) and two fail (0): TRL's logged reward is the environment's mean, the group std is
    non-zero, and the parameters move."""
    import torch
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    from groundrl.train.multiturn import EnvRollout, env_reward_funcs

    tasks, recs, by_prompt, model, tok = setup
    by_ids = {tuple(tok(r["prompt"], add_special_tokens=False)["input_ids"]): r["completion"] for r in recs}
    script = Script(tok, by_ids)
    calls = {"n": 0}

    def half(model_, tok_, contexts, n, trainer=None):
        calls["n"] += 1
        if calls["n"] == 1:  # turn 1: all unreadable, so every episode sees feedback
            return script(model_, tok_, contexts, n, trainer)
        # turn 2: the first two of each group of 4 re-plan with the expert, the rest sample
        good = script(model_, tok_, contexts, n, trainer)
        sampled = EnvRollout.sample(model_, tok_, contexts, 8, trainer)
        return [g if i % 4 < 2 else s for i, (g, s) in enumerate(zip(good, sampled, strict=True))]

    rollout = EnvRollout(by_prompt, max_turns=2, generate_fn=half)
    funcs, weights = env_reward_funcs()
    args = GRPOConfig(
        output_dir="/tmp/unused-multiturn",
        use_cpu=True,
        bf16=False,
        learning_rate=1e-2,
        max_steps=1,
        per_device_train_batch_size=8,
        num_generations=4,
        max_completion_length=64,
        beta=0.0,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        reward_weights=weights,
        seed=0,
        disable_tqdm=True,
        shuffle_dataset=False,
    )
    ds = Dataset.from_list([{"prompt": r["prompt"]} for r in recs])
    trainer = GRPOTrainer(
        model=model,
        processing_class=tok,
        reward_funcs=funcs,
        args=args,
        train_dataset=ds,
        rollout_func=rollout,
    )
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    trainer.train()
    eps = rollout.episodes
    assert len(eps) == 8 and all(e.turns == 2 for e in eps)
    rewards = [e.reward for e in eps]
    assert [r == 2.0 for r in rewards] == [True, True, False, False] * 2
    log = next(h for h in trainer.state.log_history if "reward" in h)
    assert log["reward"] == pytest.approx(sum(rewards) / 8)  # = 1.0
    assert log["rewards/env_success/mean"] == pytest.approx(0.5)
    assert log["reward_std"] > 0.5  # advantages are non-zero
    assert any(not torch.equal(before[n], p) for n, p in model.named_parameters())


def test_replan_records_recover_from_a_dropped_step():
    """A re-planning demonstration: the expert plan minus one step runs until it fails;
    the target, run after it, completes the task."""
    import json

    from groundrl.demos.planner import demo_tasks
    from groundrl.sim.env import HouseholdEnv
    from groundrl.train.planning_data import global_action_map, records, replan_records

    tasks = demo_tasks(30, seed=5)
    amap = global_action_map(tasks)
    gold = {r["id"]: r["gold"] for r in records(tasks, amap)}
    recs = replan_records(tasks, amap, seed=0)
    assert 0 < len(recs) <= len(tasks)
    for r in recs:
        ((first, feedback),) = r["turns"]
        plan = [s["action_name"] for s in json.loads(first)["executable_plan"]]
        g = gold[r["id"]]
        assert len(plan) == len(g) - 1 and any(plan == g[:k] + g[k + 1 :] for k in range(len(g)))
        assert feedback.startswith("\nFeedback: ") and feedback.endswith("\nPlan:")
        env = HouseholdEnv([r["task"]], reward="plan")
        env.reset(options={"task": r["task"]})
        _, _, terminated, truncated, info = env.step(first)
        assert not (terminated or truncated)
        assert feedback == f"\nFeedback: {info['actions'][-1]}: {info['feedback'][-1]}\nPlan:"
        _, reward, terminated, _, _ = env.step(r["completion"])
        assert terminated and reward == 2.0
    assert replan_records(tasks, amap, seed=0) == recs  # seeded


def test_episode_module_doctests():
    import doctest

    from groundrl.sim import episode, episode_feedback

    for module in (episode, episode_feedback):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
