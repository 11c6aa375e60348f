"""Issue 26 item 4: judge outages are visible. With a real OpenAI-compatible judge server
on 127.0.0.1 failing half its calls, the reward server counts the failures per request
(a response header), per recipe in /metrics, and /health says ``degraded`` with the
recent failure rate; a healthy judge keeps /health ``ok``."""

import httpx
import pytest

from groundrl.serve.factory import build_app

PAIR = {"query": "How many chairs?", "response_1": "three", "response_2": "four", "preferred": 1}
GOOD = "<rubric>r</rubric><eval>e</eval><answer>1</answer>"


def _samples(n_fail, n_ok):
    bad = [{"completion": GOOD, **PAIR, "query": "FAIL how many?"} for _ in range(n_fail)]
    return bad + [{"completion": GOOD, **PAIR} for _ in range(n_ok)]


def _responder(msgs, body):
    if "FAIL" in str(msgs):
        raise RuntimeError("judge down")  # the chat server answers 500
    return "<answer>1</answer>"


def _metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    return None


@pytest.fixture
def judged_app(chat_server):
    chat_server.responder = _responder
    judge = {"backend": "openai", "model": "m", "url": chat_server.base_url, "retries": 0}
    return build_app({"recipe": "proxy_grm", "judge": judge, "max_wait_ms": 1})


def test_judge_failures_are_counted_per_request_per_recipe_and_in_health(judged_app, tools):
    with tools.Running(judged_app) as srv:
        assert httpx.get(srv.url + "/health").json()["status"] == "ok"  # no judge call yet
        r = httpx.post(srv.url + "/score", json={"samples": _samples(2, 2)}, timeout=60)
        assert r.status_code == 200
        assert r.headers["x-groundrl-judge-failures"] == "2"
        proxy = [x["parts"]["proxy"] for x in r.json()["results"]]
        reasons = [x["reasons"].get("proxy", "") for x in r.json()["results"]]
        assert proxy[2:] == [1.0, 1.0] and all("failed" in why for why in reasons[:2])
        q = {"query": ["Q " + GOOD] * 2, "prompts": ["Q "] * 2, "labels": [
            {**PAIR, "query": "FAIL again"}, PAIR]}  # fmt: skip
        r2 = httpx.post(srv.url + "/get_reward", json=q, timeout=60)
        assert r2.status_code == 200 and r2.headers["x-groundrl-judge-failures"] == "1"
        metrics = httpx.get(srv.url + "/metrics").text
        health = httpx.get(srv.url + "/health").json()
    assert _metric(metrics, 'groundrl_judge_calls_total{recipe="proxy_grm",result="failed"}') == 3
    assert _metric(metrics, 'groundrl_judge_calls_total{recipe="proxy_grm",result="ok"}') == 3
    assert _metric(metrics, 'groundrl_judge_batch_seconds_count{recipe="proxy_grm"}') == 2
    assert health["status"] == "degraded" and health["judge_failure_rate"] == 0.5
    assert health["judge_scores_recent"] == 6


def test_a_healthy_judge_keeps_health_ok(judged_app, tools):
    with tools.Running(judged_app) as srv:
        r = httpx.post(srv.url + "/score", json={"samples": _samples(0, 3)}, timeout=60)
        assert r.headers["x-groundrl-judge-failures"] == "0"
        health = httpx.get(srv.url + "/health").json()
    assert health["status"] == "ok" and health["judge_failure_rate"] == 0.0
