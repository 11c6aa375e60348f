"""Issue 26 item 8: a part that may block (a judge, a third-party part) has a deadline.
A call past it scores the part's fallback with reason ``timeout``, is counted, and the
batch goes on; the deadline is set on a Part, on a Rubric, through the environment
(verl / OpenRLHF / Ray workers, ``reward_funcs``), by ``groundrl serve --part-timeout``
and ``groundrl score --part-timeout``. The hung parts below wait on an event that is
set when the test ends, so no thread outlives the test for long."""

import json
import os
import threading

import pytest
from typer.testing import CliRunner

from groundrl.recipes.resolve import resolve_rubric
from groundrl.rubric import Part, Rubric, env_part_timeout

RELEASE = threading.Event()


@pytest.fixture(autouse=True)
def _release_hung_parts():
    RELEASE.clear()
    yield
    RELEASE.set()


def hangs(completion):
    RELEASE.wait(120)
    return 1.0


def hangs_batched(completions, samples):
    RELEASE.wait(120)
    return [1.0] * len(completions)


def exact(completion, gold):
    return float(completion == gold)


def test_a_hung_part_scores_its_fallback_with_reason_timeout_and_the_batch_goes_on():
    rub = Rubric(
        [
            Part("exact", exact),
            Part("judge", hangs_batched, batched=True, fallback=-1.0),
            Part("slow", hangs),
        ],
        part_timeout=0.2,
    )
    v = rub.score_batch(["a", "b"], [{"gold": "a"}, {"gold": "a"}])
    assert [x.parts["exact"].value for x in v] == [1.0, 0.0]
    assert [x.parts["judge"].value for x in v] == [-1.0, -1.0]  # the part's own fallback
    assert all(x.parts["judge"].reason.startswith("timeout") for x in v)
    assert [x.parts["slow"].value for x in v] == [0.0, 0.0]
    assert [x.total for x in v] == [1.0 - 1.0, -1.0]
    assert rub.timeouts() == 2  # one call each of the two hung parts


def test_a_part_own_timeout_wins_and_fast_parts_are_untouched():
    rub = Rubric([Part("exact", exact, timeout=5.0), Part("slow", hangs, timeout=0.1)], part_timeout=None)
    v = rub.score("a", gold="a")
    assert v.parts["exact"].value == 1.0 and v.parts["exact"].reason == ""
    assert v.parts["slow"].reason == "timeout: part 'slow' took over 0.1 s"


@pytest.mark.parametrize("bad", [0, -1, float("inf"), "5", True])
def test_bad_deadlines_raise_naming_the_setting(bad):
    with pytest.raises(ValueError, match="part_timeout"):
        Rubric([Part("exact", exact)], part_timeout=bad)
    with pytest.raises(ValueError, match="timeout"):
        Part("exact", exact, timeout=bad)


def test_the_environment_sets_the_deadline_of_rubrics_built_by_name(monkeypatch):
    assert env_part_timeout({}) is None
    assert env_part_timeout({"GROUNDRL_PART_TIMEOUT": "2.5"}) == 2.5
    with pytest.raises(ValueError, match="GROUNDRL_PART_TIMEOUT"):
        env_part_timeout({"GROUNDRL_PART_TIMEOUT": "soon"})
    monkeypatch.setenv("GROUNDRL_PART_TIMEOUT", "7")
    assert resolve_rubric("eqa_rm").part_timeout == 7.0


def test_score_cli_part_timeout(tmp_path, monkeypatch):
    from groundrl.cli.main import app
    from groundrl.recipes import register, unregister
    from groundrl.recipes.base import Recipe

    rec = Recipe(
        name="hung_part_test",
        paper="test",
        summary="exact match plus a part that hangs",
        build=lambda: Rubric([Part("exact", exact), Part("hung", hangs, weight=0.0)], name="hung_part_test"),
        required=("gold",),
        label_field="gold",
    )
    register(rec, replace=True)
    monkeypatch.delenv("GROUNDRL_PART_TIMEOUT", raising=False)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"completion": "a", "gold": "a"}) + "\n")
    out = tmp_path / "o.jsonl"
    try:
        args = ["score", rec.name, str(data), "-o", str(out), "-q", "--part-timeout", "0.3"]
        r = CliRunner().invoke(app, args)
    finally:
        unregister(rec.name)
    assert r.exit_code == 0, r.output
    assert "GROUNDRL_PART_TIMEOUT" not in os.environ  # the command's setting does not leak
    row = json.loads(out.read_text())
    assert row["reasons"]["hung"].startswith("timeout") and row["parts"]["exact"] == 1.0
