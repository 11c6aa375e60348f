"""Issue 26 item 9: `score --workers` keeps its part files beside the output (not in
/tmp), removes them on SIGTERM (it used to leave them: SIGTERM was not handled), and the
next run removes what a kill -9 left."""

import json
import os
import signal
import subprocess
import sys
import time

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def _start(tmp_path):
    inp = tmp_path / "in.jsonl"
    row = json.dumps({"completion": "<critique>c</critique><score>6</score>", "gt_score": 7})
    inp.write_text((row + "\n") * 400_000)
    out_dir = tmp_path / "out"
    out_dir.mkdir(exist_ok=True)
    cmd = [sys.executable, "-m", "groundrl", "score", "eqa_rm", str(inp), "-o", str(out_dir / "o.jsonl")]
    cmd += ["--workers", "2", "-q"]
    return subprocess.Popen(cmd, env=ENV, stderr=subprocess.PIPE, text=True), out_dir


def _parts(out_dir):
    return [p for p in out_dir.iterdir() if p.name.startswith(".groundrl-score-")]


def _wait_for_parts(proc, out_dir):
    for _ in range(6000):
        if _parts(out_dir):
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    return False


def test_sigterm_removes_the_part_files(tmp_path):
    proc, out_dir = _start(tmp_path)
    try:
        assert _wait_for_parts(proc, out_dir), proc.stderr.read()[-2000:]
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=300)
    finally:
        proc.kill()
    assert code == 128 + signal.SIGTERM
    assert _parts(out_dir) == []


def test_the_next_run_removes_what_a_kill_9_left(tmp_path):
    proc, out_dir = _start(tmp_path)
    try:
        assert _wait_for_parts(proc, out_dir), proc.stderr.read()[-2000:]
        proc.kill()  # SIGKILL: nothing can clean up
        proc.wait(timeout=60)
    finally:
        proc.kill()
    left = _parts(out_dir)
    assert left  # beside the output, where the next run finds it
    from groundrl.scoring_parallel import remove_stale_parts

    for _ in range(600):  # the killed parent's pool workers exit once their parent is gone
        if remove_stale_parts(out_dir) or not _parts(out_dir):
            break
        time.sleep(0.05)
    assert _parts(out_dir) == []
