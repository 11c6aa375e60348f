"""Issue 26 items 6 and 9: `score` and `curate` read their input as they go, so peak
memory does not grow with the input (before: `curate rejective` 10x its input, `score`
13.6x); a decompose record cut exactly between two of its rows is redone on resume (it
was never redone), and the repair truncates the file instead of rewriting it."""

import json
import subprocess
import sys
import textwrap

import pytest

from groundrl.curate import decompose
from groundrl.curate.pipelines import ROWS, run

MB = 1_000_000

PEAK = textwrap.dedent(
    """
    import sys
    from groundrl.cli.main import main
    sys.argv = ["groundrl", *sys.argv[1:]]
    try:
        main()
    except SystemExit:
        pass
    # VmHWM: this process's own peak (ru_maxrss can carry the parent's from before exec)
    hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0].split()[1]
    print("PEAK_KB", hwm, file=sys.stderr)
    """
)


def _peak_mb(args):
    p = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, timeout=900)
    line = [x for x in p.stderr.splitlines() if x.startswith("PEAK_KB")]
    assert line, p.stderr[-2000:]
    return int(line[0].split()[1]) / 1024


def _write_rejective(path, size):
    row = {"gt_score": 7, "evaluations": [{"critique": "c" * 400, "score": s} for s in (6, 1, 7)]}
    text = json.dumps(row)
    with path.open("w") as f:
        for i in range(size // (len(text) + 12)):
            f.write(json.dumps({"id": i, **row}) + "\n")


def _write_score(path, size):
    row = {"completion": "<critique>" + "c" * 900 + "</critique><score>6</score>", "gt_score": 7}
    with path.open("w") as f:
        for i in range(size // 950):
            f.write(json.dumps({"id": i, **row}) + "\n")


@pytest.mark.parametrize(
    "make, args",
    [
        (_write_rejective, ["curate", "rejective", "{inp}", "-o", "{out}", "--quiet"]),
        (_write_score, ["score", "eqa_rm", "{inp}", "-o", "{out}", "-q"]),
    ],
)
def test_peak_memory_does_not_grow_with_the_input(tmp_path, make, args):
    peaks = []
    for size in (1 * MB, 8 * MB):
        inp, out = tmp_path / f"in{size}.jsonl", tmp_path / f"out{size}.jsonl"
        make(inp, size)
        peaks.append(_peak_mb([a.format(inp=inp, out=out) for a in args]))
        assert out.stat().st_size > 0
    # 7 MB more input: before, +70 MB (curate) / +95 MB (score) of peak memory
    assert peaks[1] - peaks[0] < 15, peaks


def _traj(i, n):
    return {"id": f"t{i}", "instruction": "go", "actions": [f"a{k}" for k in range(n)]}


def test_a_decompose_record_cut_between_its_rows_is_redone(tmp_path):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(json.dumps(_traj(i, 3)) + "\n" for i in range(3)))
    run(inp, out, decompose, None, progress=False)
    whole = out.read_text()
    rows = whole.splitlines(keepends=True)
    assert len(rows) == 9 and all(json.loads(r)[ROWS] == 3 for r in rows)
    for cut_rows in range(1, 9):  # every row boundary, the record boundaries included
        out.write_text("".join(rows[:cut_rows]))
        run(inp, out, decompose, None, progress=False)
        assert out.read_text() == whole, cut_rows
    for cut_bytes in (1, len(whole) // 2, len(whole) - 1):  # and inside a line
        out.write_text(whole[:cut_bytes])
        run(inp, out, decompose, None, progress=False)
        assert out.read_text() == whole, cut_bytes


def test_the_repair_truncates_in_place(tmp_path, monkeypatch):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text("".join(json.dumps(_traj(i, 2)) + "\n" for i in range(2)))
    run(inp, out, decompose, None, progress=False)
    whole = out.read_text()
    out.write_text(whole[:-5])
    ino = out.stat().st_ino
    import pathlib

    def no_rewrite(self, *a, **k):  # the old repair rewrote the whole file
        raise AssertionError("the repair must not rewrite the output")

    monkeypatch.setattr(pathlib.Path, "write_text", no_rewrite)
    run(inp, out, decompose, None, progress=False)
    assert out.stat().st_ino == ino and out.read_text() == whole


@pytest.mark.parametrize("field", ["line", "rows", "error"])
def test_a_user_field_with_a_reserved_name_is_an_error_record_never_overwritten(tmp_path, field):
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text(json.dumps({**_traj(0, 2), field: "mine"}) + "\n" + json.dumps(_traj(1, 2)) + "\n")
    counts = run(inp, out, decompose, None, progress=False)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert rows[0]["line"] == 1 and f"input field {field!r} is a name curate reserves" in rows[0]["error"]
    assert [r["id"] for r in rows[1:]] == ["t1/step0", "t1/step1"]
    assert counts["error"] == 1


def test_an_earlier_curate_steps_bookkeeping_is_kept_aside_not_refused(tmp_path):
    """proxy-records -> proxy-distill, the documented chain: the first step's integer `line`
    (and `rows`) ride along as upstream_line / upstream_rows; this step's own `line` is set."""
    inp, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    inp.write_text(json.dumps({"id": "a", "x": 1, "line": 7, "rows": 2}) + "\n")
    counts = run(inp, out, lambda rec: {**rec, "kept": True}, None, progress=False)  # a pass-through step
    (row,) = [json.loads(x) for x in out.read_text().splitlines()]
    assert counts["error"] == 0 and row["x"] == 1 and row["kept"] is True
    assert (row["line"], row["upstream_line"], row["upstream_rows"]) == (1, 7, 2)
