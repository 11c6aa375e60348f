"""Test-wide settings: one torch thread (2-thread CPU steps were 18-70x slower here),
offline hub, and the path to the shared external data (tests skip when it is absent)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

try:  # torch is an optional extra; set one thread only when it is installed
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    pass

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = ROOT.parent / "shared" / "data" / "external"


# Test files that share one session-scoped run (RunOnce below: the tiny trainings the docs
# snippets, the README tour and two train tests assert on): under xdist they go to one
# worker, or each worker would train the same config again.
RUN_ONCE_FILES = (
    "tests/test_docs_snippets.py",
    "tests/test_newcomer.py",
    "tests/train/test_presets.py",
    "tests/train/test_grpo_recipes.py",
)


def xdist_unit(nodeid: str) -> str:
    """The unit ``make test``'s workers are dealt (scripts/run_tests.sh runs the suite under
    pytest-xdist, two workers): a whole test file, so a module-scoped fixture (a demo run
    that several tests assert on) runs once; the files that share ``run_once`` as one unit;
    the tests that drive the real cluster packages as one unit — their drivers each start
    a local Ray instance and take turns on a lock (integrations/cluster_support.py), so
    dealt to two workers one would sit waiting on it."""
    path = nodeid.split("::", 1)[0]
    if "/test_real_cluster_packages" in path:
        return "cluster_packages"
    if path in RUN_ONCE_FILES:
        return "run_once"
    return path


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown (and unused) without xdist
def pytest_xdist_make_scheduler(config, log):
    """Deal :func:`xdist_unit` units to the workers. (xdist's own ``xdist_group`` mark
    does this, but its renaming of node ids has no effect under pytest 9.2, so the grouping
    is done here.)"""
    from xdist.scheduler import LoadGroupScheduling

    class WholeUnits(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return xdist_unit(nodeid)

    # units are dealt in collection order (pytest_collection_modifyitems below puts the
    # slow ones first), not xdist's most-tests-first: a two-minute demo file dealt last
    # would leave one worker idle for its whole run
    config.option.loadscopereorder = False
    return WholeUnits(config, log)


def pytest_collection_modifyitems(config, items):
    """Under xdist only: the units holding a ``slow`` test first (each unit's tests keep
    their order), so the long end-to-end runs start early and the short tests fill in."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    slow_units = {xdist_unit(i.nodeid) for i in items if i.get_closest_marker("slow")}
    items.sort(key=lambda i: xdist_unit(i.nodeid) not in slow_units)


@pytest.fixture(scope="session")
def external_data() -> Path:
    """``../shared/data/external``; skips the test when the folder is not there."""
    if not EXTERNAL.is_dir():
        pytest.skip(f"external data not present at {EXTERNAL}")
    return EXTERNAL


@pytest.fixture(scope="session")
def tiny_vlm_dir(tmp_path_factory) -> Path:
    """A tiny random Qwen2.5-VL saved once per test session (≈5 s to build)."""
    pytest.importorskip("transformers")
    from groundrl.models.tiny_vlm import build_tiny_vlm

    return build_tiny_vlm(tmp_path_factory.mktemp("tiny_vlm"), seed=0)


def _tiny_causal_lm(tokenizer, seed: int = 0):
    """A one-layer random Qwen2 causal LM (hidden 32) over ``tokenizer``'s vocabulary."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    cfg = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id,
    )
    return Qwen2ForCausalLM(cfg)


@pytest.fixture(scope="session")
def make_tiny_lm():
    """``make_tiny_lm(tokenizer, seed=0)``: the suite's one hand-built text-only model, for
    tests that need a causal LM over a tokenizer they already have (tests that need a
    special shape, e.g. a scalar-head RM, build their own)."""
    pytest.importorskip("transformers")
    return _tiny_causal_lm


@pytest.fixture(scope="session")
def tiny_lm_dir(tmp_path_factory, make_tiny_lm) -> Path:
    """That text-only model saved once per session with the tiny VLM's tokenizer
    (``groundrl.models.tiny_vlm.build_tokenizer``: its chat template and special tokens)."""
    from groundrl.models.tiny_vlm import build_tokenizer

    tokenizer = build_tokenizer(seed=0)
    path = tmp_path_factory.mktemp("tiny_lm")
    make_tiny_lm(tokenizer).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture
def chat_server():
    """A local OpenAI-compatible chat server on 127.0.0.1, stopped after the test."""
    from groundrl.testing.chat_server import ChatServer

    srv = ChatServer().start()
    yield srv
    srv.stop()


@dataclass(frozen=True)
class SharedRun:
    """One finished shell command: its exit status, its two streams and the folder it ran in."""

    command: str
    returncode: int
    stdout: str
    stderr: str
    folder: Path

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


class RunOnce:
    """``run_once(command)``: a README/docs shell command run once per test session, however
    many tests assert on it (issue 40 item 5: the docs-snippet test, the README tour and a
    CLI test each trained the same tiny config). It runs under ``bash -e`` in a fresh reader
    folder (links to the checkout's .venv, src, configs, bench, examples, docs; .venv/bin first
    on PATH, so ``groundrl`` and ``.venv/bin/groundrl`` are the same), keyed on the command
    with the ``.venv/bin/`` prefix dropped. ``SHARED`` lists the commands the docs-snippet
    test takes from here instead of running them again."""

    TRAIN_TINY = "groundrl train --config configs/cpu-tiny/reinforced_planning.yaml"
    TRAIN_ARGOS = "groundrl train --config configs/cpu-tiny/argos.yaml -o runs/argos-try --seed 1"
    SHARED = frozenset({TRAIN_TINY, TRAIN_ARGOS})  # both: docs/training.md's first snippet

    def __init__(self, tmp_path_factory) -> None:
        self._tmp = tmp_path_factory
        self._done: dict[str, SharedRun] = {}

    @staticmethod
    def key(command: str) -> str:
        return " ".join(command.replace(".venv/bin/", "").split())

    def __call__(self, command: str, timeout: int = 900) -> SharedRun:
        key = self.key(command)
        if key not in self._done:
            self._done[key] = self._run(key, timeout)
        return self._done[key]

    def _run(self, command: str, timeout: int) -> SharedRun:
        cwd = self._tmp.mktemp("run_once") / "main"
        cwd.mkdir()
        for name in (".venv", "src", "configs", "bench", "examples", "docs"):
            if (ROOT / name).exists():
                (cwd / name).symlink_to(ROOT / name)
        venv_bin = ROOT / ".venv" / "bin"
        env = {
            **os.environ,
            "PATH": f"{venv_bin}:{os.environ.get('PATH', '')}",
            "OMP_NUM_THREADS": "1",
            "COLUMNS": "200",
        }
        try:
            p = subprocess.run(
                ["bash", "-e", "-c", command],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as e:  # a failed run for every test that asks for it
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
            return SharedRun(command, -1, out, f"timed out after {timeout} s", cwd)
        return SharedRun(command, p.returncode, p.stdout, p.stderr, cwd)


@pytest.fixture(scope="session")
def run_once(tmp_path_factory) -> RunOnce:
    """See RunOnce: each distinct README/docs command once per session."""
    if not (ROOT / ".venv" / "bin" / "groundrl").exists():
        pytest.skip("needs the checkout's .venv (make setup)")
    return RunOnce(tmp_path_factory)
