"""``groundrl bench``: reward-model benchmarks writing results.jsonl, metrics.json,
report.md and PNG plots."""

from __future__ import annotations

import json
from pathlib import Path

import typer

app = typer.Typer(
    help="Reward-model benchmarks: score-rm, pairwise-rm, planning; openeqa-format converts OpenEQA data.",
    no_args_is_help=True,
)

JB = typer.Option(..., "--judge-backend", help="openai | transformers.")
JM = typer.Option(..., "--judge-model", help="Model name (openai) or local path (transformers).")
JU = typer.Option(None, "--judge-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1.")
OUT = typer.Option(..., "-o", "--output", help="Output directory.")


def _backend(kind: str, model: str, url: str | None):
    from groundrl.judges import make_backend

    try:
        return make_backend(kind, model, url)
    except (ValueError, FileNotFoundError) as e:
        raise typer.BadParameter(str(e)) from e


def _read(data: Path, required: tuple[str, ...]) -> tuple[list, list]:
    """Items and the bad ones (reported here, skipped, and listed in metrics.json)."""
    from groundrl.benchmarks.runner import read_items

    items, bad = read_items(data, required)
    for b in bad:
        typer.echo(f"skipped line {b['line']}: {b['error']}", err=True)
    return items, bad


def _summary(metrics: dict, keys: tuple[str, ...], out: Path) -> None:
    shown = ", ".join(
        f"{k} {metrics[k]:.3f}" if isinstance(metrics.get(k), float) else f"{k} {metrics.get(k)}"
        for k in keys
    )
    typer.echo(
        f"{shown}; bad items skipped: {metrics.get('n_bad_items', 0)}; wrote {out}/metrics.json, report.md, results.jsonl"
    )


@app.command(
    "score-rm",
    help="Score-RM benchmark: items {id, question, frames?, reasoning, answer, gt_score, category?, source?}.",
)
def score_rm_cmd(
    data: Path = typer.Argument(..., exists=True),
    judge_backend: str = JB,
    judge_model: str = JM,
    judge_url: str | None = JU,
    output: Path = OUT,
    k: int = typer.Option(1, "--k", help="Samples per item (K > 1: test-time-scaling curves)."),
) -> None:
    from groundrl.benchmarks import score_rm
    from groundrl.judges.papers import EQARMEvaluator

    items, bad = _read(data, score_rm.REQUIRED)
    m = score_rm.run(
        items, EQARMEvaluator(_backend(judge_backend, judge_model, judge_url)), output, k=k, bad=bad
    )
    _summary(m, ("n", "accuracy", "rmse"), output)


@app.command(
    "pairwise-rm",
    help="Pairwise-RM benchmark: items {id, query, image?, response_1, response_2, preferred, category?, group?}.",
)
def pairwise_rm_cmd(
    data: Path = typer.Argument(..., exists=True),
    judge_backend: str = JB,
    judge_model: str = JM,
    judge_url: str | None = JU,
    output: Path = OUT,
    seed: int = typer.Option(0, "--seed", help="Seed of the presentation order."),
    rubrics_from: Path | None = typer.Option(
        None,
        "--rubrics-from",
        exists=True,
        help="Rubric transfer: results.jsonl of an earlier run whose rubrics this judge uses as the proxy agent.",
    ),
) -> None:
    from groundrl.benchmarks import pairwise_rm
    from groundrl.judges.papers import ProxyAgent, ProxyGRMPolicy

    items, bad = _read(data, pairwise_rm.REQUIRED)
    backend = _backend(judge_backend, judge_model, judge_url)
    judge = ProxyAgent(backend) if rubrics_from else ProxyGRMPolicy(backend)
    m = pairwise_rm.run(items, judge, output, seed=seed, rubrics_from=rubrics_from, bad=bad)
    _summary(m, ("n", "accuracy", "macro_accuracy", "acc_plus"), output)


@app.command(
    "planning",
    help="Planning P/R/F1 of predicted <actions> vs gold: a JSONL {id, gold, prediction} or the EmbodiedBrain set with --predictions.",
)
def planning_cmd(
    data: Path = typer.Argument(..., exists=True),
    output: Path = OUT,
    predictions: Path | None = typer.Option(
        None,
        "--predictions",
        exists=True,
        help="JSONL {id, prediction} (needed for the EmbodiedBrain .json set).",
    ),
) -> None:
    from groundrl.benchmarks import planning
    from groundrl.benchmarks.loaders import embodiedbrain_planning_items

    if data.suffix == ".json":
        items, bad = embodiedbrain_planning_items(data), []
    else:
        items, bad = _read(data, ("gold",))
    if predictions:
        preds = {
            str(json.loads(line)["id"]): json.loads(line).get("prediction", "")
            for line in predictions.read_text().splitlines()
            if line.strip()
        }
        for it in items:
            it["prediction"] = preds.get(str(it["id"]), it.get("prediction", ""))
    m = planning.run(items, output, bad=bad)
    typer.echo(
        f"n {m['n']}: quantity F1 {m['quantity_f1']['value']:.3f}, order F1 {m['order_f1']['value']:.3f}; wrote {output}"
    )


@app.command(
    "openeqa-format",
    help="OpenEQA questions + predictions + LLM-match scores (1-5 → 0-10) → score-rm items JSONL.",
)
def openeqa_cmd(
    questions: Path = typer.Argument(..., exists=True),
    predictions: Path = typer.Argument(..., exists=True),
    gold_scores: Path = typer.Argument(..., exists=True),
    output: Path = typer.Option(..., "-o", "--output"),
) -> None:
    from groundrl.benchmarks.loaders import openeqa_items

    items = openeqa_items(questions, predictions, gold_scores)
    output.write_text("".join(json.dumps(it) + "\n" for it in items))
    typer.echo(f"wrote {len(items)} score-rm items to {output}")
