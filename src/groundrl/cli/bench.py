"""``groundrl bench``: reward-model and planning benchmarks writing results.jsonl,
metrics.json, report.md and PNG plots into one output folder."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from groundrl.cli.recipe_options import judge_command, need_judge, open_judge
from groundrl.io import JsonlError, SameFileError, atomic_output, check_output, iter_lines, write_rows
from groundrl.judges.config import JudgeConfig
from groundrl.run_params import ParamsChanged, guard

if TYPE_CHECKING:
    from groundrl.benchmarks.records import BadLine

app = typer.Typer(
    help=(
        "Benchmarks of reward models, judges and planners (the commands below). build-eqa builds an "
        "EQARewardBench-style set from OpenEQA, openeqa-format converts OpenEQA predictions to score-rm items. Datasets are "
        "read in their published layouts (see docs/benchmarks.md). Each benchmark reads INPUT and writes results.jsonl, metrics.json (raw values), report.md "
        "(rounded, every metric defined) and PNGs into the folder -o/--output. Exit status 1 when the "
        "result would be meaningless: no usable item, every judge call failed, no parseable judge "
        "output, or no prediction matching an item."
    ),
    no_args_is_help=True,
)

OUT = typer.Option(
    ...,
    "-o",
    "--output",
    help="Output folder (created): results.jsonl, metrics.json, report.md and the PNGs.",
)
LIMIT = typer.Option(None, "--limit", min=1, help="Use only the first N usable items (for a quick look).")
# options two benchmarks share, declared once (issue 40 item 2)
SCALAR_RM_DEVICE = typer.Option(None, "--scalar-rm-device", help="Device of --scalar-rm.")
MAX_JUDGE_FAILURES = typer.Option(
    0.1,
    "--max-judge-failures",
    min=0.0,
    max=1.0,
    help="Exit 1 (after writing the files) when more than this share of judge calls failed "
    "(default 0.1): an outage is not a result.",
)


def _input(help: str, metavar: str = "INPUT") -> Any:
    return typer.Argument(..., metavar=metavar, exists=True, dir_okay=False, readable=True, help=help)


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _read(data: Path, required: tuple[str, ...], limit: int | None) -> tuple[list, list]:
    """Usable items and the bad ones (reported here, skipped, listed in metrics.json);
    exits 1 when no item is usable."""
    # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
    from groundrl.benchmarks.runner import read_items

    items, bad = read_items(data, required)
    for b in bad:
        typer.echo(f"skipped line {b['line']}: {b['error']}", err=True)
    if not items:
        _fail(
            f"no usable item in {data} ({len(bad)} bad lines skipped); each line needs the fields "
            f"{', '.join(required)}"
        )
    return (items[:limit] if limit else items), bad


def _check_judge(metrics: dict, what: str) -> None:
    """Exit 1 (after the files are written, for inspection) when every judge call failed."""
    j = metrics.get("judge") or {}
    if j.get("calls") and j.get("failures") == j.get("calls"):
        _fail(
            f"all {j['calls']} judge calls failed (is the judge reachable? see `error` in results.jsonl); "
            f"the {what} are meaningless"
        )


def _check_failure_rate(metrics: dict, limit: float) -> None:
    """Exit 1 (after the files are written) when the share of items whose judge call
    failed is over ``limit`` (--max-judge-failures): such a run measures the outage."""
    rate = metrics.get("judge_failure_rate")
    if rate is not None and rate > limit:
        _fail(
            f"{metrics['n_judge_failures']} of {metrics['n']} judge calls failed ({rate:.1%} > "
            f"--max-judge-failures {limit:.1%}); accuracy over the answered items is "
            f"{metrics.get('accuracy_answered')}; see `error` / `raw` in results.jsonl"
        )


def _wrote(out: Path, metrics: dict) -> None:
    typer.echo("wrote " + ", ".join(str(out / n) for n in metrics.get("files", [])))


@app.command(
    "score-rm",
    help=(
        "Score-RM benchmark (EQA-RM): the judge scores each trajectory 0-10; accuracy (|Δ| ≤ 2) and RMSE "
        "against gold_score, overall, by source and by category. INPUT: JSONL items "
        "{id, question, frames?, reasoning, answer, gt_score, category?, source?}, e.g. items.jsonl / "
        "test.jsonl from `bench build-eqa` or the output of `bench openeqa-format`."
    ),
)
@judge_command
def score_rm_cmd(
    input: Path = _input(
        "JSONL of score-rm items (see above); `bench openeqa-format` makes them from OpenEQA."
    ),
    output: Path = OUT,
    k: int = typer.Option(
        1, "--k", min=1, help="Samples per item (K > 1: test-time-scaling curve, tts.png)."
    ),
    limit: int | None = LIMIT,
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap CIs (and of the sampling when K > 1)."),
    aggregate: str = typer.Option(
        "vote",
        "--aggregate",
        help="How K samples become one score: vote, mean, or both (vote headline; a curve each, from the "
        "same samples).",
    ),
    scalar_rm: Path | None = typer.Option(
        None,
        "--scalar-rm",
        exists=True,
        file_okay=False,
        help="A local sequence-classification reward model (checkpoint folder) scored beside the judge as "
        "a baseline: 10*sigmoid(reward) on the 0-10 scale, Spearman with gold; text only.",
    ),
    scalar_rm_device: str | None = SCALAR_RM_DEVICE,
    max_judge_failures: float = MAX_JUDGE_FAILURES,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: benchmarks.score_rm brings numpy and orjson; loaded only when this runs
    from groundrl.benchmarks import score_rm
    from groundrl.judges.papers import EQARMEvaluator

    if aggregate not in ("vote", "mean", "both"):
        raise typer.BadParameter("choose vote, mean or both", param_hint="--aggregate")
    methods = ["vote", "mean"] if aggregate == "both" else [aggregate]
    items, bad = _read(input, score_rm.REQUIRED, limit)
    judge = need_judge(judge)
    with open_judge(judge) as backend:
        srm = None
        if scalar_rm is not None:
            # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
            from groundrl.benchmarks.scalar_rm import ScalarRM

            srm = ScalarRM(str(scalar_rm), device=scalar_rm_device)
        m = score_rm.run(
            items,
            EQARMEvaluator(backend, judge.sampling()),
            output,
            k=k,
            bad=bad,
            seed=seed,
            aggregate=methods,
            scalar_rm=srm,
        )
    typer.echo(score_rm.summary(m))
    _wrote(output, m)
    _check_judge(m, "accuracy and RMSE")
    _check_failure_rate(m, max_judge_failures)
    if m["n_missing"] == m["n"]:
        _fail(f"no judge output had a parseable <score> ({m['n']} items); see `raw` in results.jsonl")


FORMAT_HELP = (
    "Layout of INPUT: auto (detected from its fields), jsonl (ours), vl-rewardbench (parquet file or "
    "folder, or JSONL: id, query, response[2], image, human_ranking, query_source), multimodal-rewardbench "
    "(data/all_data.json: ID, Text, Image, Output1, Output2, Better, Category), mm-rlhf-rewardbench (JSONL "
    "or parquet: id, prompt, chosen, rejected, image|video)."
)
FORMAT = typer.Option("auto", "--format", help=FORMAT_HELP)
PARSE_HELP = (
    "How a verdict is read: strict (ours: exactly one of 1/2 in <answer>, else wrong), released (the "
    "released Proxy-GRM script for --format: fall back to the last 1/2 in the text, ...), or both "
    "(strict headline, released beside it, with the number of pairs where they differ)."
)


def _parse_list(parse: str) -> list[str]:
    if parse == "both":
        return ["strict", "released"]
    if parse not in ("strict", "released"):
        raise typer.BadParameter("choose strict, released or both", param_hint="--parse")
    return [parse]


def _load_pairwise(
    input: Path, fmt: str, image_root: Path | None, limit: int | None
) -> tuple[str, list, list]:
    # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
    from groundrl.benchmarks.datasets import PAIRWISE_FORMATS, load_pairwise

    if fmt != "auto" and fmt not in PAIRWISE_FORMATS:
        raise typer.BadParameter(
            f"choose auto or one of {', '.join(PAIRWISE_FORMATS)}", param_hint="--format"
        )
    try:
        fmt, items, bad = load_pairwise(input, fmt, image_root)
    except (ValueError, OSError) as e:
        _fail(f"cannot read {input} as {fmt}: {e}")
    for b in bad[:20]:
        typer.echo(f"skipped row {b.get('row')} ({b.get('id')}): {b['error']}", err=True)
    if len(bad) > 20:
        typer.echo(f"... and {len(bad) - 20} more bad rows (all listed in metrics.json)", err=True)
    if not items:
        _fail(
            f"no usable item in {input} as {fmt} ({len(bad)} bad rows skipped); see `bench pairwise-rm --help`"
        )
    typer.echo(f"{fmt}: {len(items)} pairs loaded, {len(bad)} rows not loaded", err=True)
    return fmt, (items[:limit] if limit else items), bad


@app.command(
    "pairwise-rm",
    help=(
        "Pairwise-RM benchmark (Proxy-GRM): the judge (or --scalar-rm) picks the better of two responses; "
        "accuracy, macro accuracy over categories and Acc+ over groups. INPUT: our JSONL items "
        "{id, query, image?, response_1, response_2, preferred: 1|2, category?, group?}, or a dataset in its "
        "published layout (--format). Categories: VL-RewardBench general/hallucination/reasoning from "
        "query_source (macro over them as its paper); Multimodal RewardBench its Category (safety and "
        "reasoning split by ID); MM-RLHF mcq/long/short/safety/video from the media path, Acc+ per id."
    ),
)
@judge_command
def pairwise_rm_cmd(
    input: Path = typer.Argument(
        ...,
        metavar="INPUT",
        exists=True,
        readable=True,
        help="Items file, or a folder of VL-RewardBench parquet files.",
    ),
    output: Path = OUT,
    fmt: str = FORMAT,
    image_root: Path | None = typer.Option(
        None,
        "--image-root",
        exists=True,
        file_okay=False,
        help="Folder that relative image paths are under (default: the folder of INPUT).",
    ),
    parse: str = typer.Option("strict", "--parse", help=PARSE_HELP),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the presentation order (swaps) and the bootstrap CIs."
    ),
    limit: int | None = LIMIT,
    rubrics_from: Path | None = typer.Option(
        None,
        "--rubrics-from",
        exists=True,
        dir_okay=False,
        help="Rubric transfer: results.jsonl of an earlier run whose rubrics this judge uses as the proxy agent.",
    ),
    scalar_rm: Path | None = typer.Option(
        None,
        "--scalar-rm",
        exists=True,
        file_okay=False,
        help="A local sequence-classification reward model (checkpoint folder) instead of a judge: the "
        "higher reward wins (text only; images are not given to it).",
    ),
    scalar_rm_device: str | None = SCALAR_RM_DEVICE,
    proxy_verify: bool = typer.Option(
        False,
        "--proxy-verify/--no-proxy-verify",
        help="Proxy-verified inference (Proxy-GRM): a proxy agent on the same judge, given only each "
        "verdict's rubric, votes too; agreement and accuracy when both agree are reported.",
    ),
    max_judge_failures: float = MAX_JUDGE_FAILURES,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: benchmarks.pairwise_rm brings numpy and orjson; loaded only when this runs
    from groundrl.benchmarks import pairwise_rm

    protocols = _parse_list(parse)
    _check_pairwise_flags(input, fmt, protocols, proxy_verify, scalar_rm, rubrics_from, judge)
    fmt, items, bad = _load_pairwise(input, fmt, image_root, limit)
    with open_judge(judge, required=scalar_rm is None) as backend:
        grm = _pairwise_grm(backend, judge, scalar_rm, scalar_rm_device, rubrics_from)
        m = pairwise_rm.run(
            items,
            grm,
            output,
            seed=seed,
            rubrics_from=rubrics_from,
            bad=bad,
            parse=protocols,
            dataset=fmt,
            proxy_verify=proxy_verify,
        )
    typer.echo(pairwise_rm.summary(m))
    _wrote(output, m)
    _check_judge(m, "accuracies")
    _check_failure_rate(m, max_judge_failures)
    if m["unparseable"] == m["n"]:
        _fail(f"no verdict could be read ({m['n']} pairs); see `raw` in results.jsonl")


def _check_pairwise_flags(
    input: Path,
    fmt: str,
    protocols: list[str],
    proxy_verify: bool,
    scalar_rm: Path | None,
    rubrics_from: Path | None,
    judge: JudgeConfig | None,
) -> None:
    """Refuse pairwise-rm flag combinations that cannot run together (usage errors)."""
    if proxy_verify and (scalar_rm is not None or rubrics_from is not None):
        raise typer.BadParameter(
            "--proxy-verify checks a GRM's own rubrics: drop --scalar-rm / --rubrics-from"
        )
    if scalar_rm is not None and (judge is not None or rubrics_from is not None):
        raise typer.BadParameter("--scalar-rm replaces the judge: drop --judge-* / --rubrics-from")
    if rubrics_from is not None and protocols != ["strict"]:
        raise typer.BadParameter(
            "rubric transfer reads verdicts with --parse strict only", param_hint="--parse"
        )
    if input.is_dir() and fmt not in ("auto", "vl-rewardbench"):
        raise typer.BadParameter(
            "a folder INPUT is a folder of VL-RewardBench parquet files", param_hint="INPUT"
        )


def _pairwise_grm(
    backend: Any,
    judge: JudgeConfig | None,
    scalar_rm: Path | None,
    scalar_rm_device: str | None,
    rubrics_from: Path | None,
) -> Any:
    """The scalar RM, or the judge as a Proxy-GRM policy (a proxy agent for rubric transfer)."""
    if scalar_rm is not None:
        # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
        from groundrl.benchmarks.scalar_rm import ScalarRM

        return ScalarRM(str(scalar_rm), device=scalar_rm_device)
    # lazy: the paper judges load when the command runs
    from groundrl.judges.papers import ProxyAgent, ProxyGRMPolicy

    # open_judge required the judge when there is no scalar RM
    return (ProxyAgent if rubrics_from else ProxyGRMPolicy)(backend, need_judge(judge).sampling())


PLANNING_IDS = (
    "Prediction ids: a JSONL set uses each item's `id`; the EmbodiedBrain .json set has none, so its "
    "items are eb-0, eb-1, … (0-based position in the file)."
)


@app.command(
    "planning",
    help=(
        "Planning P/R/F1 (EmbodiedBrain) of predicted <actions> against gold. INPUT: a JSONL "
        "{id, gold, prediction?} or the EmbodiedBrain .json set; predictions come from the items or from "
        "--predictions. "
        + PLANNING_IDS
        + " With --judge-* the LLM action matcher of EmbodiedBrain's released "
        "evaluation (one batched judge request per distinct predicted action and gold list; --judge-cache "
        "makes reruns free) is reported beside the exact matcher. Exit 1 when no item has a prediction."
    ),
)
@judge_command
def planning_cmd(
    input: Path = _input("JSONL of {id, gold, prediction?} items, or the EmbodiedBrain .json planning set."),
    output: Path = OUT,
    predictions: Path | None = typer.Option(
        None,
        "--predictions",
        exists=True,
        dir_okay=False,
        help="JSONL of {id, prediction} (required for the .json set; ids as above).",
    ),
    limit: int | None = LIMIT,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: benchmarks.planning brings numpy and orjson; loaded only when this runs
    from groundrl.benchmarks import planning
    from groundrl.benchmarks.loaders import embodiedbrain_planning_items

    bad: list[BadLine] = []  # the EmbodiedBrain set has none
    if input.suffix == ".json":
        if predictions is None:
            raise typer.BadParameter(
                f"the EmbodiedBrain set holds no predictions: pass --predictions. {PLANNING_IDS}",
                param_hint="--predictions",
            )
        items = embodiedbrain_planning_items(input)
        items = items[:limit] if limit else items
    else:
        items, bad = _read(input, ("gold",), limit)
    if predictions:
        preds = _read_predictions(predictions)
        matched = [it for it in items if str(it["id"]) in preds]
        if not matched:
            _fail(
                f"no prediction id matches an item: items are {_ids(it['id'] for it in items)}, "
                f"{predictions.name} has {_ids(preds)}. {PLANNING_IDS}"
            )
        for it in items:
            it["prediction"] = preds.get(str(it["id"]), it.get("prediction", ""))
        if len(matched) < len(items):
            typer.echo(
                f"warning: {len(items) - len(matched)} of {len(items)} items have no prediction (scored 0)",
                err=True,
            )
    elif not any(it.get("prediction") for it in items):
        _fail(f"no item in {input.name} has a `prediction`; add them or pass --predictions. {PLANNING_IDS}")
    with open_judge(judge, required=False) as backend:
        matcher = None
        if backend is not None:
            # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
            from groundrl.benchmarks.action_matcher import LLMActionMatcher

            matcher = LLMActionMatcher(backend, need_judge(judge).sampling())  # a backend comes from a judge
        m = planning.run(items, output, bad=bad, llm_matcher=matcher)
    typer.echo(planning.summary(m))
    _wrote(output, m)
    _check_judge(m, "LLM-matched scores")
    if matcher is not None and matcher.calls and matcher.failures + matcher.unreadable == matcher.calls:
        _fail(
            f'none of the {matcher.calls} matcher answers could be read (expected JSON {{"matches": [...]}}); '
            "the LLM-matched scores equal the exact ones"
        )


def _read_predictions(path: Path) -> dict[str, object]:
    """``{id: prediction}`` of a JSONL of ``{id, prediction}`` lines (passed through as given)."""
    preds: dict[str, object] = {}
    for line in iter_lines(path):
        if line.problem or "id" not in line.value:
            bad = JsonlError(
                path.name, line.number, line.problem or "no `id`", "write {id, prediction} per line"
            )
            raise typer.BadParameter(str(bad), param_hint="--predictions")
        preds[str(line.value["id"])] = line.value.get("prediction", "")
    return preds


def _ids(ids: Any, show: int = 3) -> str:
    ids = [str(i) for i in ids]
    head = ", ".join(ids[:show]) + (", …" if len(ids) > show else "")
    return f"{len(ids)} ids ({head})" if ids else "no ids"


@app.command(
    "openeqa-format",
    help=(
        "OpenEQA questions (open-eqa-v0.json) + predictions + LLM-match scores (1-5 → 0-10) → score-rm items "
        "JSONL. With --frames-root (OpenEQA's data/frames: <root>/<episode_history>/*-rgb.png) each item gets "
        "--keyframes uniform frames; items whose episode has no frames are reported and left out."
    ),
)
def openeqa_cmd(
    questions: Path = _input("OpenEQA questions file (open-eqa-v0.json).", "QUESTIONS"),
    predictions: Path = _input("Predictions: a JSON list of {question_id, answer}.", "PREDICTIONS"),
    gold_scores: Path = _input("LLM-match metrics: a JSON object {question_id: 1..5}.", "GOLD_SCORES"),
    output: Path = typer.Option(
        ..., "-o", "--output", help="Output JSONL file of score-rm items (its folder is created)."
    ),
    frames_root: Path | None = typer.Option(
        None, "--frames-root", exists=True, file_okay=False, help="OpenEQA episode frames root (data/frames)."
    ),
    keyframes: int = typer.Option(5, "--keyframes", min=1, help="Frames per item, spread uniformly."),
) -> None:
    # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
    from groundrl.benchmarks.loaders import openeqa_items

    try:
        check_output(output, questions, predictions, gold_scores)  # before anything is written
    except SameFileError as e:
        raise typer.BadParameter(str(e), param_hint="-o/--output") from None
    items = openeqa_items(questions, predictions, gold_scores)
    if not items:
        _fail(
            "no question has both a prediction and an LLM-match score; check the three files belong together"
        )
    if frames_root is not None:
        # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
        from groundrl.benchmarks.datasets import load_openeqa

        with_frames, bad = load_openeqa(questions, frames_root, keyframes)
        frames = {q["question_id"]: q["frames"] for q in with_frames}
        missing = [it["id"] for it in items if it["id"] not in frames]
        for it in items:
            it["frames"] = frames.get(it["id"])
        items = [it for it in items if it["frames"]]
        if missing:
            typer.echo(f"{len(missing)} items have no frames under {frames_root}: {_ids(missing)}", err=True)
        if not items:
            _fail(f"no item has frames under {frames_root} (expected <root>/<episode_history>/*-rgb.png)")
    with atomic_output(output) as f:  # whole or not at all
        write_rows(f, items)
    typer.echo(f"{len(items)} score-rm items\nwrote {output}")


@app.command(
    "judge-reliability",
    help=(
        "How far a judge can be trusted. On a pairwise set (any --format of pairwise-rm): every pair in both "
        "orders, K samples each: first-slot rate (position bias), swap agreement, accuracy in both orders, "
        "self-consistency across K. On score-rm items (JSONL with gt_score): calibration table and plot "
        "(predicted-score bins against gold) and the spread of K samples. Rates with n and 95% CIs; writes "
        "reliability.png or calibration.png."
    ),
)
@judge_command
def judge_reliability_cmd(
    input: Path = typer.Argument(
        ...,
        metavar="INPUT",
        exists=True,
        readable=True,
        help="Pairwise items (any layout) or score-rm JSONL items.",
    ),
    output: Path = OUT,
    fmt: str = FORMAT,
    image_root: Path | None = typer.Option(
        None, "--image-root", exists=True, file_okay=False, help="Folder that relative image paths are under."
    ),
    k: int = typer.Option(
        1,
        "--k",
        min=1,
        help="Samples per presentation (K > 1: self-consistency; temperature 0.8 unless --judge-temperature).",
    ),
    parse: str = typer.Option("strict", "--parse", help="strict or released (see pairwise-rm)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sampling and the bootstrap CIs."),
    limit: int | None = LIMIT,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
    from groundrl.benchmarks import reliability
    from groundrl.benchmarks.datasets import detect_format

    if parse not in ("strict", "released"):
        raise typer.BadParameter("choose strict or released", param_hint="--parse")
    kind = fmt
    if fmt in ("auto", "jsonl") and not input.is_dir():
        kind = detect_format(input) if fmt == "auto" else "jsonl"
    score_items = False
    if kind == "jsonl":
        # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
        from groundrl.benchmarks.runner import read_items

        probe, _ = read_items(input, ())
        score_items = bool(probe) and all("gt_score" in it for it in probe)
    judge = need_judge(judge)
    with open_judge(judge) as backend:
        if score_items:
            # lazy: benchmarks.score_rm brings numpy and orjson; loaded only when this runs
            from groundrl.benchmarks import score_rm

            items, bad = _read(input, score_rm.REQUIRED, limit)
            m = reliability.scores(items, backend, output, k=k, seed=seed, params=judge.sampling(), bad=bad)
        else:
            fmt, items, bad = _load_pairwise(input, fmt, image_root, limit)
            m = reliability.pairwise(
                items,
                backend,
                output,
                k=k,
                seed=seed,
                params=judge.sampling(),
                parse=parse,
                dataset=fmt,
                bad=bad,
            )
    typer.echo(reliability.summary(m))
    _wrote(output, m)
    _check_judge(m, "reliability figures")


def _policy(judge: JudgeConfig, model: str, url: str, api_key_env: str) -> Any:
    """The policy model's backend for build-eqa (the judge's concurrency, timeout and
    retries); ``with`` closes it."""
    try:
        return JudgeConfig(
            backend="openai",
            model=model,
            url=url,
            api_key_env=api_key_env,
            concurrency=judge.concurrency,
            timeout=judge.timeout,
            retries=judge.retries,
        ).make_backend()
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--policy-*") from e


@app.command(
    "build-eqa",
    help=(
        "Build an EQARewardBench-style score-rm set from OpenEQA. QUESTIONS: open-eqa-v0.json (question, "
        "answer, category, question_id, episode_history). --frames-root: OpenEQA's data/frames folder, frames "
        "at <root>/<episode_history>/*-rgb.png (any .png/.jpg when there are no -rgb files). For each question: "
        "--keyframes uniform frames; --responses sampled answers with step-by-step reasoning (<think>, "
        "<answer>) and --incorrect answers argued wrong on purpose, from the policy model at --policy-url; "
        "a critique and 0-10 score from the judge (--judge-*), which is given the reference answer and told "
        "not to reveal it. Writes items.jsonl, train.jsonl, test.jsonl, <split>_<source>.jsonl (scannet-v0 / "
        "hm3d-v0, episode-disjoint), manifest.json; resumable through progress.jsonl in -o."
    ),
)
@judge_command
def build_eqa_cmd(
    questions: Path = _input("OpenEQA questions file (open-eqa-v0.json).", "QUESTIONS"),
    frames_root: Path = typer.Option(
        ..., "--frames-root", exists=True, file_okay=False, help="OpenEQA episode frames root (data/frames)."
    ),
    output: Path = typer.Option(
        ..., "-o", "--output", help="Output folder (created; a rerun into it resumes where it stopped)."
    ),
    policy_model: str = typer.Option(..., "--policy-model", help="Served name of the policy model."),
    policy_url: str = typer.Option(
        ..., "--policy-url", help="OpenAI-compatible base URL of the policy, e.g. http://127.0.0.1:8001/v1."
    ),
    policy_api_key_env: str = typer.Option(
        "OPENAI_API_KEY", "--policy-api-key-env", help="Environment variable holding the policy's API key."
    ),
    policy_temperature: float = typer.Option(
        1.0, "--policy-temperature", min=0.0, help="Policy sampling temperature."
    ),
    responses: int = typer.Option(4, "--responses", min=0, help="Sampled responses per question."),
    incorrect: int = typer.Option(
        1, "--incorrect", min=0, help="Responses per question argued wrong on purpose."
    ),
    keyframes: int = typer.Option(5, "--keyframes", min=1, help="Frames per question, spread uniformly."),
    test_fraction: float = typer.Option(
        0.2, "--test-fraction", min=0.0, max=1.0, help="Share of episodes in the test split (our default)."
    ),
    batch_size: int = typer.Option(
        16, "--batch-size", min=1, help="Questions per batch of requests (and per journal flush)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the split and the sampling."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions with frames."),
    restart: bool = typer.Option(
        False,
        "--restart",
        help="Start over: drop the journal of an earlier run into -o (needed when settings change).",
    ),
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: groundrl.benchmarks loads when the command runs; groundrl --help imports every command module
    from groundrl.benchmarks.datasets import load_openeqa
    from groundrl.benchmarks.eqa_build import build

    items, bad = load_openeqa(questions, frames_root, keyframes)
    typer.echo(f"{len(items)} questions with frames, {len(bad)} without (listed in manifest.json)", err=True)
    if not items:
        _fail(f"no question has frames under {frames_root} (expected <root>/<episode_history>/*-rgb.png)")
    items = items[:limit] if limit else items
    judge = need_judge(judge)
    with open_judge(judge) as backend, _policy(judge, policy_model, policy_url, policy_api_key_env) as policy:
        settings = {
            "policy_model": policy_model,
            "judge_model": judge.model,
            "responses": responses,
            "incorrect": incorrect,
            "keyframes": keyframes,
            "policy_temperature": policy_temperature,
        }
        _guard_eqa_journal(output, settings, seed, restart)
        m = build(
            items,
            policy,
            backend,
            output,
            responses=responses,
            incorrect=incorrect,
            policy_temperature=policy_temperature,
            judge_params=judge.sampling(),
            test_fraction=test_fraction,
            seed=seed,
            batch_size=batch_size,
            bad_questions=bad,
            settings=settings,
        )
    _report_eqa_build(m, output)


def _guard_eqa_journal(output: Path, settings: dict, seed: int, restart: bool) -> None:
    """The journal is what a rerun resumes from: refuse to mix two settings in it."""
    try:
        flags = {f"--{k.replace('_', '-')}": v for k, v in settings.items()}
        note = guard(output / "progress.jsonl", "bench build-eqa", {**flags, "--seed": seed}, restart)
    except ParamsChanged as e:
        raise typer.BadParameter(str(e), param_hint="-o/--output") from e
    if note:
        typer.echo(note, err=True)


def _report_eqa_build(m: dict, output: Path) -> None:
    """Print what build-eqa made; exit 1 when every judge call failed or nothing was built."""
    typer.echo(
        f"{m['n_items']} items from {m['n_questions_done']} questions ({m['n_questions_resumed']} resumed): "
        + ", ".join(f"{k} {v}" for k, v in m["by_split_source"].items())
        + f"; unparsed responses {m['n_unparsed_responses']}, unscored {m['n_unscored_responses']}, "
        f"critiques naming the reference {m['n_leaks_reference']}"
    )
    typer.echo("wrote " + ", ".join(str(output / n) for n in m["files"]))
    c = m["calls_this_run"]
    if c["judge"] and c["judge_failures"] == c["judge"]:
        _fail(f"all {c['judge']} judge calls failed; no item was labelled")
    if m["n_items"] == 0:
        _fail("no item was built (see manifest.json: unparsed / unscored responses, policy failures)")
