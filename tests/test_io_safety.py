"""Issue 42 item 5 (commands' side): `-o` equal to an input (the same path, a symlink or a
hard link) is refused before anything is written, by every command with an INPUT and an
output file; disk-full is one line on stderr and leaves no partial file that looks
complete; `export verl` streams its input."""

import contextlib
import errno
import json
import os
import sys
import tracemalloc

import pytest
from typer.testing import CliRunner

from groundrl.cli import main as cli_main
from groundrl.cli.curate import app as curate_app
from groundrl.cli.main import app
from groundrl.io import SameFileError, atomic_output, check_output

ROW = json.dumps({"id": 1, "completion": "<critique>c</critique><score>6</score>", "gt_score": 7}) + "\n"
EXPORT_ROW = json.dumps({"id": 1, "prompt": "Rate it.", "gt_score": 7}) + "\n"


def _input(tmp_path, text=ROW * 3, name="in.jsonl"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _aliases(tmp_path, src):
    """The input's other names: a relative path through .., a symlink, a hard link."""
    (src.parent / "sub").mkdir(exist_ok=True)
    sym, hard = tmp_path / "sym.jsonl", tmp_path / "hard.jsonl"
    sym.symlink_to(src)
    os.link(src, hard)
    return {"same": src, "dotdot": src.parent / "sub" / ".." / src.name, "symlink": sym, "hardlink": hard}


def _refused(r, src, before):
    assert r.exit_code == 2, r.output
    assert "would destroy the input" in r.output, r.output
    assert src.read_bytes() == before  # old code: score emptied it, curate appended to it


def test_check_output_hand_cases(tmp_path):
    src = _input(tmp_path)
    for alias in _aliases(tmp_path, src).values():
        with pytest.raises(SameFileError, match="-o .* is the input"):
            check_output(alias, src)
    check_output(tmp_path / "other.jsonl", src)  # a new file
    check_output(None, src)
    check_output("-", src)
    check_output(tmp_path / "o.jsonl", None, "-")


@pytest.mark.parametrize("alias", ["same", "dotdot", "symlink", "hardlink"])
def test_score_refuses_its_input_as_output(tmp_path, alias):
    src = _input(tmp_path)
    before = src.read_bytes()
    out = _aliases(tmp_path, src)[alias]
    _refused(CliRunner().invoke(app, ["score", "eqa_rm", str(src), "-o", str(out), "-q"]), src, before)


def _curate_commands():
    """Every curate command with an INPUT argument (all its commands, as click sees them)."""
    import typer

    group = typer.main.get_command(curate_app)
    return [
        name
        for name, cmd in group.commands.items()
        if any(p.name in ("input", "input_path") for p in cmd.params)
    ]


@pytest.mark.parametrize("order", ["input first", "output first"])
def test_every_curate_command_refuses_its_input_as_output(tmp_path, order):
    src = _input(tmp_path)
    before = src.read_bytes()
    names = _curate_commands()
    assert len(names) >= 10, names
    for name in names:
        (tmp_path / name).mkdir()
        for alias in _aliases(tmp_path / name, src).values():
            args = [str(src), "-o", str(alias)] if order == "input first" else ["-o", str(alias), str(src)]
            r = CliRunner().invoke(app, ["curate", name, *args])
            assert r.exit_code == 2, (name, alias, r.output)
            assert "would destroy the input" in r.output, (name, r.output)
    assert src.read_bytes() == before


def test_curate_side_outputs_are_not_the_input_either(tmp_path):
    src = _input(tmp_path)
    before = src.read_bytes()
    out = tmp_path / "o.jsonl"
    for cmd, flag in [
        ("reject-pass-rate", "--kept"),
        ("reject-label", "--kept"),
        ("proxy-cold-start", "--sft"),
    ]:
        r = CliRunner().invoke(app, ["curate", cmd, str(src), "-o", str(out), flag, str(src), "-q"])
        _refused(r, src, before)
        assert not out.exists()


def test_sim_tasks_bench_and_export_refuse_their_input_as_output(tmp_path):
    src = _input(tmp_path)
    before = src.read_bytes()
    runs = [
        ["sim", "tasks", "--from", str(src), "-o", str(tmp_path / "sub" / ".." / "in.jsonl")],
        ["bench", "openeqa-format", str(src), str(src), str(src), "-o", str(src)],
        ["export", "verl", str(src), "-o", str(src), "--recipe", "eqa_rm"],
    ]
    (tmp_path / "sub").mkdir(exist_ok=True)
    for args in runs:
        _refused(CliRunner().invoke(app, args), src, before)


# -- disk full ----------------------------------------------------------------------------------


class _FullDisk:
    """A file whose second write fails with ENOSPC, as a full disk does."""

    def __init__(self, f):
        self.f, self.writes, self.name = f, 0, f.name

    def write(self, s):
        self.writes += 1
        if self.writes > 1:
            raise OSError(errno.ENOSPC, "No space left on device", self.name)
        return self.f.write(s)

    def __getattr__(self, key):
        return getattr(self.f, key)


@contextlib.contextmanager
def _full_disk(path, mode="w"):
    with atomic_output(path, mode) as f:
        yield _FullDisk(f)


def _main(monkeypatch, capsys, *args):
    monkeypatch.setattr(sys, "argv", ["groundrl", *args])
    with pytest.raises(SystemExit) as e:
        cli_main.main()
    return e.value.code, capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "sim tasks"])
