"""Issue 26 item 8 on the server: ``part_timeout_s`` (``groundrl serve --part-timeout``)
answers a batch whose judge part hangs, the part scored ``timeout`` and counted."""

import threading

import httpx
import pytest

from groundrl.rubric import Part, Rubric
from groundrl.serve.app import create_app

RELEASE = threading.Event()


@pytest.fixture(autouse=True)
def _release_hung_parts():
    RELEASE.clear()
    yield
    RELEASE.set()


def hangs_batched(completions, samples):
    RELEASE.wait(120)
    return [1.0] * len(completions)


def exact(completion, gold):
    return float(completion == gold)


def test_serve_part_timeout_answers_the_batch(tools):
    rub = Rubric([Part("exact", exact), Part("judge", hangs_batched, batched=True)])
    app = create_app(
        "toy", recipes={"toy": tools.toy_recipe()}, rubric_overrides={"toy": rub}, part_timeout_s=0.3
    )
    with tools.Running(app) as srv:
        r = httpx.post(srv.url + "/score", json={"samples": [{"completion": "a", "gold": "a"}]}, timeout=60)
        metrics = httpx.get(srv.url + "/metrics").text
    res = r.json()["results"][0]
    assert r.status_code == 200 and res["parts"] == {"exact": 1.0, "judge": 0.0}
    assert res["reasons"]["judge"].startswith("timeout")
    assert r.headers["x-groundrl-judge-failures"] == "1"
    assert 'groundrl_judge_calls_total{recipe="toy",result="failed"} 1' in metrics
