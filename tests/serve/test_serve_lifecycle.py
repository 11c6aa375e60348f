"""Server processes: graceful shutdown finishes in-flight and queued requests, the
``groundrl serve`` command (one worker and several), and the lazy Ray Serve module."""

import inspect
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types

import httpx
import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app as cli

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
EQA = {"completion": "<critique>c</critique><score>5</score>", "gt_score": 7}


def _wait_healthy(url, proc, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited with {proc.returncode}: {proc.stderr.read()[-2000:]}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError("server did not become healthy")


SLOW_SERVER = textwrap.dedent(
    """
    import sys, time, uvicorn
    from groundrl.rubric import Part, Rubric
    from groundrl.serve.app import create_app

    def slow(completions, samples):
        time.sleep(0.6)
        return [float(s["k"]) for s in samples]

    rubric = Rubric([Part("judge", slow, batched=True)])
    app = create_app("eqa_rm", max_batch=1, max_wait_ms=0, rubric_overrides={"eqa_rm": rubric})
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", timeout_graceful_shutdown=10)
    """
)


def test_sigterm_finishes_in_flight_and_queued_requests_then_exits(tools):
    port = tools.free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_SERVER, str(port)], env=ENV, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        results = {}

        def call(k):
            body = {"samples": [{"completion": "x", "gt_score": 1, "k": k}]}
            results[k] = httpx.post(url + "/score", json=body, timeout=20)

        # max_batch=1 and 0.6 s per batch: request 2 waits in the queue behind request 1
        threads = [threading.Thread(target=call, args=(k,)) for k in (1, 2)]
        for t in threads:
            t.start()
        # SIGTERM only once the server holds both requests (a fixed sleep raced them on a loaded box)
        assert _wait_queue_depth(url, 2), "the two requests never reached the server"
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        with pytest.raises(httpx.TransportError):  # no new connections once shutting down
            httpx.get(url + "/health", timeout=2)
        for t in threads:
            t.join(timeout=20)
        assert [results[k].status_code for k in (1, 2)] == [200, 200]
        assert [results[k].json()["results"][0]["reward"] for k in (1, 2)] == [1.0, 2.0]
        assert proc.wait(timeout=20) in (0, -signal.SIGTERM)  # uvicorn may re-raise the signal
    finally:
        proc.kill()
        proc.wait()


def _wait_queue_depth(url, depth, polls=400):
    """Poll /metrics (bounded, 25 ms apart) until ``groundrl_queue_depth`` reaches ``depth``."""
    for _ in range(polls):
        text = httpx.get(url + "/metrics", timeout=5).text
        line = next((x for x in text.splitlines() if x.startswith("groundrl_queue_depth ")), "")
        if line and float(line.split()[1]) >= depth:
            return True
        time.sleep(0.025)
    return False


