"""Issue 42, N1: one request can no longer hold the event loop. A 1.4 MiB body of
unclosed strings made the old element-count guard (one regex over the body) retry from
every quote to the end: ``/health`` went unanswered for minutes and SIGTERM was ignored.
The count is now a linear scan (:mod:`groundrl.serve.body`) and large bodies are parsed
off the event loop. The tests assert that /health answers and the process exits, not how
fast (the timeouts below are safety nets for a loaded CI machine)."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading

import httpx
import pytest

from groundrl.serve.app import create_app
from groundrl.serve.body import WINDOW, count_values, json_elements, too_many_values

# over the default 500,000-value limit by commas alone, so the exact count runs; every
# quote is escaped but the first, which never closes: the shape the regex retried
HOSTILE = b'{"samples": ["' + b',\\"' * 520_000


@pytest.mark.parametrize(
    "obj",
    [
        ["\\", '"', "\\\\", '\\"', ",[{", {"k\\": ["\\\\\\", 1]}],
        ["x" * (WINDOW - 3) + ',"[', [1, 2], 'y\\"' * 3 * WINDOW, {"a": [1, {}]}],  # across windows
        {'"': [[], {}, ""], "\\": "\\" * (WINDOW + 1)},
    ],
)
def test_the_count_agrees_with_the_parsed_json(obj):
    def values(x):  # worked from the parsed value: each value, plus one per empty container
        if isinstance(x, dict):
            return 1 + (0 if x else 1) + sum(values(v) for v in x.values())
        if isinstance(x, list):
            return 1 + (0 if x else 1) + sum(values(v) for v in x)
        return 1

    raw = json.dumps(obj).encode()
    assert json_elements(raw) == values(obj)


def test_the_shape_that_was_quadratic_is_scanned_in_linear_work():
    got = count_values(HOSTILE)
    assert got.values == 2 + 1  # the object and the list; everything after `["` is one string
    assert got.scanned <= 5 * len(HOSTILE)
    doubled = count_values(HOSTILE + b',\\"' * 520_000)
    assert doubled.scanned <= 2 * got.scanned + 16
    assert too_many_values(HOSTILE, 500_000) is None  # under the limit once strings are skipped


SERVER = textwrap.dedent(
    """
    import sys, uvicorn
    from groundrl.serve.app import create_app

    app = create_app("eqa_rm")
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="error", timeout_graceful_shutdown=1)
    """
)


@pytest.fixture
def server(tools):
    port = tools.free_port()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port)], env=env, stderr=subprocess.PIPE, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(1200):
            assert proc.poll() is None, proc.stderr.read()[-2000:]
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                threading.Event().wait(0.05)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)


def test_health_answers_and_sigterm_stops_the_server_under_the_hostile_body(server):
    url, proc = server
    out = {}

    def post():
        try:
            out["r"] = httpx.post(url + "/score", content=HOSTILE, timeout=300)
        except httpx.TransportError as e:
            out["e"] = e

    t = threading.Thread(target=post)
    t.start()
    # the liveness probe's own timeout is generous: the point is that it is answered at all
    # (before the fix it was not answered for minutes)
    health = httpx.get(url + "/health", timeout=10)
    assert health.status_code == 200
    t.join(120)
    assert out["r"].status_code == 400 and "not JSON" in out["r"].json()["detail"]
    # a second hostile body in flight, then SIGTERM: the process exits (safety net 60 s)
    t = threading.Thread(target=post)
    t.start()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal it handled
    t.join(60)
    assert "Traceback" not in proc.stderr.read()


def test_the_servers_fallback_never_pays_more_than_an_honest_sample(tools):
    """Issue 42 N2 through the server: a grounding part that runs out of memory scored
    "not applicable" and Eq. 9's gated mean paid 1.0 where the honest sample got 0.5."""
    from groundrl.recipes import get_recipe
    from groundrl.rubric import Part, Rubric

    def grounding(completions, samples):
        if any(s.get("frame_masks") == "huge" for s in samples):
            raise MemoryError
        return [0.0] * len(completions)

    def outcome(completion, answer):
        return 1.0 if answer in completion else 0.0

    rubric = Rubric(
        [
            Part("outcome", outcome, value_range=(0.0, 1.0)),
            Part("grounding", grounding, batched=True, fallback=None, value_range=(0.0, 1.0)),
        ],
        aggregate="gated_mean",
        gate="outcome",
        tau=0.5,
    )
    assert get_recipe("argos").rubric().names == rubric.names
    app = create_app("argos", rubric_overrides={"argos": rubric}, max_batch=1)
    honest = {"completion": "<answer>cup</answer>", "answer": "cup", "frame_masks": {}}
    with tools.Running(app) as srv:
        r = httpx.post(srv.url + "/score", json={"samples": [honest, {**honest, "frame_masks": "huge"}]})
    assert r.status_code == 200
    good, bad = r.json()["results"]
    assert good["reward"] == 0.5 and bad["reward"] <= good["reward"]
    assert "MemoryError" in bad["reasons"]["grounding"]
