"""scripts/gpu_rehearsal.sh fails when it proves nothing (issue 35 item 5): without CUDA, and
on a training log whose every step had zero gradient, non-finite values, a flat reward, or
rewards the offline scorer does not give, however cleanly the run exited. Its --plan lists
every step (TRL, C-GRPO, 2 processes, configs/gpu, verl text and image, OpenRLHF) with the
interpreter each runs under.

Expected values are written by hand: EQA-RM's accuracy max(0, 1 - (|s - s*| / 10)^2)
[EQA-RM paper Eq. 3] gives 0.96 for a score of 7 against a gold 5, and its format part 1.0
for a well-formed critique + score, so the total is 1.96."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
CHECK = SCRIPTS / "rehearsal_check.py"
LOGS = SCRIPTS / "rehearsal_logs.py"
REHEARSAL = SCRIPTS / "gpu_rehearsal.sh"
WELL_FORMED = "<critique>The answer names the table, as the frames show.</critique><score>7</score>"


def test_without_cuda_the_rehearsal_exits_non_zero_and_says_why(tmp_path):
    # a CPU interpreter (this one: CPU torch here) stands for a machine without CUDA
    env = {**os.environ, "PY": sys.executable}
    res = subprocess.run(
        ["bash", str(REHEARSAL), str(tmp_path / "w")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    assert "no CUDA device visible to" in res.stderr and "nothing was rehearsed" in res.stderr
    assert "PLANNED" not in res.stdout and not (tmp_path / "w").exists()


def test_the_script_is_valid_bash():
    res = subprocess.run(["bash", "-n", str(REHEARSAL)], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr


VERL_SINGLE_TURN = ("verl eqa_rm_text:", "verl eqa_rm_image:", "verl reinforced_planning:")


def _fake_python(folder: Path) -> Path:
    """An executable standing for another environment's interpreter (never run by --plan)."""
    folder.mkdir(parents=True)
    exe = folder / "python"
    exe.write_text("#!/bin/sh\nexit 99\n")
    exe.chmod(0o755)
    return exe


def _plan(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env}
    cmd = ["bash", str(REHEARSAL), *args, str(tmp_path / "plan")]
    return subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=120)


def _planned(stdout: str) -> dict[str, list[str]]:
    """Each PLANNED step's name -> the argv it would run (the line after it)."""
    lines = stdout.splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line.startswith("== PLANNED "):
            out[line.removeprefix("== PLANNED ")] = shlex.split(lines[i + 1])
    return out


def test_the_plan_lists_every_step_without_cuda_each_under_its_interpreter(tmp_path):
    py, cpy, opy = (_fake_python(tmp_path / n) for n in ("trl-env", "verl-env", "openrlhf-env"))
    res = _plan(tmp_path, "--plan", PY=str(py), CPY=str(cpy), OPY=str(opy))
    assert res.returncode == 0, res.stdout + res.stderr
    steps = _planned(res.stdout)
    names = "\n".join(steps)
    for wanted in (
        "TRL SFT -> GRPO bf16",
        "TRL C-GRPO bf16 with image rows",
        "every stage kind on 2 processes",
        "configs/gpu/reinforced_planning.yaml SFT -> GRPO + online filter",
        "verl household (2 steps)",
        "verl eqa_rm_text (2 steps)",
        "verl reinforced_planning (2 steps)",
        "verl image rows: groundrl export verl",
        "verl eqa_rm_image (2 steps)",
        "OpenRLHF reinforced_planning GRPO (2 steps",
    ):
        assert wanted in names, f"{wanted!r} not in the plan:\n{names}"
    checks = [n for n in steps if ": log check" in n]
    assert {n.split(": log check")[0] for n in checks} == {
        "TRL SFT", "TRL GRPO", "TRL C-GRPO", "configs/gpu SFT", "configs/gpu GRPO", "verl household",
        "verl eqa_rm_text", "verl reinforced_planning", "verl eqa_rm_image", "OpenRLHF GRPO",
    }  # fmt: skip
    # every check runs under PY; the real-model TRL step asserts the reward moved and the
    # offline scorer; verl and OpenRLHF re-score their logged rewards too
    assert all(steps[n][0] == str(py) and steps[n][steps[n].index("--python") + 1] == str(py) for n in checks)
    trl = next(steps[n] for n in checks if n.startswith("TRL GRPO"))
    assert "--reward-moved" in trl and trl[trl.index("--recipe") + 1] == "reinforced_planning"
    for name in ("verl eqa_rm_text", "verl reinforced_planning", "verl eqa_rm_image", "OpenRLHF GRPO"):
        argv = next(steps[n] for n in checks if n.startswith(name))
        assert "--samples" in argv, name
    # each trainer's own steps run its interpreter, never a hard-coded .venv
    for name, argv in steps.items():
        exe = argv[0] if argv[0] != "env" else next(a for a in argv[1:] if "=" not in a)
        if name in checks:
            pass
        elif name.startswith(("verl data", "verl image rows", "verl household:", *VERL_SINGLE_TURN)):
            assert exe == str(cpy), (name, argv)
        elif name.startswith(("OpenRLHF prompts", "OpenRLHF:")):
            assert exe == str(opy), (name, argv)
        elif name.startswith(("TRL", "real-model", "configs/gpu", "every stage kind")):
            assert exe == str(py), (name, argv)
        assert ".venv/bin/python" not in " ".join(argv), (name, argv)
    openrlhf = next(v for n, v in steps.items() if n.startswith("OpenRLHF reinforced_planning"))
    assert f"PYTHON={opy}" in openrlhf and str(SCRIPTS / "rehearsal_openrlhf_reward.py") in openrlhf


