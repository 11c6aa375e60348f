"""Issue 42 item 5: `sim eval` writes each episode as it ends (a killed run keeps them), a
rerun with the same settings resumes and ends with the report an uninterrupted run
writes, and a rerun with other settings is refused instead of mixing two evaluations."""

import json

import pytest
from typer.testing import CliRunner

from groundrl.cli.sim import app
from groundrl.sim import evaluate

RUN_EPISODE = evaluate.run_episode


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def tasks(tmp_path):
    path = tmp_path / "tasks.jsonl"
    assert run("tasks", "--n", "5", "--seed", "3", "-o", path).exit_code == 0
    return path


def _count_episodes(monkeypatch, stop_after=None):
    """Count run_episode calls; with ``stop_after``, the next call is a Ctrl-C."""
    calls = []
    real = RUN_EPISODE

    def counted(*a, **kw):
        if stop_after is not None and len(calls) == stop_after:
            raise KeyboardInterrupt
        calls.append(a[0].id)
        return real(*a, **kw)

    monkeypatch.setattr(evaluate, "run_episode", counted)
    return calls


def _lines(path):
    return path.read_text().splitlines()


def test_a_killed_eval_keeps_its_episodes_and_the_rerun_resumes(tmp_path, tasks, monkeypatch):
    fresh = tmp_path / "fresh"
    assert run("eval", tasks, "-o", fresh).exit_code == 0

    out = tmp_path / "out"
    _count_episodes(monkeypatch, stop_after=2)
    r = run("eval", tasks, "-o", out)
    assert r.exit_code != 0
    assert len(_lines(out / "episodes.jsonl")) == 2  # old code: the folder held nothing
    assert not (out / "metrics.json").exists() and not (out / "results.jsonl").exists()

    calls = _count_episodes(monkeypatch)
    r = run("eval", tasks, "-o", out)
    assert r.exit_code == 0, r.output
    assert "resuming: 2 episode(s) already in" in r.output and "3 to run" in r.output
    assert len(calls) == 3  # only the tasks left
    assert (out / "results.jsonl").read_text() == (fresh / "results.jsonl").read_text()
    got, want = (json.loads((d / "metrics.json").read_text()) for d in (out, fresh))
    got.pop("wall_seconds"), want.pop("wall_seconds")
    assert got == want and got["n_tasks"] == 5


def test_a_cut_last_line_is_run_again(tmp_path, tasks, monkeypatch):
    out = tmp_path / "out"
    _count_episodes(monkeypatch, stop_after=3)
    run("eval", tasks, "-o", out)
    journal = out / "episodes.jsonl"
    text = journal.read_text()
    journal.write_text(text[: len(text) - 20])  # killed half-way through the third line
    calls = _count_episodes(monkeypatch)
    r = run("eval", tasks, "-o", out)
    assert r.exit_code == 0, r.output
    assert len(calls) == 3 and len(_lines(journal)) == 5
    assert len(_lines(out / "results.jsonl")) == 5


def test_other_settings_do_not_mix_with_an_unfinished_folder(tmp_path, tasks, monkeypatch):
    out = tmp_path / "out"
    _count_episodes(monkeypatch, stop_after=2)
    run("eval", tasks, "-o", out)
    before = (out / "episodes.jsonl").read_text()
    _count_episodes(monkeypatch)
    r = run("eval", tasks, "-o", out, "--max-steps", "5")
    assert r.exit_code == 2
    assert "max_steps was 30, now 5" in r.output and "--restart" in r.output
    assert (out / "episodes.jsonl").read_text() == before and not (out / "metrics.json").exists()
    other = tmp_path / "other.jsonl"
    other.write_text(tasks.read_text().replace("\n", "\n\n", 1))  # same tasks, another file content
    r = run("eval", other, "-o", out)
    assert r.exit_code == 2 and "tasks" in r.output
    r = run("eval", tasks, "-o", out, "--max-steps", "5", "--restart")
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    assert m["n_tasks"] == 5 and m["config"]["max_steps"] == 5
    assert len(_lines(out / "episodes.jsonl")) == 5


def test_a_finished_folder_is_started_over(tmp_path, tasks, monkeypatch):
    out = tmp_path / "out"
    assert run("eval", tasks, "-o", out).exit_code == 0
    calls = _count_episodes(monkeypatch)
    r = run("eval", tasks, "-o", out, "--limit", "2")
    assert r.exit_code == 0, r.output
    assert len(calls) == 2 and "resuming" not in r.output
    assert json.loads((out / "metrics.json").read_text())["n_tasks"] == 2
    assert len(_lines(out / "episodes.jsonl")) == 2 and len(_lines(out / "results.jsonl")) == 2


def test_episode_result_round_trips():
    from groundrl.sim.policies import Feedback

    r = evaluate.EpisodeResult(
        "t1", "base", "pick", "do it", True, 0.5, (1, 2), 3, 1, 0, 2, "success", "eb_alfred",
        [Feedback("find a Apple", "Last action executed successfully.", "find")], ["plan"],
    )  # fmt: skip
    assert evaluate.EpisodeResult.from_dict(json.loads(json.dumps(r.to_dict()))) == r


def test_a_full_disk_while_reporting_is_one_line_and_the_rerun_finishes(tmp_path, tasks, monkeypatch, capsys):
    import contextlib
    import errno
    import sys

    from groundrl.cli import main as cli_main
    from groundrl.io import atomic_output
    from groundrl.sim import report

    @contextlib.contextmanager
    def full_on_results(path, mode="w"):
        with atomic_output(path, mode) as f:
            if path.name == "results.jsonl":
                f.write("{}\n")  # some bytes went out, then the disk filled
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            yield f

    out = tmp_path / "out"
    monkeypatch.setattr(report, "atomic_output", full_on_results)
    monkeypatch.setattr(sys, "argv", ["groundrl", "sim", "eval", str(tasks), "-o", str(out)])
    with pytest.raises(SystemExit) as e:
        cli_main.main()
    err = capsys.readouterr().err
    assert e.value.code == 1 and "Error: no space left on the device" in err and "Traceback" not in err
    assert not (out / "results.jsonl").exists()  # old code: a cut results.jsonl
    assert not any(p.name.endswith(".tmp") for p in out.iterdir())
    monkeypatch.setattr(report, "atomic_output", atomic_output)
    calls = _count_episodes(monkeypatch)
    r = run("eval", tasks, "-o", out)
    assert r.exit_code == 0 and calls == [] and "5 episode(s) already in" in r.output, r.output
    assert len(_lines(out / "results.jsonl")) == 5
