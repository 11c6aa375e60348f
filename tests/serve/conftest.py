"""Helpers for the reward-server tests: a uvicorn server in a thread on an ephemeral
127.0.0.1 port, a free-port finder and small hand-made recipes."""

from __future__ import annotations

import socket
import threading
import time
from types import SimpleNamespace

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn  # noqa: E402

from groundrl.recipes.base import Recipe  # noqa: E402
from groundrl.rubric import Part, Rubric  # noqa: E402


class Running:
    """``with Running(app) as srv: httpx.get(srv.url + "/health")`` — uvicorn in a thread."""

    def __init__(self, app, **config) -> None:
        config = {"host": "127.0.0.1", "port": 0, "log_level": "error", **config}
        self.server = uvicorn.Server(uvicorn.Config(app, **config))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Running:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.005)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def exact(completion, gold):
    """1 when the completion equals the gold string, else 0."""
    return 1.0 if completion == gold else 0.0


def length(completion):
    """Characters of the completion, as a metric."""
    return float(len(completion)) if isinstance(completion, str) else 0.0


def toy_recipe(judge=None, name: str = "toy") -> Recipe:
    """A hand-made recipe: ``exact`` (weight 1) + ``length`` (weight 0.01); with a judge,
    a batched ``judge`` part (weight 1)."""

    def build(judge=judge) -> Rubric:
        parts = [Part("exact", exact), Part("length", length, weight=0.01)]
        if judge is not None:
            parts.append(Part("judge", judge, batched=True))
        return Rubric(parts, name=name)

    return Recipe(
        name=name,
        paper="test",
        summary="exact match + 0.01·length",
        build=build,
        required=("gold",),
        label_field="gold",
        options={"judge": "a batched judge"},
    )


class SlowJudge:
    """A batched judge part: sleeps ``delay`` per call (whatever the batch size), records
    the batch sizes, and scores ``sample["k"]`` (so results can be matched to requests)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls: list[int] = []
        self._lock = threading.Lock()

    def __call__(self, completions, samples):
        time.sleep(self.delay)
        with self._lock:
            self.calls.append(len(completions))
        return [float(s.get("k", 0)) for s in samples]


@pytest.fixture(scope="session")
def tools():
    """The helpers above for test modules (a conftest is not imported directly)."""
    return SimpleNamespace(Running=Running, free_port=free_port, toy_recipe=toy_recipe, SlowJudge=SlowJudge)
