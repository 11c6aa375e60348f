"""``groundrl demo``: the main job on built-in defaults — train a household planner from
scratch on simulator tasks (SFT on an imperfect teacher's plans, then multi-turn GRPO with
the environment in the loop) and report untrained / teacher / SFT / GRPO with confidence
intervals. ``--score-examples`` instead scores the bundled example files with every recipe."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from groundrl.cli.main import app
from groundrl.cli.monitor import named_demo
from groundrl.recipes import get_recipe, recipe_names
from groundrl.scoring import iter_jsonl_lines, score_records
from groundrl.summary import part_means, print_summary

DEMO_HELP = (
    "Train a small household planner from scratch and show environment RL lifting it past its teacher: "
    "an imperfect teacher (the expert with systematic mistakes) plays 1,000 generated training tasks, a "
    "small transformer is SFT-ed on its plans, then GRPO runs with the simulator in the loop (plan, "
    "EB-ALFRED feedback, re-plan) on four of the six task types; a success-filtered SFT baseline gets "
    "GRPO's budget of simulator-scored episodes. untrained / teacher / SFT / filtered SFT / GRPO are "
    "evaluated on up to 400 held-out tasks (--episodes; those repeating a training prompt are dropped), "
    "split into task types seen and never seen in RL, with bootstrap 95% CIs and the paired CIs of GRPO - "
    "SFT and GRPO - filtered SFT. Writes report.md, success.png (the result), reward_curve.png (training), "
    "metrics.json, action_map.json and the trained planner (planner/) into -o/--output. Measured on 2 CPU "
    "cores: about 9.5 CPU-minutes, 9.4 min wall at load 1.5 (docs/sim.md). --quick: about 70 s of CPU. "
    "Needs the train and sim extras "
    "(pip install 'groundrl[train,sim]'). Other demos: `groundrl demo rm`, `groundrl demo monitor` and `groundrl demo real-model` "
    "(each with its own --help)."
)
RM_HELP = (
    "EQA-RM's training story at toy scale, CPU only, no downloads: a tiny grader learns to score "
    "embodied-QA trajectories of a synthetic world. RFT data from an imperfect auxiliary evaluator "
    "(rejective filter, EQA-RM Eq. 1), SFT, then C-GRPO with shuffled-frame and masked-patch copies; "
    "evaluated on held-out episodes (format, accuracy |Δ| ≤ 2, sensitivity to shuffled / masked "
    "frames) for the evaluator, SFT and C-GRPO. Writes report.md, sensitivity.png, metrics.json, "
    "scores.jsonl and the graders into -o/--output (default runs/demo_rm). About 8 min on 2 CPU "
    "cores (docs/reward-models.md); --quick is a smoke run (every stage, nothing learned)."
)
MONITOR_HELP = (
    "The reward-hacking monitor on two GRPO runs, one with a hackable judge and one honest "
    "(groundrl.demos.monitor_demo): when the monitor first alarms, and when the hack dominates. "
    "Writes report.md, monitor_demo.png and metrics.json into -o/--output (default runs/demo_monitor)."
)


class _DemoGroup(TyperGroup):
    """``groundrl demo`` runs the planner demo; ``demo rm`` / ``demo monitor`` are named
    demos with their own options and help. An unknown name says which ones there are."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            raise typer.BadParameter(
                f"unknown demo {args[0]!r}; named demos: {', '.join(sorted(self.commands))}",
                ctx=ctx,
                param_hint="DEMO",
            )
        return super().resolve_command(ctx, args)


demo_app = typer.Typer(cls=_DemoGroup, invoke_without_command=True, help=DEMO_HELP)
app.add_typer(demo_app, name="demo")
QUICK_HELP = "A smoke run: every stage runs on a few tasks; nothing is expected to be learned"