def test_disk_full_is_one_line_and_leaves_the_old_output(tmp_path, monkeypatch, capsys, command):
    from groundrl.cli import score as score_cli
    from groundrl.cli import sim as sim_cli

    out = tmp_path / "o.jsonl"
    out.write_text("the previous complete output\n")
    if command == "score":
        monkeypatch.setattr(score_cli, "atomic_output", _full_disk)
        args = ["score", "eqa_rm", str(_input(tmp_path)), "-o", str(out), "-q"]
    else:
        monkeypatch.setattr(sim_cli, "atomic_output", _full_disk)
        args = ["sim", "tasks", "--n", "3", "-o", str(out)]
    code, err = _main(monkeypatch, capsys, *args)
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: no space left on the device"), err
    assert "Traceback" not in err
    assert out.read_text() == "the previous complete output\n"  # old code: a cut file in its place
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "in.jsonl") == ["o.jsonl"]


def test_other_os_errors_are_not_swallowed(monkeypatch):
    def boom():
        raise OSError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(cli_main, "app", boom)
    with pytest.raises(PermissionError):
        cli_main.main()


def test_export_disk_full_leaves_no_parquet(tmp_path, monkeypatch, capsys):
    from groundrl.integrations import verl

    src = _input(tmp_path, text=EXPORT_ROW * 3)  # export needs a prompt (or an EQA-RM episode record)
    real = verl._write_batch
    calls = []

    def full_after_one(writer, f, *a):
        calls.append(1)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(writer, f, *a)

    monkeypatch.setattr(verl, "BATCH_ROWS", 1)
    monkeypatch.setattr(verl, "_write_batch", full_after_one)
    out = tmp_path / "t.parquet"
    code, err = _main(monkeypatch, capsys, "export", "verl", str(src), "-o", str(out), "--recipe", "eqa_rm")
    assert code == 1 and err.startswith("Error: no space left on the device") and len(err.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


# -- export verl streams ------------------------------------------------------------------------


def _export_peak(tmp_path, n):
    """The export's peak traced Python memory on an input of ``n`` rows of ~2 KB, and the input's size."""
    rows = "".join(
        json.dumps({"id": i, "prompt": f"q{i}", "gt_score": i % 10, "recipe": "eqa_rm", "note": "x" * 2000})
        + "\n"
        for i in range(n)
    )
    src = _input(tmp_path, rows, name=f"in{n}.jsonl")
    tracemalloc.start()
    try:
        r = CliRunner().invoke(app, ["export", "verl", str(src), "-o", str(tmp_path / f"t{n}.parquet")])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.exit_code == 0, r.output
    return peak, src.stat().st_size


def test_export_verl_streams_its_input(tmp_path):
    """Four times the input, the same peak of Python memory (one row group of 256 rows is
    held); the old code held every row and every record, so its peak grew with the input."""
    import pyarrow.parquet as pq

    from groundrl.integrations import verl

    _export_peak(tmp_path, 10)  # imports outside the count
    small, _ = _export_peak(tmp_path, 1500)
    big, size = _export_peak(tmp_path, 6000)  # 12 MB
    assert big < 1.5 * small and big < size / 3, (small, big, size)
    out = tmp_path / "t6000.parquet"
    table = pq.read_table(out)
    assert table.num_rows == 6000 and table.column("data_source")[5999].as_py() == "groundrl/eqa_rm"
    assert pq.ParquetFile(out).metadata.num_row_groups == -(-6000 // verl.BATCH_ROWS)
    assert json.loads(table.column("extra_info")[5999].as_py()["json"])["index"] == 5999


# -- every YAML the commands read is parsed with aliases bounded ---------------------------------


def _laughs(tmp_path):
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    p = tmp_path / "bomb.yaml"
    p.write_text("\n".join(lines) + "\n")  # under 1 KB, 9**10 strings expanded
    return p


def test_monitor_and_agent_loop_configs_refuse_a_billion_laughs(tmp_path):
    from groundrl.integrations.verl_agent_loop import check_agent_loop_config

    bomb = _laughs(tmp_path)
    with pytest.raises(ValueError, match="aliases expand to more than"):
        check_agent_loop_config(str(bomb))
    r = CliRunner().invoke(app, ["monitor", str(_input(tmp_path)), "--config", str(bomb)])
    assert r.exit_code == 2 and "aliases expand to more than" in r.output, r.output