def test_the_plan_is_also_reached_by_rehearsal_dry(tmp_path):
    res = _plan(tmp_path, PY=sys.executable, REHEARSAL_DRY="1")
    assert res.returncode == 0 and "== PLANNED OpenRLHF reinforced_planning GRPO" in res.stdout, res.stderr


def _cuda_standin(tmp_path: Path) -> tuple[Path, Path]:
    """An interpreter that says CUDA is there, "runs" every ``-m`` command (trainers, the
    fixture, pytest) as an exit 0 that trains and logs nothing, runs the rehearsal's own
    scripts with this Python, and records every call."""
    calls = tmp_path / "calls.txt"
    exe = tmp_path / "standin" / "python"
    exe.parent.mkdir(parents=True)
    exe.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> {shlex.quote(str(calls))}\n'
        'case "$*" in\n'
        "  *cuda.is_available*) exit 0 ;;\n"
        "  *get_device_name*) echo 'CUDA: stand-in'; exit 0 ;;\n"
        '  "-m "*) exit 0 ;;\n'
        "esac\n"
        f'exec {shlex.quote(sys.executable)} "$@"\n'
    )
    exe.chmod(0o755)
    return exe, calls


def test_trainers_that_exit_0_but_log_nothing_fail_and_missing_trainers_are_skips(tmp_path):
    # the old rehearsal's blind spot: exit codes only. Here every trainer exits 0 and writes
    # nothing; verl and OpenRLHF are not installed in the stand-in's environment
    py, calls = _cuda_standin(tmp_path)
    env = {**os.environ, "PY": str(py), "CPY": str(py)}
    # a previous run's good SFT log must not pass for this run's
    stale = [{"stage": "sft", "step": i, "loss": 1.0, "grad_norm": 0.5} for i in range(1, 9)]
    _log(tmp_path / "w" / "trl", stale)
    res = subprocess.run(
        ["bash", str(REHEARSAL), "--allow-skip", str(tmp_path / "w")],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    out = res.stdout
    assert res.returncode == 1, out + res.stderr
    assert "RAN     TRL SFT -> GRPO bf16" in out and "RAN     every stage kind on 2 processes" in out
    assert "FAILED  TRL SFT: log check" in out and "FAILED  TRL GRPO: logged completions" in out
    assert "FAILED  TRL C-GRPO: log check" in out and "FAILED  configs/gpu SFT: log check" in out
    assert (
        f"SKIPPED verl household multi-turn, eqa_rm (text, image), reinforced_planning: {py} lacks verl"
        in out
    )
    assert f"SKIPPED OpenRLHF reinforced_planning: {py} lacks openrlhf" in out
    assert "log.jsonl not found" in out
    # the interpreter probed for CUDA ran every TRL-side command
    ran = calls.read_text()
    for cmd in (
        "-m groundrl models get",
        "-m groundrl train --config",
        "-m pytest",
        "rehearsal_data.py gpu-stage",
    ):
        assert cmd in ran, cmd


def test_the_configs_gpu_stage_is_the_preset_but_for_its_listed_changes_and_passes_dry_run(tmp_path):
    yaml = pytest.importorskip("yaml")
    data = SCRIPTS / "rehearsal_data.py"
    res = subprocess.run(
        [sys.executable, str(data), "gpu-stage", str(tmp_path), str(ROOT), "tiny", "no-vllm"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    got = yaml.safe_load((tmp_path / "gpu_stage.yaml").read_text())
    preset = yaml.safe_load((ROOT / "configs" / "gpu" / "reinforced_planning.yaml").read_text())
    changed = {"sft": {"max_steps", "max_length"}, "grpo": {"max_steps", "num_generations", "use_vllm",
               "per_device_train_batch_size", "gradient_accumulation_steps", "steps_per_generation",
               "max_completion_length", "save_strategy"}}  # fmt: skip
    for mine, theirs in zip(got["stages"], preset["stages"], strict=True):
        kind = mine["kind"]
        block, shipped = mine[kind], theirs[kind]
        assert {k: v for k, v in block.items() if k not in changed[kind]} == {
            k: v for k, v in shipped.items() if k not in changed[kind]
        }
        assert block["max_steps"] == 2 and (kind == "sft" or block["use_vllm"] is False)
    filt, shipped = got["stages"][1]["online_filter"], preset["stages"][1]["online_filter"]
    assert {k: filt[k] for k in ("lo", "hi", "criterion", "reward")} == {
        k: shipped[k] for k in ("lo", "hi", "criterion", "reward")
    }
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "groundrl",
        "train",
        "--config",
        str(tmp_path / "gpu_stage.yaml"),
        "--dry-run",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0 and "2 stage(s) would run" in res.stderr, res.stdout[-2000:] + res.stderr


def _log(tmp_path: Path, rows: list[dict]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def _check(run: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, str(CHECK), str(run), "--stage", "grpo", *flags]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def _step(i: int, **kw: float) -> dict:
    return {"stage": "grpo", "step": i, "loss": 0.0, "grad_norm": 0.0, "reward": 0.0, "reward_std": 0.0, **kw}


def test_a_zero_gradient_run_fails_the_check(tmp_path):
    # what the old rehearsal counted as RAN: 3 steps, exit 0, zero gradient and no reward spread
    res = _check(_log(tmp_path, [_step(i) for i in (1, 2, 3)]), "--min-steps", "3")
    assert res.returncode == 1
    assert "gradient was zero on every step" in res.stderr and "reward never varied" in res.stderr


def test_a_run_with_signal_passes_and_bad_values_fail(tmp_path):
    good = [_step(1), _step(2, grad_norm=0.3, reward=0.4, reward_std=0.2), _step(3, grad_norm=0.1)]
    assert _check(_log(tmp_path / "good", good), "--min-steps", "3").returncode == 0
    nan = [*good, {"stage": "grpo", "step": 4, "loss": float("nan"), "grad_norm": 0.2, "reward": 0.1}]
    res = _check(_log(tmp_path / "nan", nan))
    assert res.returncode == 1 and "loss not finite at step(s) [4]" in res.stderr
    res = _check(_log(tmp_path / "short", good), "--min-steps", "4")
    assert res.returncode == 1 and "3 step(s) logged, expected at least 4" in res.stderr
    assert _check(tmp_path / "missing").returncode == 1


def test_code_path_only_skips_the_signal_checks_but_not_finiteness(tmp_path):
    flat = [_step(1), _step(2)]
    assert _check(_log(tmp_path / "flat", flat), "--code-path-only").returncode == 0
    bad = [_step(1, reward=float("inf"))]
    assert _check(_log(tmp_path / "inf", bad), "--code-path-only").returncode == 1


def test_a_flat_reward_fails_reward_moved_and_a_moved_one_passes(tmp_path):
    # gradient and group variance present, but the mean reward of steps 3-4 equals steps 1-2's
    flat = [_step(i, grad_norm=0.2, reward_std=0.1, reward=r) for i, r in enumerate((0.2, 0.4, 0.4, 0.2), 1)]
    res = _check(_log(tmp_path / "flat", flat), "--reward-moved")
    assert res.returncode == 1 and "the reward did not move: mean 0.3" in res.stderr
    assert _check(tmp_path / "flat").returncode == 0  # without the flag the same log passes
    moved = [_step(i, grad_norm=0.2, reward_std=0.1, reward=r) for i, r in enumerate((0.2, 0.4, 0.5, 0.6), 1)]
    assert _check(_log(tmp_path / "moved", moved), "--reward-moved").returncode == 0
    one = [_step(1, grad_norm=0.2, reward_std=0.1, reward=0.5)]
    res = _check(_log(tmp_path / "one", one), "--reward-moved")
    assert res.returncode == 1 and "cannot tell whether it moved" in res.stderr


def _samples(path: Path, logged: list[dict]) -> Path:
    rows = [
        {"step": 1, "completion": WELL_FORMED, "fields": {"gt_score": 5}, "logged": logged[0]},
        {"step": 1, "completion": "no tags at all", "fields": {"gt_score": 5}, "logged": logged[1]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_logged_rewards_must_equal_the_offline_scorer(tmp_path):
    run = _log(tmp_path, [_step(1, grad_norm=0.2, reward_std=0.5, reward=0.98)])
    right = [{"reward": 1.96, "accuracy": 0.96, "format": 1.0}, {"reward": 0.0, "accuracy": 0.0}]
    ok = _check(run, "--samples", str(_samples(tmp_path / "ok.jsonl", right)), "--recipe", "eqa_rm")
    assert ok.returncode == 0, ok.stderr
    assert "2 logged completion(s) re-scored with groundrl score eqa_rm" in ok.stdout
    few = _check(run, "--samples", str(tmp_path / "ok.jsonl"), "--recipe", "eqa_rm", "--min-samples", "3")
    assert few.returncode == 1 and "2 logged completion(s), expected at least 3" in few.stderr
    # the trainer logged the normalised score (1.96 / 2) as the reward: not what the recipe gives
    wrong = [{"reward": 0.98, "accuracy": 0.96}, {"reward": 0.0}]
    res = _check(run, "--samples", str(_samples(tmp_path / "bad.jsonl", wrong)), "--recipe", "eqa_rm")
    assert res.returncode == 1
    assert "1 logged value(s) differ from the offline scorer" in res.stderr
    assert "sample 1 (step 1): logged reward=0.98, offline 1.96" in res.stderr
    (tmp_path / "empty.jsonl").write_text("")
    res = _check(run, "--samples", str(tmp_path / "empty.jsonl"), "--recipe", "eqa_rm")
    assert res.returncode == 1 and "no logged completions to compare" in res.stderr


VERL_CONSOLE = """\
(TaskRunner pid=311) step:1 - actor/pg_loss:0.0123 - actor/grad_norm:0.5 - critic/score/mean:0.25 - timing_s/gen:1.5
(TaskRunner pid=311) step:2 - actor/pg_loss:nan - actor/grad_norm:0.0 - critic/score/mean:0.5
"""
OPENRLHF_CONSOLE = """\
[2026-11-28 09:00:01] ✨ Global step 1: {'policy_loss': 0.01, 'actor_grad_norm': 0.0, \
'rollout/reward_mean': 0.5, 'rollout/reward_std': 0.25, 'kl': 0.0}
[2026-11-28 09:00:09] ✨ Global step 2: {'policy_loss': -0.02, 'actor_grad_norm': 0.0, \
'rollout/reward_mean': nan, 'rollout/reward_std': 0.0}
"""


def _logs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(LOGS), *args], capture_output=True, text=True, timeout=120)


def test_verl_and_openrlhf_console_logs_become_step_rows_the_check_reads(tmp_path):
    (tmp_path / "verl.log").write_text(VERL_CONSOLE)
    assert (
        _logs("verl-log", str(tmp_path / "verl.log"), str(tmp_path / "verl"), "--stage", "v").returncode == 0
    )
    rows = [json.loads(x) for x in (tmp_path / "verl" / "log.jsonl").read_text().splitlines()]
    assert rows[0] == {"stage": "v", "step": 1, "loss": 0.0123, "grad_norm": 0.5, "reward": 0.25}
    res = subprocess.run(
        [sys.executable, str(CHECK), str(tmp_path / "verl"), "--stage", "v", "--min-steps", "2", "--code-path-only"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 1 and "loss not finite at step(s) [2]" in res.stderr
    (tmp_path / "o.log").write_text(OPENRLHF_CONSOLE)
    assert _logs("openrlhf-log", str(tmp_path / "o.log"), str(tmp_path / "o"), "--stage", "o").returncode == 0
    rows = [json.loads(x) for x in (tmp_path / "o" / "log.jsonl").read_text().splitlines()]
    assert rows[0] == {
        "stage": "o",
        "step": 1,
        "loss": 0.01,
        "grad_norm": 0.0,
        "reward": 0.5,
        "reward_std_all": 0.25,
    }
    res = subprocess.run(
        [sys.executable, str(CHECK), str(tmp_path / "o"), "--stage", "o", "--min-steps", "2"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 1
    assert (
        "reward not finite at step(s) [2]" in res.stderr and "gradient was zero on every step" in res.stderr
    )
    (tmp_path / "none.log").write_text("no metrics here\n")
    res = _logs("verl-log", str(tmp_path / "none.log"), str(tmp_path / "none"), "--stage", "v")
    assert res.returncode == 1 and "nothing of what it reads was found" in res.stderr


def test_trl_completions_tables_join_their_data_rows(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    stage = tmp_path / "grpo"
    (stage / "completions").mkdir(parents=True)
    table = {
        "step": [1, 1],
        "prompt": [
            [{"role": "user", "content": "Rate answer B."}],
            [{"role": "user", "content": "Rate answer A."}],
        ],
        "completion": [
            [{"role": "assistant", "content": WELL_FORMED}],
            [{"role": "assistant", "content": "x"}],
        ],
        "accuracy": [0.96, 0.0],
        "format": [1.0, 0.0],
        "accuracy_reason": ["score 7 vs gold 5", "no <score>…</score>"],
        "advantage": [0.7, -0.7],
    }
    pd.DataFrame(table).to_parquet(stage / "completions" / "completions_00001.parquet")
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"prompt": "Rate answer A.", "gt_score": 2}) + "\n"
                    + json.dumps({"prompt": "Rate answer B.", "gt_score": 5}) + "\n")  # fmt: skip
    out = tmp_path / "samples.jsonl"
    assert _logs("trl-samples", str(stage), str(data), "-o", str(out)).returncode == 0
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert got[0] == {
        "step": 1, "completion": WELL_FORMED, "fields": {"gt_score": 5}, "logged": {"accuracy": 0.96, "format": 1.0}
    }  # fmt: skip
    assert got[1]["fields"] == {"gt_score": 2} and got[1]["completion"] == "x"
    run = _log(tmp_path / "run", [_step(1, grad_norm=0.1, reward_std=0.3)])
    assert _check(run, "--samples", str(out), "--recipe", "eqa_rm").returncode == 0
    data.write_text(json.dumps({"prompt": "Another prompt.", "gt_score": 2}) + "\n")
    res = _logs("trl-samples", str(stage), str(data), "-o", str(out))
    assert res.returncode == 1 and "no data row's prompt is in" in res.stderr


def test_verl_rollout_dumps_become_samples_and_float32_rewards_compare_equal(tmp_path):
    # verl's _write_generations lines: input, output, gts, score (a float32 sum), step and the
    # reward's extra keys; a label groundrl had to JSON-encode arrives as {"json": ...}
    dump = tmp_path / "dump"
    dump.mkdir()
    lines = [
        {"input": "q", "output": WELL_FORMED, "gts": 5, "score": 1.9600000381469727, "step": 1,
         "accuracy": 0.9599999785423279, "format": 1.0, "request_id": "r1"},
        {"input": "q", "output": "no tags", "gts": {"json": "5"}, "score": 0.0, "step": 1},
    ]  # fmt: skip
    (dump / "1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "samples.jsonl"
    assert _logs("verl-samples", str(dump), "--field", "gt_score", "-o", str(out)).returncode == 0
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert got[0]["fields"] == got[1]["fields"] == {"gt_score": 5}
    assert got[0]["logged"] == {"reward": 1.9600000381469727, "accuracy": 0.9599999785423279, "format": 1.0}
    run = _log(tmp_path / "run", [_step(1)])
    assert _check(run, "--samples", str(out), "--recipe", "eqa_rm", "--code-path-only").returncode == 0
    lines[0]["score"] = 0.98  # the [0, 1]-normalised score where verl should get the raw reward
    (dump / "1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert _logs("verl-samples", str(dump), "--field", "gt_score", "-o", str(out)).returncode == 0
    res = _check(run, "--samples", str(out), "--recipe", "eqa_rm", "--code-path-only")
    assert res.returncode == 1 and "logged reward=0.98, offline 1.96" in res.stderr


def test_the_openrlhf_recorder_logs_what_groundrls_reward_gave(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    samples = tmp_path / "samples.jsonl"
    monkeypatch.setenv("GROUNDRL_RECIPE", "eqa_rm")
    monkeypatch.setenv("GROUNDRL_REHEARSAL_SAMPLES", str(samples))
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import rehearsal_openrlhf_reward as rec

    prompt = "<|im_start|>user\nCritique the answer.<|im_end|>\n<|im_start|>assistant\n"
    out = rec.reward_func([prompt + WELL_FORMED + "<|im_end|>"], [prompt], ["5"])
    assert out["rewards"].tolist() == pytest.approx([1.96])
    (line,) = [json.loads(x) for x in samples.read_text().splitlines()]
    assert line["completion"] == WELL_FORMED and line["fields"] == {"gt_score": "5"}
    assert line["logged"] == pytest.approx({"reward": 1.96, "accuracy": 0.96, "format": 1.0})
