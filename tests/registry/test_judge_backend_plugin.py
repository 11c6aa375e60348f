"""Judge backends as a registry (issue 23 item 3): ``register_judge_backend`` under every
registry's rules, ``JudgeConfig.backend`` checked against the registered names, and an
installed package that adds a backend through the ``groundrl.judges`` entry point, used by
``groundrl score --judge-backend <name>`` in a fresh process (a dist-info folder with
entry_points.txt on PYTHONPATH, read by importlib.metadata exactly as after pip install)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from groundrl.judges.base import Generation, JudgeBackend
from groundrl.judges.config import JudgeConfig
from groundrl.judges.registry import judge_backend_names, register_judge_backend, unregister_judge_backend

PLUGIN = '''
from groundrl.judges.base import Generation, JudgeBackend, SamplingParams


class AlwaysSecond(JudgeBackend):
    """Prefers response 2 every time; built from the JudgeConfig it is given."""

    def __init__(self, config):
        super().__init__()
        self.model = config.model

    def generate(self, requests, params=None):
        self.stats.requests += len(requests)
        n = (params or SamplingParams()).n
        return [Generation(["<think>plugin</think><answer>2</answer>"] * n) for _ in requests]
'''


class Fixed(JudgeBackend):
    def __init__(self, config):
        super().__init__()
        self.config = config

    def generate(self, requests, params=None):
        return [Generation(["<answer>1</answer>"]) for _ in requests]


def test_a_registered_backend_is_a_judge_config_backend_under_the_shared_rules():
    assert judge_backend_names()[:2] == ("openai", "transformers")
    with pytest.raises(
        ValueError, match=r"unknown judge backend 'fixed'; choose one of openai, transformers"
    ):
        JudgeConfig(backend="fixed", model="m")
    try:
        assert register_judge_backend("fixed", Fixed) is Fixed
        assert register_judge_backend("fixed", Fixed) is Fixed  # the same object again: a no-op
        with pytest.raises(ValueError, match="a judge backend named 'fixed' is already registered"):
            register_judge_backend("fixed", lambda config: Fixed(config))
        config = JudgeConfig(backend="fixed", model="m", url="http://127.0.0.1:9/v1")  # url is its business
        backend = config.make_backend()
        assert isinstance(backend, Fixed) and backend.config is config
    finally:
        unregister_judge_backend("fixed")
    assert "fixed" not in judge_backend_names()
    with pytest.raises(ValueError, match="'openai' is a built-in judge backend; give yours another name"):
        register_judge_backend("openai", Fixed, replace=True)
    with pytest.raises(ValueError, match="'transformers' is a built-in judge backend; it cannot be"):
        unregister_judge_backend("transformers")


def _install(site: Path) -> None:
    (site / "gr_judge").mkdir(parents=True)
    (site / "gr_judge" / "__init__.py").write_text(PLUGIN)
    info = site / "gr_judge-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gr-judge\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[groundrl.judges]\nsecond = gr_judge:AlwaysSecond\n")


def _groundrl(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "groundrl", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def test_an_installed_backend_scores_from_the_cli(tmp_path):
    site = tmp_path / "site"
    _install(site)
    sample = {
        "id": "s",
        "completion": "<rubric>Count the chairs.</rubric><eval>2 counts right.</eval><answer>2</answer>",
        "query": "How many chairs?",
        "response_1": "Three chairs.",
        "response_2": "Four chairs.",
        "preferred": 2,
    }
    data = tmp_path / "in.jsonl"
    data.write_text(json.dumps(sample) + "\n" + json.dumps({**sample, "id": "t", "preferred": 1}) + "\n")
    out = tmp_path / "out.jsonl"
    flags = ["--judge-backend", "second", "--judge-model", "plugin-model", "-q"]
    r = _groundrl(site, "score", "proxy_grm", str(data), "-o", str(out), *flags)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    # the plugin judge answers 2: the first sample's preferred response (+1), not the second's (-1)
    assert [row["parts"]["proxy"] for row in rows] == [1.0, -1.0], rows
    bad = _groundrl(site, "score", "proxy_grm", str(data), "--judge-backend", "nope", "--judge-model", "m")
    assert bad.returncode == 2
    assert "unknown judge backend 'nope'; choose one of openai, transformers, second" in " ".join(
        bad.stderr.split()
    )
