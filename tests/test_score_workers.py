"""`groundrl score --workers N` writes exactly what one process writes (same lines, same
order, error records and line numbers included), across chunk boundaries."""

import json

from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.scoring_parallel import chunk_offsets, score_file_parallel


def _lines(n: int) -> list[str]:
    out = []
    for i in range(n):
        if i % 97 == 5:
            out.append("{not json")
        elif i % 89 == 7:
            out.append("")
        elif i % 83 == 3:
            out.append(json.dumps({"id": i, "completion": "<score>3</score>"}))  # no gt_score
        else:
            out.append(
                json.dumps(
                    {"id": i, "completion": f"<critique>c</critique><score>{i % 11}</score>", "gt_score": 5}
                )
            )
    return out


def test_parallel_equals_serial_in_order(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("\n".join(_lines(1300)) + "\n")
    outs = {}
    for w in (1, 2, 3):
        out = tmp_path / f"out{w}.jsonl"
        r = CliRunner().invoke(app, ["score", "eqa_rm", str(data), "-o", str(out), "-q", "--workers", str(w)])
        assert r.exit_code == 1  # some lines are bad, in every mode
        outs[w] = out.read_text()
    assert outs[1] == outs[2] == outs[3]
    rows = [json.loads(line) for line in outs[1].splitlines()]
    assert rows[5]["line"] == 6 and "not JSON" in rows[5]["error"]
    assert len(rows) == 1300 - sum(1 for i in range(1300) if i % 89 == 7 and i % 97 != 5)


def test_small_chunks_keep_line_numbers(tmp_path):
    import io

    lines = _lines(40)
    data = tmp_path / "in.jsonl"
    data.write_text("\n".join(lines) + "\n")
    buf = io.StringIO()
    rows, errors, n = score_file_parallel("eqa_rm", {}, data, workers=2, out=buf, chunk_lines=7)
    got = [json.loads(row) for row in buf.getvalue().splitlines()]
    assert [r["line"] for r in got] == [i + 1 for i, line in enumerate(lines) if line.strip()]
    assert errors == sum(1 for r in got if "error" in r) > 0 and n == len(got) == len(rows)


def test_chunk_offsets_cover_the_file_in_order():
    data = b"a\nb\n\nc\nd"  # 5 lines, the last without a newline
    assert list(chunk_offsets(data, 2)) == [(1, 0, 4), (3, 4, 7), (5, 7, 8)]


def test_line_ends_are_newlines_only_in_both_modes(tmp_path):
    """A U+2028 inside a JSON string, CRLF endings and a lone CR: one process and two
    give the same lines and numbers ("\n" ends a line, as JSON Lines says)."""
    rec = {"id": "u", "completion": "<critique>a\u2028b</critique><score>7</score>", "gt_score": 7}
    raw = (
        json.dumps(rec, ensure_ascii=False)
        + "\r\n"
        + json.dumps({"id": "r", "completion": "x\ry", "gt_score": 1}, ensure_ascii=False)
        + "\n"
    ).encode()
    data = tmp_path / "in.jsonl"
    data.write_bytes(raw * 5)
    outs = {}
    for w in (1, 2):
        out = tmp_path / f"o{w}.jsonl"
        r = CliRunner().invoke(app, ["score", "eqa_rm", str(data), "-o", str(out), "-q", "--workers", str(w)])
        assert r.exit_code == 0, r.output
        outs[w] = out.read_text()
    assert outs[1] == outs[2]
    rows = [json.loads(line) for line in outs[1].splitlines()]
    assert [r["line"] for r in rows] == list(range(1, 11)) and rows[0]["parts"]["format"] == 1.0


def test_workers_with_a_judge_is_refused(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_text("{}\n")
    r = CliRunner().invoke(
        app,
        ["score", "proxy_grm", str(data), "--workers", "2", "--judge-backend", "openai", "--judge-model", "m",
         "--judge-url", "http://127.0.0.1:9/v1"],
    )  # fmt: skip
    assert r.exit_code == 2 and "--workers" in r.output


def test_a_live_thread_means_spawn_and_the_run_still_ends(tmp_path):
    """A thread holding a lock at fork time deadlocks a forked child before its initializer
    (CI hang); with a thread alive the pool must spawn, and scoring must come out the same."""
    import threading

    from groundrl.scoring_parallel import start_method

    data = tmp_path / "in.jsonl"
    data.write_text("\n".join(_lines(60)) + "\n")
    lock, stop = threading.Lock(), threading.Event()

    def hold() -> None:
        with lock:
            stop.wait(60)

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    try:
        assert start_method() == "spawn"
        import io

        buf, one = io.StringIO(), io.StringIO()
        score_file_parallel("eqa_rm", {}, data, workers=2, out=buf, chunk_lines=7)
    finally:
        stop.set()
        t.join()
    score_file_parallel("eqa_rm", {}, data, workers=1, out=one, chunk_lines=7)
    assert buf.getvalue() == one.getvalue() != ""
