"""``groundrl curate PIPELINE IN.jsonl -o OUT.jsonl``: streaming, resumable data curation."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(
    help="Curate SFT/RL data: verifier-filter, rejective, consensus, mask-difficulty, decompose. Reruns skip ids already in the output.",
    no_args_is_help=True,
)
IN = typer.Argument(..., exists=True, dir_okay=False, help="Input JSONL.")
OUT = typer.Option(..., "-o", "--output", help="Output JSONL (appended; existing ids are skipped).")


def _report(counts) -> None:
    done = counts.pop("skipped_already_done", 0)
    typer.echo(
        f"{sum(counts.values())} written ({done} already done): "
        + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))
    )


@app.command(
    "verifier-filter",
    help="Argos: keep a sample when its best rollout scores ≥ --threshold with a right outcome. Records {id, question, answer, rollouts, masks?/boxes?, frames?}.",
)
def verifier_filter_cmd(
    inp: Path = IN,
    output: Path = OUT,
    threshold: float = typer.Option(0.7, "--threshold"),
    tau: float = typer.Option(0.5, "--tau", help="Accuracy gate."),
    judge_backend: str | None = typer.Option(None, "--judge-backend"),
    judge_model: str | None = typer.Option(None, "--judge-model"),
    judge_url: str | None = typer.Option(None, "--judge-url"),
) -> None:
    from groundrl.curate.pipelines import run
    from groundrl.curate.verifier_filter import verifier_filter
    from groundrl.verify import AgenticVerifier

    backend = None
    if judge_backend:
        from groundrl.judges import make_backend

        backend = make_backend(judge_backend, judge_model, judge_url)
    v = AgenticVerifier(backend, tau=tau)
    _report(run(inp, output, lambda r: verifier_filter(r, v, threshold), "reason"))


@app.command(
    "rejective",
    help="EQA-RM Eq. 1: keep evaluations with |s_gt - s| < tau unless all are correct. Records {id, gt_score, evaluations: [{critique, score}]}.",
)
def rejective_cmd(inp: Path = IN, output: Path = OUT, tau: float = typer.Option(2.0, "--tau")) -> None:
    from groundrl.curate import rejective_filter
    from groundrl.curate.pipelines import run

    if tau <= 0:
        raise typer.BadParameter("--tau must be > 0")
    _report(run(inp, output, lambda r: rejective_filter(r, tau), "reason"))


@app.command(
    "consensus",
    help="EmbodiedBrain: categories A/B/C/D from k baseline answers and a stronger model; D dropped, --keep-a of A kept. Records {id, gold, answers, strong_answer?}.",
)
def consensus_cmd(
    inp: Path = IN,
    output: Path = OUT,
    keep_a: float = typer.Option(0.2, "--keep-a"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    from groundrl.curate import consensus
    from groundrl.curate.pipelines import run

    _report(run(inp, output, lambda r: consensus(r, keep_a, seed), "category"))


@app.command(
    "mask-difficulty",
    help="EmbodiedBrain: accuracy under pixel masking 0.0..0.9 (K repeats) and the failure threshold lambda*. Records {id, image, question, answer}; needs a judge model to answer.",
)
def mask_difficulty_cmd(
    inp: Path = IN,
    output: Path = OUT,
    k: int = typer.Option(10, "--k"),
    seed: int = typer.Option(0, "--seed"),
    judge_backend: str = typer.Option(..., "--judge-backend"),
    judge_model: str = typer.Option(..., "--judge-model"),
    judge_url: str | None = typer.Option(None, "--judge-url"),
) -> None:
    from groundrl.curate import mask_difficulty
    from groundrl.curate.pipelines import run
    from groundrl.judges import SamplingParams, make_backend
    from groundrl.rewards.outcome import outcome

    backend = make_backend(judge_backend, judge_model, judge_url)

    def answer_fn(img, sample) -> bool:
        req = [
            {
                "role": "user",
                "content": [
                    {"type": "image", "image": img},
                    {"type": "text", "text": str(sample["question"])},
                ],
            }
        ]
        g = backend.generate([req], SamplingParams(max_tokens=64))[0]
        return g.ok and outcome(g.text, sample["answer"]).value == 1.0

    _report(run(inp, output, lambda r: mask_difficulty(r, answer_fn, k=k, seed=seed), "lambda_star"))


@app.command(
    "decompose",
    help="Reinforced Reasoning: a trajectory of T actions → T per-step samples. Records {id, instruction, actions, observations?}.",
)
def decompose_cmd(inp: Path = IN, output: Path = OUT) -> None:
    from groundrl.curate import decompose
    from groundrl.curate.pipelines import _repair, done_ids, run

    _repair(output)
    written = done_ids(output)  # step ids: a record cut mid-way gets only its missing steps

    def fn(r):
        return [s for s in decompose(r) if s["id"] not in written]

    _report(run(inp, output, fn, None))