@demo_app.callback()
def demo_cmd(
    ctx: typer.Context,
    output: Path = typer.Option(
        Path("runs/demo"), "-o", "--output", help="Output folder (created) for the demo's files."
    ),
    quick: bool = typer.Option(
        False, "--quick", help="A small run for smoke tests (300 training, 24 held-out tasks, 6 GRPO steps)."
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the tasks, the teacher's mistakes, the model and GRPO."
    ),
    steps: int | None = typer.Option(
        None, "--steps", min=0, help="GRPO steps (default 100; --quick 6). 0 skips GRPO."
    ),
    episodes: int | None = typer.Option(
        None,
        "--episodes",
        min=1,
        help="Held-out tasks each stage is evaluated on, one episode each (default 400; --quick 24).",
    ),
    score_examples: bool = typer.Option(
        False, "--score-examples", help="Only score the bundled examples with every recipe."
    ),
    planner: Path | None = typer.Option(
        None,
        "--planner",
        help="Evaluate a planner saved by an earlier run (RUN/planner) on that run's held-out tasks "
        "(--episodes: the first N) instead of training; writes planner_eval.json into -o/--output.",
    ),
) -> None:
    if ctx.invoked_subcommand is not None:  # `demo rm …` / `demo monitor …` run on their own
        return
    if score_examples:
        _score_examples(output)
        return
    _require_extras()
    if planner is not None:
        _evaluate_planner(planner, output, episodes)
        return
    # lazy: train.demo brings numpy, the simulator and the trainer's modules; `groundrl --help` must not
    from groundrl.demos.planner import DemoConfig, run_demo

    cfg = _demo_config(DemoConfig, quick, seed, {"grpo_steps": steps, "n_eval": episodes})
    metrics = run_demo(output, log=typer.echo, cfg=cfg)
    table = Table(title=f"groundrl demo: {metrics['n_eval_tasks']} held-out tasks (seed {seed})")
    for col in (
        "policy",
        "episode success [95% CI]",
        "types seen in RL",
        "types never in RL",
        "format valid",
    ):
        table.add_column(col)
    for k in ("untrained", "teacher", "sft", "grpo"):
        m = metrics[k]
        lo, hi = m["success_ci95"]
        parts = [m.get(f"success_rate_{g}") for g in ("rl_types", "new_types")]
        table.add_row(
            k,
            f"{m['success_rate']:.3f} [{lo:.3f}, {hi:.3f}]",
            *("–" if v is None else f"{v:.3f}" for v in parts),
            f"{m['format_valid']:.3f}",
        )
    Console().print(table)
    lo, hi = metrics["grpo_minus_sft_ci95"]
    typer.echo(
        f"GRPO - SFT episode success: {metrics['grpo_minus_sft']:+.3f} [{lo:+.3f}, {hi:+.3f}] (paired bootstrap 95% CI)"
    )
    files = ("report.md", "success.png", "reward_curve.png", "metrics.json", "action_map.json", "planner")
    typer.echo(f"wrote {', '.join(str(output / f) for f in files)} ({metrics['wall_seconds']} s)")


def _demo_config(cls: Any, quick: bool, seed: int, flags: dict[str, int | bool | None]) -> Any:
    """A demo's config from its defaults (or ``cls.quick()``), the seed and the flags the
    user gave (``None``: not given); a refused value is a usage error naming it."""
    over = {"seed": seed, **{k: v for k, v in flags.items() if v is not None}}
    try:
        return cls.quick(**over) if quick else cls(**over)
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None


@demo_app.command("rm", help=RM_HELP)
def rm_cmd(
    output: Path = typer.Option(
        Path("runs/demo_rm"), "-o", "--output", help="Output folder (created) for the demo's files."
    ),
    quick: bool = typer.Option(
        False, "--quick", help=QUICK_HELP + " (48 training, 16 held-out episodes, 2 C-GRPO steps)."
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the episodes, the evaluator's mistakes, the graders and C-GRPO."
    ),
    steps: int | None = typer.Option(
        None, "--steps", min=0, help="C-GRPO steps (default 80; --quick 2). 0 skips C-GRPO."
    ),
    episodes: int | None = typer.Option(
        None,
        "--episodes",
        min=1,
        help="Held-out episodes every grader is evaluated on (default 300; --quick 16).",
    ),
    ablation: bool = typer.Option(
        True,
        "--ablation/--no-ablation",
        help="Also run C-GRPO with μ = 0 from the same SFT grader (EQA-RM Table 3's control) and "
        "report C-GRPO − μ = 0 with paired intervals (about a third more time).",
    ),
) -> None:
    _require_extras()
    # lazy: the demo's training modules load only when the demo runs, not at `groundrl --help`
    from groundrl.demos.rm_demo import RMDemoConfig, run_rm_demo
    from groundrl.demos.rm_demo_report import headline

    cfg = _demo_config(
        RMDemoConfig, quick, seed, {"cgrpo_steps": steps, "n_eval": episodes, "ablation_mu0": ablation}
    )
    m = run_rm_demo(output, cfg, log=typer.echo)
    typer.echo("\n".join(headline(m)))
    files = ("report.md", "sensitivity.png", "metrics.json", "scores.jsonl", "sft", "cgrpo-final")
    typer.echo(
        f"wrote {', '.join(str(output / f) for f in files if (output / f).exists())} ({m['wall_seconds']} s)"
    )


@demo_app.command("monitor", help=MONITOR_HELP)
def monitor_cmd(
    output: Path = typer.Option(
        Path("runs/demo_monitor"), "-o", "--output", help="Output folder (created) for the demo's files."
    ),
    quick: bool = typer.Option(False, "--quick", help="A smaller, faster run for smoke tests."),
) -> None:
    named_demo("monitor", output, quick)