def _children(pid):
    out = []
    for stat in os.listdir("/proc"):
        if stat.isdigit():
            try:
                with open(f"/proc/{stat}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(stat))
    return out


def _environ(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read()
    except OSError:
        return b""


@pytest.mark.parametrize("workers", [1, 2])
def test_groundrl_serve_command(tools, workers):
    port = tools.free_port()
    cmd = [sys.executable, "-m", "groundrl.cli.main", "serve", "--port", str(port), "--recipe", "eqa_rm"]
    cmd += ["--token", "t0k", "--workers", str(workers)]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        h = {"Authorization": "Bearer t0k"}
        assert httpx.post(url + "/score", json={"samples": [EQA]}).status_code == 401
        r = httpx.post(url + "/score", json={"samples": [EQA]}, headers=h)
        assert r.status_code == 200 and r.json()["results"][0]["parts"]["accuracy"] == pytest.approx(0.96)
        r = httpx.post(url + "/get_reward", json={"query": [EQA["completion"]], "labels": ["7"]}, headers=h)
        assert r.status_code == 200 and r.json()["extra_logs"]["accuracy"] == [pytest.approx(0.96)]
        # issue 26: the token reaches worker processes through an owner-only file, never
        # their environment
        workers_env = [_environ(pid) for pid in _children(proc.pid)]
        assert len(workers_env) >= (workers if workers > 1 else 0)
        assert all(b"t0k" not in env for env in workers_env)
        if workers > 1:
            path = next(
                e.split(b"=", 1)[1].decode()
                for env in workers_env
                for e in env.split(b"\0")
                if e.startswith(b"GROUNDRL_SERVE_CONFIG_FILE=")
            )
            assert os.stat(path).st_mode & 0o777 == 0o600
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) in (0, -signal.SIGTERM)
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--recipe", "nope"], "unknown recipe 'nope'"),
        (["--judge-model", "m"], "--judge-backend"),
        (["--judge-backend", "openai"], "needs a model"),
        (
            ["--judge-backend", "openai", "--judge-model", "m", "--judge-url", "http://127.0.0.1:9/v1"],
            "--recipe",
        ),
        (
            [
                "--recipe",
                "eqa_rm",
                "--judge-backend",
                "openai",
                "--judge-model",
                "m",
                "--judge-url",
                "http://127.0.0.1:9/v1",
            ],
            "eqa_rm",
        ),
        (["--max-batch", "0"], "--max-batch"),
    ],
)
def test_serve_command_rejects_bad_configuration_before_binding(args, needle):
    r = CliRunner().invoke(cli, ["serve", "--port", "1", *args])
    assert r.exit_code == 2 and needle in r.output


def test_serve_help():
    r = CliRunner().invoke(cli, ["serve", "--help"], terminal_width=200)
    assert r.exit_code == 0
    for flag in ("/get_reward", "--token", "--max-queue", "--max-wait-ms", "--action-map", "--workers"):
        assert flag in r.output


def test_serve_modules_import_lazily():
    code = (
        "import sys, groundrl.serve, groundrl.serve.ray_serve, groundrl.cli.serve\n"
        "heavy = [m for m in ('ray', 'fastapi', 'uvicorn', 'starlette') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], env=ENV, check=True)


def test_ray_serve_without_ray_says_how_to_install(monkeypatch):
    from groundrl.serve import ray_serve

    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(ImportError, match=r"pip install 'ray\[serve\]'"):
        ray_serve.deployment("eqa_rm")


def test_ray_serve_deployment_builds_the_app_on_the_replica(monkeypatch, tools):
    """With a stand-in for ``ray.serve`` that records what the module asks of it."""
    seen = {}

    def deployment(**kw):
        seen["deployment"] = kw
        return lambda cls: types.SimpleNamespace(cls=cls, bind=lambda: ("bound", cls))

    def ingress(builder):
        seen["builder"] = builder
        return lambda cls: cls

    serve = types.SimpleNamespace(deployment=deployment, ingress=ingress)
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(serve=serve))
    monkeypatch.setitem(sys.modules, "ray.serve", serve)
    from groundrl.serve import ray_serve

    dep = ray_serve.deployment("eqa_rm", num_replicas=3, token="t", max_batch=8)
    assert seen["deployment"] == {"name": "groundrl_rewards", "num_replicas": 3, "ray_actor_options": {}}
    builder = seen["builder"]
    assert inspect.isfunction(builder)  # how Ray tells a builder, run on each replica, from an app
    with tools.Running(builder()) as srv:
        h = {"Authorization": "Bearer t"}
        r = httpx.post(srv.url + "/score", json={"samples": [EQA]}, headers=h)
    assert r.status_code == 200 and r.json()["results"][0]["parts"]["accuracy"] == pytest.approx(0.96)
    assert dep.bind()[0] == "bound"
    assert ray_serve.app_builder({"recipe": "eqa_rm", "num_replicas": "4"})[0] == "bound"
    assert seen["deployment"]["num_replicas"] == 4
    with pytest.raises(ValueError, match="unknown server setting 'bogus'"):
        ray_serve.deployment("eqa_rm", bogus=1)
    with pytest.raises(ValueError, match="num_replicas"):
        ray_serve.deployment("eqa_rm", num_replicas=0)
