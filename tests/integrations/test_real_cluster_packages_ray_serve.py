"""groundrl's reward server under the real Ray Serve (Ray 2.60, .venv-cluster): a
2-replica deployment from groundrl.serve.ray_serve answers /score and /health through
Serve's HTTP proxy on 127.0.0.1 (driver: cluster/ray_serve_score.py). Skips, saying why,
without the cluster environment."""

from __future__ import annotations

from cluster_support import drive, needs_cluster_env

pytestmark = needs_cluster_env


def test_two_replica_deployment_answers_score():
    out = drive("ray_serve_score.py")
    assert out["app_status"] == "ApplicationStatus.RUNNING"
    assert out["replicas"] == {"groundrl_rewards": {"RUNNING": 2}}
    assert out["statuses"] == [200] * 8
    # eqa_rm: exact with a critique 1 + 1; off by 5 without one (1 - 5·0.05) + 0
    assert out["rewards"] == [[2.0, 0.75]] * 8
    assert out["ids"] == [[i, i + 100] for i in range(8)]  # each answer is its own request's
    assert out["health"]["status"] == "ok" and out["health"]["recipe"] == "eqa_rm"
