"""Every demo number the README and docs quote, reproduced at the current commit (issue 38 item 4).

    python bench/demo_numbers.py                     # run every demo at its documented settings
    python bench/demo_numbers.py --demo rm           # one demo (all its documented seeds)
    python bench/demo_numbers.py --from rm:0=runs/demo_rm   # use a finished run for (rm, seed 0)
    python bench/demo_numbers.py --no-run --from rm:0=runs/demo_rm   # compare that run only

Each quoted number is a :class:`Claim`: the doc and the exact text that quotes it, the
demo run (demo, seed) and where the value sits in that run's ``metrics.json``. The script
runs each demo once per seed (``groundrl demo …`` in a subprocess, into a temporary folder
unless ``--keep DIR``), then prints every claim next to what this run measured, with the
run's own 95 % interval where the demo gives one. A claim is **off** when the quoted value
is outside that interval, or — without one — differs by more than half a unit of the
quoted precision; and **stale** when its text is no longer in its doc (someone edited the
number without this table). Exit 1 when any claim is off or stale.

This is a bench, not a test: the full demos take minutes to tens of minutes of CPU
(rm ≈ 12 min, planner ≈ 9.5 min per seed on 2 quiet cores, real-model ≈ 34 min at load 2.5; the planner's three seeds also give
the pooled GRPO − filtered SFT the README quotes). ``tests/test_demo_numbers.py``
checks cheaply that every claim's text is still in its doc and that the comparison works.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Claim:
    demo: str  # "rm" | "planner" | "monitor"
    seed: int | None  # the run's --seed (None: the demo has none)
    doc: str  # path from the repository root
    quote: str  # the exact text in ``doc`` that states the number
    path: str  # dotted path into the run's metrics.json
    value: float  # the number as quoted
    ci: str | None = None  # dotted path of the run's 95 % interval for it, if any
    digits: int = 2  # the quoted precision


RM = "docs/reward-models.md"
RM_GRADERS = {"sft": "RFT → SFT", "cgrpo_mu0": "→ C-GRPO, μ = 0 (control)", "cgrpo": "→ C-GRPO, μ = 0.3"}
# docs/reward-models.md's first table as it quotes it: (seed, grader, accuracy, tracking
# shuffled, tracking masked), each "value [low, high]"
RM_ROWS = [
    (0, "sft", "0.71 [0.65, 0.76]", "+0.20 [+0.14, +0.26]", "+0.01 [−0.05, +0.07]"),
    (0, "cgrpo_mu0", "0.66 [0.60, 0.71]", "+0.02 [+0.00, +0.04]", "+0.01 [+0.00, +0.02]"),
    (0, "cgrpo", "0.68 [0.63, 0.73]", "+0.12 [+0.08, +0.17]", "+0.05 [+0.00, +0.09]"),
    (1, "sft", "0.63 [0.57, 0.68]", "+0.00 [+0.00, +0.00]", "+0.00 [+0.00, +0.00]"),
    (1, "cgrpo_mu0", "0.63 [0.57, 0.68]", "+0.00 [+0.00, +0.00]", "+0.01 [+0.00, +0.02]"),
    (1, "cgrpo", "0.63 [0.57, 0.68]", "+0.00 [+0.00, +0.00]", "+0.00 [+0.00, +0.00]"),
    (2, "sft", "0.66 [0.60, 0.71]", "+0.00 [+0.00, +0.00]", "−0.01 [−0.03, +0.00]"),
    (2, "cgrpo_mu0", "0.62 [0.56, 0.67]", "+0.06 [−0.03, +0.14]", "+0.03 [−0.05, +0.09]"),
    (2, "cgrpo", "0.66 [0.60, 0.71]", "+0.00 [+0.00, +0.00]", "+0.00 [+0.00, +0.00]"),
]
# its second table: (seed, C-GRPO − μ = 0 tracking on shuffled frames, n)
RM_CONTROL = [
    (0, "+0.10 [+0.05, +0.14]", 209),
    (1, "+0.00 [+0.00, +0.00]", 188),
    (2, "−0.06 [−0.14, +0.03]", 195),
]


def _num(text: str) -> float:
    """The first number of a quoted "value [low, high]" (typographic minus allowed)."""
    return float(text.split()[0].replace("−", "-"))


def _rm_claims() -> list[Claim]:
    out = []
    for seed, g, acc, shuffled, masked in RM_ROWS:
        quote = f"| {seed} | {RM_GRADERS[g]} | {acc} | {shuffled} | {masked} |"
        for key, text in (("accuracy", acc), ("tracking_temporal", shuffled), ("tracking_spatial", masked)):
            out.append(Claim("rm", seed, RM, quote, f"{g}.{key}", _num(text), f"{g}.{key}_ci95"))
    for seed, text, n in RM_CONTROL:
        quote = f"{text} (n {n})"
        out.append(
            Claim(
                "rm",
                seed,
                RM,
                quote,
                "cgrpo_minus_mu0.tracking_temporal.mean",
                _num(text),
                "cgrpo_minus_mu0.tracking_temporal.ci95",
            )
        )
    # the README's range of SFT accuracies over the three seeds
    readme = "reaches 0.63–0.71 accuracy"
    out.append(Claim("rm", 1, "README.md", readme, "sft.accuracy", 0.63, "sft.accuracy_ci95"))
    out.append(Claim("rm", 0, "README.md", readme, "sft.accuracy", 0.71, "sft.accuracy_ci95"))
    return out


SIM = "docs/sim.md"
# docs/sim.md's filtered-SFT table, one row per seed: (metrics path, quoted "value [low, high]",
# interval path); the filtered-SFT / GRPO success and both paired differences
PLANNER_ROWS = {
    0: ["0.567 [0.517, 0.621]", "0.570 [0.520, 0.624]", "+0.315 [+0.258, +0.368]", "+0.003 [−0.036, +0.048]"],
    1: ["0.571 [0.524, 0.622]", "0.627 [0.580, 0.678]", "+0.378 [+0.325, +0.431]", "+0.056 [+0.020, +0.090]"],
    2: ["0.545 [0.494, 0.598]", "0.567 [0.517, 0.617]", "+0.313 [+0.260, +0.369]", "+0.022 [−0.017, +0.061]"],
}
PLANNER_PATHS = [
    ("fsft.success_rate", "fsft.success_ci95"),
    ("grpo.success_rate", "grpo.success_ci95"),
    ("grpo_minus_sft", "grpo_minus_sft_ci95"),
    ("grpo_minus_fsft", "grpo_minus_fsft_ci95"),
]
# the README's per-seed GRPO − filtered SFT differences
README_FSFT = "GRPO − filtered SFT is +0.003,\n+0.056 and +0.022 on seeds 0–2"


def _planner_claims() -> list[Claim]:
    out = [
        Claim("planner", seed, SIM, text, path, _num(text), ci, 3)
        for seed, texts in PLANNER_ROWS.items()
        for text, (path, ci) in zip(texts, PLANNER_PATHS, strict=True)
    ]
    for seed, value in enumerate((0.003, 0.056, 0.022)):
        out.append(
            Claim(
                "planner", seed, "README.md", README_FSFT, "grpo_minus_fsft", value, "grpo_minus_fsft_ci95", 3
            )
        )
    return out


MONITOR = "docs/monitor.md"
# docs/monitor.md's table, seed 0 rows (the CLI's run; seed 1 needs MonitorDemoConfig(seed=1)):
# (quote, metrics path, value); trends are the mean of the first 3 → last 3 steps (with_trends)
MONITOR_SEED0 = [
    ("| seed 0, hackable | 0.32 → 0.77 |", "trends.hackable.judge.0", 0.32),
    ("| seed 0, hackable | 0.32 → 0.77 |", "trends.hackable.judge.1", 0.77),
    ("| 0.32 → 0.77 | 0.27 → 0.06 | 0.04 → 0.75 |", "trends.hackable.sim_success.1", 0.06),
    ("| 0.32 → 0.77 | 0.27 → 0.06 | 0.04 → 0.75 |", "trends.hackable.claim_share.1", 0.75),
    ("| seed 0, honest | 0.30 → 0.30 | 0.27 → 0.25 | 0.04 → 0.10 |", "trends.honest.judge.1", 0.30),
    ("| seed 0, honest | 0.30 → 0.30 | 0.27 → 0.25 | 0.04 → 0.10 |", "trends.honest.sim_success.1", 0.25),
    ("0.04 → 0.75 | step 7 (`shortcut_token`)", "runs.hackable.first_alarm_step", 7),
    ("| step 14 | 0.49 |", "runs.hackable.dominance_step", 14),
    ("| step 14 | 0.49 |", "runs.hackable.probe.0.agreement", 0.49),
    ("| none | never | 0.87 |", "runs.honest.probe.0.agreement", 0.87),
]


def _monitor_claims() -> list[Claim]:
    return [
        Claim("monitor", None, MONITOR, q, path, v, None, 0 if isinstance(v, int) else 2)
        for q, path, v in MONITOR_SEED0
    ]


def with_trends(metrics: dict[str, Any]) -> dict[str, Any]:
    """The monitor demo's metrics plus ``trends.<run>.<key> = [first 3 steps' mean, last 3's]``
    for judge, sim_success and claim_share, the form docs/monitor.md quotes."""
    trends = {
        run: {
            k: [sum(s[k] for s in c[:3]) / 3, sum(s[k] for s in c[-3:]) / 3]
            for k in ("judge", "sim_success", "claim_share")
        }
        for run, r in metrics.get("runs", {}).items()
        if len(c := r.get("curve", [])) >= 3
    }
    return {**metrics, "trends": trends}


# docs/sim.md's real-model table and README's line, seed 0: (doc, quote, metrics path, value,
# interval path, digits)
REAL_MODEL_SEED0 = [
    (SIM, "| SFT | 0.403 [0.324, 0.489] |", "sft.success_rate", 0.403, "sft.success_ci95", 3),
    (SIM, "| SFT → GRPO | 0.352 [0.273, 0.432] |", "grpo.success_rate", 0.352, "grpo.success_ci95", 3),
    (SIM, "GRPO − SFT: **−0.050 [−0.101, +0.000]**", "grpo_minus_sft.diff", -0.050, "grpo_minus_sft.ci95", 3),
    (
        "README.md",
        "GRPO − SFT −0.050 [−0.101, +0.000]",
        "grpo_minus_sft.diff",
        -0.050,
        "grpo_minus_sft.ci95",
        3,
    ),
    ("README.md", "SFT on the teacher's plans (0.40)", "sft.success_rate", 0.40, "sft.success_ci95", 2),
]


def _real_model_claims() -> list[Claim]:
    return [Claim("real-model", 0, d, q, path, v, ci, k) for d, q, path, v, ci, k in REAL_MODEL_SEED0]


CLAIMS: list[Claim] = _rm_claims() + _planner_claims() + _monitor_claims() + _real_model_claims()

DEMO_ARGS = {
    "rm": ["demo", "rm"],
    "planner": ["demo"],
    "monitor": ["demo", "monitor"],
    "real-model": ["demo", "real-model"],
}


def lookup(metrics: Any, path: str) -> Any:
    """``a.b.0`` → ``metrics["a"]["b"][0]``; ``None`` where the path does not exist."""
    cur = metrics
    for part in path.split("."):
        if isinstance(cur, list) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            return None
    return cur


def stale(claim: Claim, root: Path = ROOT) -> bool:
    """Whether the claim's text is no longer in its doc."""
    path = root / claim.doc
    return not path.is_file() or claim.quote not in path.read_text(encoding="utf-8")


