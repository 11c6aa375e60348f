"""The reward path verl 0.8 trains with, end to end in .venv-cluster: AgentLoopWorker
(single-turn loop, scripted LLM server held to the real LLMServerClient.generate
signature) -> a real RewardLoopWorker Ray actor -> groundrl's compute_score_async as
examples/verl/eqa_rm.sh configures it -> rm_scores (driver:
cluster/verl_single_turn_reward.py). Skips, saying why, without the cluster environment."""

from __future__ import annotations

from cluster_support import ROOT, drive, needs_cluster_env

pytestmark = needs_cluster_env


def test_agent_loop_worker_reward_reaches_rm_scores():
    out = drive("verl_single_turn_reward.py", str(ROOT))
    assert out["reward_fn"] == "compute_score_async"
    # exact with a critique 1 + 1; off by 5 without one (1 - 5·0.05) + 0; unparseable 0
    assert out["rm_scores_sum"] == out["want"] == [2.0, 0.75, 0.0]
    assert out["nonzero_at_last_token"] == [True, True, True]
    assert out["extra_keys"] == ["accuracy", "format", "score"] and out["format"] == [1.0, 0.0, 0.0]
    assert out["checked"] == 3  # every server call bound to the real signature
