"""The reward server on 127.0.0.1: both protocols against direct library calls, auth,
validation, overload, graceful shutdown."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

pytest.importorskip("fastapi")
import uvicorn  # noqa: E402

from groundrl.integrations.openrlhf import make_reward_func  # noqa: E402
from groundrl.recipes import get_recipe  # noqa: E402
from groundrl.rubric import Part, Rubric  # noqa: E402
from groundrl.serve.app import create_app  # noqa: E402


class Running:
    def __init__(self, app):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self):
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=10)


EQA = [{"id": i, "completion": f"<critique>c</critique><score>{i}</score>", "gt_score": 7} for i in range(10)]


def test_score_matches_library_and_reports_bad_samples():
    with Running(create_app()) as srv:
        r = httpx.post(
            srv.url + "/score", json={"recipe": "eqa_rm", "samples": [*EQA, {"id": "bad", "completion": "x"}]}
        )
        assert r.status_code == 200
        results = r.json()["results"]
        rub = get_recipe("eqa_rm").rubric()
        for s, res in zip(EQA, results, strict=False):
            v = rub.score(s["completion"], gt_score=7)
            assert res["reward"] == v.total and res["parts"] == v.values() and res["id"] == s["id"]
        assert results[-1]["id"] == "bad" and "missing field 'gt_score'" in results[-1]["error"]
        assert httpx.get(srv.url + "/health").json()["status"] == "ok"


def test_get_reward_matches_openrlhf_function():
    gold = ["find a Apple", "pick up the Apple"]
    plan = json.dumps(
        {
            "reasoning_and_reflection": "",
            "visual_state_description": "",
            "language_plan": "",
            "executable_plan": [{"action_id": 0, "action_name": "find a Apple"}],
        }
    )
    body = {
        "query": ["PROMPT " + plan, "PROMPT nonsense"],
        "prompts": ["PROMPT ", "PROMPT "],
        "labels": [json.dumps(gold), json.dumps(gold)],
    }
    with Running(create_app("reinforced_planning")) as srv:
        r = httpx.post(srv.url + "/get_reward", json=body).json()
    direct = make_reward_func("reinforced_planning", tensors=False)(
        body["query"], body["prompts"], body["labels"]
    )
    assert r == direct
    assert r["rewards"][0] == pytest.approx(0.25 + 2 / 6)  # keys+valid steps (no map) + prefix 1 of 2


def test_auth_validation_and_metrics():
    with Running(create_app("eqa_rm", token="s3cret", max_body_bytes=2000)) as srv:
        h = {"Authorization": "Bearer s3cret"}
        assert httpx.get(srv.url + "/health").status_code == 200
        assert httpx.post(srv.url + "/score", json={"recipe": "eqa_rm", "samples": []}).status_code == 401
        assert (
            httpx.post(
                srv.url + "/score",
                json={"recipe": "eqa_rm", "samples": []},
                headers={"Authorization": "Bearer no"},
            ).status_code
            == 401
        )
        r = httpx.post(srv.url + "/score", json={"recipe": "eqa_rm", "samples": "x"}, headers=h)
        assert r.status_code == 422 and "`samples`" in r.json()["detail"]
        r = httpx.post(srv.url + "/score", json={"recipe": "nope", "samples": []}, headers=h)
        assert r.status_code == 422 and "`recipe`" in r.json()["detail"]
        r = httpx.post(srv.url + "/get_reward", json={"query": "x"}, headers=h)
        assert r.status_code == 422 and "`query`" in r.json()["detail"]
        assert httpx.post(srv.url + "/score", content=b"{", headers=h).status_code == 400
        assert (
            httpx.post(
                srv.url + "/score",
                json={"recipe": "eqa_rm", "samples": [{"completion": "x" * 5000}]},
                headers=h,
            ).status_code
            == 413
        )
        m = httpx.get(srv.url + "/metrics", headers=h).text
        assert 'groundrl_requests_total{route="/score",status="401"} 2' in m and "groundrl_queue_depth" in m
        assert "groundrl_request_seconds_bucket" in m


def test_overload_gives_503_and_no_lost_or_duplicated_results():
    def slow(completions, samples):
        time.sleep(0.05)
        return [float(s["k"]) for s in samples]

    rubric = Rubric([Part("echo", slow, batched=True)])
    app = create_app(max_batch=8, max_wait_ms=1, max_queue=16, rubric_overrides={"eqa_rm": rubric})

    async def burst(url):
        async with httpx.AsyncClient(timeout=30) as c:
            reqs = [
                c.post(
                    url + "/score",
                    json={
                        "recipe": "eqa_rm",
                        "samples": [{"completion": "x", "gt_score": 1, "k": i * 4 + j} for j in range(4)],
                    },
                )
                for i in range(40)
            ]
            return await asyncio.gather(*reqs)

    with Running(app) as srv:
        rs = asyncio.run(burst(srv.url))
    ok = [r for r in rs if r.status_code == 200]
    over = [r for r in rs if r.status_code == 503]
    assert len(ok) + len(over) == 40 and over and ok
    assert all(r.headers.get("retry-after") == "1" for r in over)
    for i, r in enumerate(rs):
        if r.status_code == 200:
            assert [x["reward"] for x in r.json()["results"]] == [float(i * 4 + j) for j in range(4)]
    assert app.state.batchers["eqa_rm"].pending == 0


def test_graceful_shutdown_finishes_in_flight_request(tmp_path):
    script = tmp_path / "slow_server.py"
    script.write_text(
        "import sys, time, uvicorn\n"
        "from groundrl.rubric import Part, Rubric\n"
        "from groundrl.serve.app import create_app\n"
        "def slow(c, s):\n    time.sleep(1.0)\n    return [1.0] * len(c)\n"
        "app = create_app(rubric_overrides={'eqa_rm': Rubric([Part('p', slow, batched=True)])})\n"
        "uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='error', timeout_graceful_shutdown=10)\n"
    )
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, str(script), str(port)], env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(url + "/health").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.05)
        result = {}

        def call():
            result["r"] = httpx.post(
                url + "/score",
                json={"recipe": "eqa_rm", "samples": [{"completion": "x", "gt_score": 1}]},
                timeout=20,
            )

        t = threading.Thread(target=call)
        t.start()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        t.join(timeout=20)
        assert result["r"].status_code == 200 and result["r"].json()["results"][0]["reward"] == 1.0
        # uvicorn re-raises the captured SIGTERM after its graceful shutdown
        assert proc.wait(timeout=20) in (0, -signal.SIGTERM)
    finally:
        proc.kill()


def test_ray_serve_module_imports_lazily_and_cli_help():
    import importlib.util

    from typer.testing import CliRunner

    from groundrl.cli.main import app
    from groundrl.serve import ray_serve

    if importlib.util.find_spec("ray") is None:
        with pytest.raises(ImportError, match="Ray Serve is not installed"):
            ray_serve.deployment("eqa_rm")
    r = CliRunner().invoke(app, ["serve", "--help"])
    assert r.exit_code == 0 and "/get_reward" in r.output and "--token" in r.output
    with pytest.raises(ValueError, match="unknown recipe"):
        create_app("nope")