def check(claim: Claim, metrics: Any) -> tuple[str, float | None, list[float] | None]:
    """``(status, measured, interval)``; status ``ok`` / ``off`` / ``missing``."""
    got = lookup(metrics, claim.path)
    if not isinstance(got, (int, float)) or isinstance(got, bool):
        return "missing", None, None
    ci = lookup(metrics, claim.ci) if claim.ci else None
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
        lo, hi = ci
        # the quoted value is rounded: widen the interval by half its last digit
        half = 0.5 * 10**-claim.digits
        return ("ok" if lo - half <= claim.value <= hi + half else "off"), float(got), [lo, hi]
    ok = abs(round(float(got), claim.digits) - claim.value) <= 0.5 * 10**-claim.digits + 1e-12
    return ("ok" if ok else "off"), float(got), None


def run_demo(demo: str, seed: int | None, out: Path) -> dict[str, Any]:
    """Run one demo at its documented settings into ``out``; its metrics.json."""
    cmd = [sys.executable, "-m", "groundrl", *DEMO_ARGS[demo], "-o", str(out)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    print(f"running: {' '.join(cmd[1:])}", flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)
    return load_metrics(demo, out)


def load_metrics(demo: str, folder: Path) -> dict[str, Any]:
    """A run's metrics.json (the monitor demo's with its trends added)."""
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    return with_trends(metrics) if demo == "monitor" else metrics


def report(claims: list[Claim], runs: dict[tuple[str, int | None], dict[str, Any]]) -> int:
    """Print one line per claim; the number of claims off, missing or stale."""
    bad = 0
    for c in claims:
        where = f"{c.doc}: “{c.quote}”"
        if stale(c):
            print(f"STALE    {where} (the text is no longer in the doc: update CLAIMS)")
            bad += 1
            continue
        m = runs.get((c.demo, c.seed))
        if m is None:
            continue  # not run this time (--demo)
        status, got, ci = check(c, m)
        shown = "–" if got is None else f"{got:.{c.digits}f}"
        if ci is not None:
            shown += f" [{ci[0]:.{c.digits}f}, {ci[1]:.{c.digits}f}]"
        print(
            f"{status.upper():8} {c.demo} seed {c.seed}: {c.path} quoted {c.value} measured {shown}  ({where})"
        )
        bad += status != "ok"
    return bad


POOLED_QUOTE = "+0.027 [+0.005, +0.049]"  # README and docs/sim.md: GRPO − filtered SFT, seeds 0–2


def pooled_difference(runs: list[dict[str, Any]], key: str = "grpo_minus_fsft") -> tuple[float, float, float]:
    """A paired difference pooled over seeds: the task-weighted mean, and a normal-approximation
    95 % interval from each seed's bootstrap interval (its half-width ÷ 1.96 as the standard
    error; seeds independent). ``(mean, low, high)``.

    >>> pooled_difference([{"n_eval_tasks": 100, "d": 0.1, "d_ci95": [0.0, 0.2]}] * 4, "d")
    (0.1, 0.05, 0.15)
    """
    n = [r["n_eval_tasks"] for r in runs]
    w = [k / sum(n) for k in n]
    mean = sum(wi * r[key] for wi, r in zip(w, runs, strict=True))
    se = (
        sum(
            (wi * (r[f"{key}_ci95"][1] - r[f"{key}_ci95"][0]) / (2 * 1.959964)) ** 2
            for wi, r in zip(w, runs, strict=True)
        )
        ** 0.5
    )
    return round(mean, 6), round(mean - 1.959964 * se, 6), round(mean + 1.959964 * se, 6)


def report_pooled(runs: dict[tuple[str, int | None], dict[str, Any]]) -> int:
    """Check the quoted pooled GRPO − filtered SFT against the three planner seeds' runs."""
    seeds = [runs.get(("planner", s)) for s in (0, 1, 2)]
    if any(r is None for r in seeds):
        return 0
    mean, lo, hi = pooled_difference([r for r in seeds if r is not None])
    shown = f"{mean:+.3f} [{lo:+.3f}, {hi:+.3f}]"
    docs = [d for d in ("README.md", SIM) if POOLED_QUOTE not in (ROOT / d).read_text(encoding="utf-8")]
    ok = shown == POOLED_QUOTE and not docs
    print(
        f"{'OK' if ok else 'OFF':8} planner seeds 0–2 pooled grpo_minus_fsft quoted {POOLED_QUOTE} measured {shown}"
        + (f" (not found in {', '.join(docs)})" if docs else "")
    )
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--demo", choices=sorted(DEMO_ARGS), action="append", help="only these demos (repeatable)"
    )
    ap.add_argument(
        "--from",
        dest="given",
        action="append",
        default=[],
        metavar="DEMO:SEED=DIR",
        help="use a finished run's DIR/metrics.json for (demo, seed) instead of running it",
    )
    ap.add_argument("--keep", type=Path, help="write the runs under this folder (default: a temporary one)")
    ap.add_argument(
        "--no-run", action="store_true", help="run nothing: compare only the runs given with --from"
    )
    a = ap.parse_args(argv)
    demos = set(a.demo or DEMO_ARGS)
    claims = [c for c in CLAIMS if c.demo in demos]
    runs: dict[tuple[str, int | None], dict[str, Any]] = {}
    for spec in a.given:
        key, _, folder = spec.partition("=")
        demo, _, seed = key.partition(":")
        runs[(demo, int(seed) if seed else None)] = load_metrics(demo, Path(folder))
    with tempfile.TemporaryDirectory() as tmp:
        base = a.keep or Path(tmp)
        for demo, seed in sorted(
            set() if a.no_run else {(c.demo, c.seed) for c in claims} - set(runs), key=str
        ):
            runs[(demo, seed)] = run_demo(demo, seed, base / f"{demo}-seed{seed}")
    bad = report(claims, runs) + (report_pooled(runs) if "planner" in demos else 0)
    print(f"{len(claims)} claims, {bad} off, missing or stale")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
