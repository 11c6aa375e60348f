"""verl's async reward entry point, ``compute_score_async``: the same result dicts as
``compute_score`` for every recipe and for mixed runs, and a judge-backed recipe's
concurrent calls scored as one batch, the judge (a real HTTP server on 127.0.0.1) seeing
many requests in flight instead of one per call."""

from __future__ import annotations

import asyncio
import json

import pytest

from groundrl.integrations import verl as gverl

PLAN = json.dumps(
    {
        "reasoning_and_reflection": "r",
        "visual_state_description": "v",
        "language_plan": "l",
        "executable_plan": [{"action_id": 1, "action_name": "find a Apple"}],
    }
)
CALLS = [  # (data_source, solution_str, ground_truth, extra_info)
    ("groundrl/eqa_rm", "<critique>c</critique><score>7</score>", 7, {}),
    ("groundrl/eqa_rm", "<score>2</score>", 7, {}),
    ("groundrl/argos", "<answer>B</answer>", "B", {}),
    ("groundrl/reinforced_planning", PLAN, ["find a Apple"], {"action_map": {"1": "find a Apple"}}),
    ("groundrl/reinforced_planning", "not json", ["find a Apple"], {"action_map": {"1": "find a Apple"}}),
    ("groundrl/proxy_grm", "<rubric>r</rubric><eval>e</eval><answer>1</answer>", 1, {}),
    ("groundrl/embodied_brain", "<response>r</response>", None, {}),
]


async def _gather(fn, calls, **kw):
    return await asyncio.gather(*(fn(ds, sol, gt, extra, **kw) for ds, sol, gt, extra in calls))


def test_async_gives_the_sync_results_for_every_recipe():
    got = asyncio.run(_gather(gverl.compute_score_async, CALLS))
    assert got == [gverl.compute_score(*c) for c in CALLS]
    # eqa_rm: exact with a critique (1 + 1); off by 5 without one ((1 - 5·0.05) + 0)
    assert [g["score"] for g in got[:2]] == [2.0, 0.75]


def test_async_gives_the_sync_results_for_a_mixed_run():
    mixed = [c for c in CALLS if c[0] in ("groundrl/reinforced_planning", "groundrl/proxy_grm")]
    kw = {"recipes": ["reinforced_planning", "proxy_grm"]}
    got = asyncio.run(_gather(gverl.compute_score_async, mixed, **kw))
    assert got == [gverl.compute_score(*c, **kw) for c in mixed]
    assert len({tuple(g) for g in got}) == 1  # the same keys on every call


def test_bad_batch_settings_name_the_reward_kwarg():
    with pytest.raises(ValueError, match="reward_kwargs.max_batch"):
        asyncio.run(gverl.compute_score_async(*CALLS[0], max_batch=0))
    with pytest.raises(ValueError, match="reward_kwargs.batch_window_s"):
        asyncio.run(gverl.compute_score_async(*CALLS[0], batch_window_s=float("nan")))


def test_judge_calls_are_batched_and_concurrent(chat_server):
    """12 concurrent embodied_brain calls with a planning-GRM judge answering in 0.1 s:
    one Rubric.score_batch of 12, up to the judge's concurrency (4 here) in flight; the
    sync entry point scores them one request per call. Both give the judge's score."""
    chat_server.delay = 0.1
    chat_server.responder = lambda msgs, body: "<think>fine</think><score>0.5</score>"
    judge = {"backend": "openai", "model": "grm", "url": chat_server.base_url, "concurrency": 4}
    calls = [("groundrl/embodied_brain", f"<response>plan {i}</response>", None, {}) for i in range(12)]

    async def run():
        out = await _gather(gverl.compute_score_async, calls, judge=judge)
        return out, asyncio.get_running_loop()

    got, loop = asyncio.run(run())
    rubric = gverl._rubrics.get("embodied_brain", {}, judge)
    assert gverl._batchers[loop][id(rubric)].batches == [12]
    assert chat_server.max_in_flight == 4 and len(chat_server.requests) == 12
    assert all(g["grm"] == 0.5 for g in got)
    chat_server.max_in_flight = 0
    sync = [gverl.compute_score(*c, judge=judge) for c in calls]
    assert got == sync and chat_server.max_in_flight == 1 and len(chat_server.requests) == 24