REAL_MODEL_HELP = (
    "A real pretrained model learns household planning on CPU (groundrl.demos.real_model): zero-shot, "
    "SFT on an imperfect teacher's numbered plans, then GRPO with the simulator scoring every "
    "completion; evaluated on held-out tasks that share no prompt with training, with paired 95% CIs "
    "(GRPO - SFT, SFT - zero-shot). Writes report.md, success.png, reward_curve.png, metrics.json and "
    "the logs (rollouts.jsonl, episodes.jsonl, prompts.json) into -o/--output. Times and loads measured: "
    "docs/sim.md."
)


@demo_app.command("real-model", help=REAL_MODEL_HELP)
def real_model_cmd(
    model: str = typer.Option(
        "smollm2-135m-instruct", "--model", help="A text-only causal LM: a local folder or a fixture name."
    ),
    output: Path = typer.Option(
        Path("runs/demo_real_model"), "-o", "--output", help="Output folder (created) for the demo's files."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the tasks, the teacher's mistakes and GRPO."),
    steps: int | None = typer.Option(
        None, "--steps", min=0, help="GRPO steps (default 25; --quick 1). 0 skips GRPO."
    ),
    quick: bool = typer.Option(False, "--quick", help=QUICK_HELP + " (16 training, 4 held-out tasks)."),
) -> None:
    _require_extras()
    # lazy: the demo loads torch, transformers and TRL only when it runs
    from groundrl.demos.real_model import RealModelConfig, check_model, run_real_model_demo
    from groundrl.demos.real_model_report import headline

    try:
        check_model(model)
    except ValueError as e:  # not a text-only causal LM, or nothing readable there
        raise typer.BadParameter(str(e), param_hint="--model") from None
    cfg = _demo_config(RealModelConfig, quick, seed, {"grpo_steps": steps})
    cfg.model = model
    m = run_real_model_demo(output, cfg, log=typer.echo)
    typer.echo("\n".join(headline(m)))
    typer.echo(f"wrote {output}/report.md, success.png, reward_curve.png, metrics.json")


def _evaluate_planner(planner: Path, output: Path, episodes: int | None) -> None:
    # lazy: train.demo brings numpy, the simulator and the trainer's modules; `groundrl --help` must not
    from groundrl.demos.planner import evaluate_saved_planner

    try:
        m = evaluate_saved_planner(planner, episodes, log=typer.echo)
    except FileNotFoundError as e:
        raise typer.BadParameter(str(e), param_hint="--planner") from None
    output.mkdir(parents=True, exist_ok=True)
    (output / "planner_eval.json").write_text(json.dumps(m, indent=2) + "\n")
    lo, hi = m["success_ci95"]
    typer.echo(
        f"episode success {m['success_rate']:.3f} [{lo:.3f}, {hi:.3f}] on {m['n_eval_tasks']} held-out tasks "
        f"(types seen in RL {m['success_rate_rl_types']}, never in RL {m['success_rate_new_types']}); "
        f"format valid {m['format_valid']:.3f}; wrote {output / 'planner_eval.json'}"
    )


def _require_extras() -> None:
    """The demo needs the ``train`` and ``sim`` extras: say which is missing, not a traceback."""
    missing = [
        m for m in ("torch", "transformers", "trl", "gymnasium") if importlib.util.find_spec(m) is None
    ]
    if missing:
        typer.echo(
            f"groundrl demo needs {', '.join(missing)}: install the extras with pip install 'groundrl[train,sim]'",
            err=True,
        )
        raise typer.Exit(2)


def _score_examples(output: Path) -> None:
    """Every registered recipe (plugins too) on the examples it carries (``Recipe.examples``);
    a recipe without examples is named and skipped."""
    output.mkdir(parents=True, exist_ok=True)
    summary = {}
    for name in recipe_names():
        recipe = get_recipe(name)
        examples = recipe.example_samples()
        if not examples:
            typer.echo(f"{name}: no examples (Recipe.examples); skipped")
            continue
        rubric = recipe.rubric(**recipe.example_options)
        lines = [json.dumps(ex) for ex in examples]
        results = list(score_records(recipe, rubric, iter_jsonl_lines(lines)))
        rubric.close()
        with (output / f"{name}.scores.jsonl").open("w", encoding="utf-8") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
        print_summary(name, rubric.names, results, err=False)
        summary[name] = {k: v[0] for k, v in part_means(rubric.names, results).items()}
    (output / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    typer.echo(f"wrote {output}/<recipe>.scores.jsonl and {output}/summary.json")
