"""``groundrl curate PIPELINE INPUT.jsonl -o OUT.jsonl``: streaming, resumable data curation."""

from __future__ import annotations

import atexit
import dataclasses
import json
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from groundrl.cli.dataclass_options import settings_command
from groundrl.cli.fields import field_option, parse_fields, renamed_copy
from groundrl.cli.recipe_options import judge_command, need_judge, open_judge
from groundrl.io import SameFileError, check_output, write_jsonl
from groundrl.judges.config import JudgeConfig

if TYPE_CHECKING:
    from collections.abc import Mapping

    from groundrl.curate.cold_start import SplitRecord
    from groundrl.curate.pipelines import RecordFn
    from groundrl.curate.proxy import ProxyRecord
    from groundrl.judges.base import ContentPart

app = typer.Typer(
    help=(
        "Curate SFT/RL data with the papers' filters and converters (the commands below). "
        "Each reads INPUT (JSONL, one record per line) and appends one JSON line per record to the "
        "file -o/--output; a rerun skips the ids already there and retries the records that errored "
        "(--no-retry-errors keeps them). The parameters are kept in OUTPUT.params.json: a rerun with "
        "other parameters is refused (--restart starts over). A bad input line or a record that cannot be processed is "
        "written as {id, line, error}; the exit status is then 1."
    ),
    no_args_is_help=True,
)


def _not_an_input(output: Path | None, *inputs: Path | None, flag: str = "-o/--output") -> None:
    """Refuse an output that is one of the inputs (or a link to one) before anything is written."""
    try:
        check_output(output, *inputs, flag=flag.split("/")[0])
    except SameFileError as e:
        raise typer.BadParameter(str(e), param_hint=flag) from None


# --field of the running command, for _guard: a resumed output must use the same renames
_FIELDS: dict[str, str] = {}


def _stdin_to_file(ctx: typer.Context, path: Path) -> Path:
    """``-`` as INPUT: standard input saved to a temporary file (deleted at exit), so that
    the resumable pipelines read it like any file. With ``--field`` (parsed first: it is
    eager) the pipelines read a renamed copy; ctx.meta keeps the file given."""
    ctx.meta["curate_input"] = path
    fields = parse_fields(ctx.params.get("field"))
    _FIELDS.clear()  # this invocation's (INPUT is required: set on every run, in-process too)
    _FIELDS.update(fields)
    if str(path) != "-":
        if not path.is_file():
            what = "is a folder" if path.is_dir() else "does not exist"
            raise typer.BadParameter(f"{path} {what}: give a JSONL file (or - for standard input)")
        _not_an_input(ctx.params.get("output"), path)  # -o given before INPUT
        return renamed_copy(path, fields) if fields else path

    with tempfile.NamedTemporaryFile("wb", prefix="groundrl-stdin-", suffix=".jsonl", delete=False) as f:
        shutil.copyfileobj(sys.stdin.buffer, f)
    atexit.register(Path(f.name).unlink, missing_ok=True)
    return renamed_copy(Path(f.name), fields) if fields else Path(f.name)


def _output_file(ctx: typer.Context, path: Path) -> Path:
    if str(path) == "-":
        raise typer.BadParameter(
            "curate appends to a file it can resume from: give a file, not - (stdout)",
            param_hint="-o/--output",
        )
    _not_an_input(path, ctx.meta.get("curate_input"))  # INPUT given before -o (not a --field copy)
    return path


# One grammar for every curate command (and the same names as `score`).
INPUT = typer.Argument(
    ...,
    metavar="INPUT",
    callback=_stdin_to_file,
    help="JSONL file, one record per line (fields in the command's help); - reads standard input.",
)
OUTPUT = typer.Option(
    ...,
    "-o",
    "--output",
    callback=_output_file,
    help="Output JSONL file (appended; ids already there are skipped); its folder is created.",
)
RETRY = typer.Option(
    True,
    "--retry-errors/--no-retry-errors",
    help="On a rerun, redo the records that errored last time (their error lines are replaced).",
)
LIMIT = typer.Option(None, "--limit", min=0, help="Process at most this many new records (for a quick look).")
QUIET = typer.Option(False, "--quiet/--no-quiet", "-q", help="No progress bar.")
FIELD = field_option()
SEED = typer.Option(0, "--seed", help="Seed of the random draws (each record's draw also depends on its id).")


def _param(info: Any) -> Any:
    return dataclasses.field(default=None, metadata={"param": info})


RESTART = typer.Option(
    False,
    "--restart",
    help="Start over: delete OUTPUT and OUTPUT.params.json first (needed when the parameters change).",
)


def _guard(output: Path, command: str, params: Mapping[str, object], restart: bool) -> None:
    """Refuse to resume over an output made with other parameters (see run_params)."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.run_params import ParamsChanged, guard

    if _FIELDS:  # only when given: outputs made before --field existed still match
        params = {**params, "--field": sorted(f"{o}={t}" for o, t in _FIELDS.items())}
    try:
        note = guard(output, command, params, restart)
    except ParamsChanged as e:
        raise typer.BadParameter(str(e), param_hint="-o/--output") from e
    if note:
        typer.echo(note, err=True)


def _judge_params(judge: JudgeConfig | None) -> dict[str, str | None]:
    return {
        "--judge-backend": judge.backend if judge else None,
        "--judge-model": judge.model if judge else None,
    }


@dataclasses.dataclass(frozen=True)
class _Frame:
    """The arguments every resumable curate command takes, declared once: the commands
    get them as flags through :func:`curate_command` and receive one ``_Frame``."""

    input: Path = _param(INPUT)
    field: list[str] = _param(FIELD)  # read by INPUT's callback (the renamed copy)
    output: Path = _param(OUTPUT)
    retry_errors: bool = _param(RETRY)
    limit: int | None = _param(LIMIT)
    quiet: bool = _param(QUIET)
    restart: bool = _param(RESTART)

    def run(self, record_fn: RecordFn, outcome_key: str | None) -> Counter:
        """``record_fn`` over the input records not done yet (see curate.pipelines.run)."""
        # lazy: loads when the command runs; groundrl --help imports every command module
        from groundrl.curate.pipelines import run

        return run(
            self.input, self.output, record_fn, outcome_key, not self.quiet, self.retry_errors, self.limit
        )


curate_command = settings_command(_Frame, "frame")  # the _Frame flags, in place of `frame`
FRAME: Any = None  # a command's `frame: _Frame = FRAME`: the decorator fills it


def _judged_run(
    frame: _Frame,
    command: str,
    params: Mapping[str, object],
    judge: JudgeConfig | None,
    record_fn: Callable[[Any], RecordFn],
    outcome_key: str,
    required: bool = False,
) -> tuple[Counter, Any]:
    """The frame of the curate commands that may call a judge: refuse to resume over an
    output made with other parameters, open the judge (closed however the run ends) and
    run ``record_fn(backend)`` over the records not done yet. Returns the counts and the
    backend (closed; :func:`_report` reads its stats)."""
    _guard(frame.output, command, {**params, **_judge_params(judge)}, frame.restart)
    with open_judge(judge, required) as backend:
        counts = frame.run(record_fn(backend), outcome_key)
    return counts, backend


def _report(counts: Counter, output: Path, backend: Any = None) -> None:
    """Print the summary; exit 1 when records errored or every judge call failed."""
    counts = Counter(counts)
    done = counts.pop("skipped_already_done", 0)
    retried = counts.pop("retried_errors", 0)
    old_errors = counts.pop("old_errors_kept", 0)
    duplicates = counts.pop("duplicate_ids", 0)
    written = sum(counts.values())
    extra = f", {retried} errored before and retried" if retried else ""
    typer.echo(
        f"{written} written ({done} already done{extra})"
        + (": " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) if counts else "")
    )
    typer.echo(f"wrote {output}")
    stats = getattr(backend, "stats", None)
    if stats is not None and stats.requests and stats.failures == stats.requests:
        typer.echo(
            f"error: all {stats.requests} judge calls failed (is the judge reachable?); "
            "the affected records are error records and a rerun retries them.",
            err=True,
        )
        raise typer.Exit(1)
    if duplicates:
        typer.echo(
            f"note: {duplicates} input records repeat an earlier id; every record is kept "
            "(resuming goes by input line, see each record's `line`).",
            err=True,
        )
    if old_errors:
        typer.echo(
            f"note: {old_errors} error records from earlier runs were kept (--no-retry-errors).", err=True
        )
    if counts.get("error"):
        typer.echo(
            f"{counts['error']} of {written} records errored (see their `error` and `line` fields); "
            "rerun to retry them.",
            err=True,
        )
        raise typer.Exit(1)


@app.command(
    "verifier-filter",
    short_help="Argos: keep samples whose best rollout the verifier scores high.",
    help=(
        "Argos: keep a sample when its best rollout scores ≥ --threshold with a right outcome. "
        "Records {id, question, answer, rollouts: [text, …], masks?/boxes?, frames?}; "
        "writes {id, kept, best_index, best_score, best_rollout, parts, tools, reason}."
    ),
)
@curate_command
@judge_command
def verifier_filter_cmd(
    frame: _Frame = FRAME,
    threshold: float = typer.Option(
        0.7, "--threshold", help="Keep when the best rollout's score ≥ this (paper: 0.7)."
    ),
    tau: float = typer.Option(
        0.5, "--tau", help="Accuracy gate: grounding parts count only when outcome ≥ tau."
    ),
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate.verifier_filter import verifier_filter
    from groundrl.verify import AgenticVerifier

    def record_fn(backend: Any) -> RecordFn:
        v = AgenticVerifier(backend, tau=tau)  # without a judge: rule tools only
        return lambda r: verifier_filter(r, v, threshold)

    params = {"--threshold": threshold, "--tau": tau}
    counts, backend = _judged_run(frame, "verifier-filter", params, judge, record_fn, "reason")
    _report(counts, frame.output, backend)


@app.command(
    "rejective",
    short_help="EQA-RM: keep the evaluations whose score is near the gold (Eq. 1).",
    help=(
        "EQA-RM Eq. 1: keep evaluations with |gt_score − score| < --tau unless all are correct. "
        "Records {id, gt_score, evaluations: [{critique, score}, …]}; writes {id, kept (a list of indices), reason} "
        "with reason kept | too_easy | none_correct (a record without evaluations or gt_score is an error)."
    ),
)
@curate_command
def rejective_cmd(
    frame: _Frame = FRAME,
    tau: float = typer.Option(
        2.0, "--tau", help="An evaluation is correct when |gt_score − score| < tau (paper: 2)."
    ),
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate import rejective_filter

    if tau <= 0:
        raise typer.BadParameter("--tau must be > 0", param_hint="--tau")
    _guard(frame.output, "rejective", {"--tau": tau}, frame.restart)
    _report(
        frame.run(lambda r: rejective_filter(r, tau), "reason"),
        frame.output,
    )


@app.command(
    "consensus",
    short_help="EmbodiedBrain: A/B/C/D categories from baseline answers.",
    help=(
        "EmbodiedBrain: categories A/B/C/D from k baseline answers and a stronger model; D dropped, "
        "--keep-a of A kept. Records {id, gold, answers: [text, …], strong_answer?}; writes the record "
        "plus {category, kept, n_correct, suspect_label}."
    ),
)
@curate_command
def consensus_cmd(
    frame: _Frame = FRAME,
    keep_a: float = typer.Option(
        0.2,
        "--keep-a",
        min=0.0,
        max=1.0,
        help="Share of category-A (all baselines right) records kept (0..1).",
    ),
    seed: int = SEED,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate import consensus

    _guard(frame.output, "consensus", {"--keep-a": keep_a, "--seed": seed}, frame.restart)
    counts = frame.run(lambda r: consensus(r, keep_a, seed), "category")
    _report(counts, frame.output)


@app.command(
    "mask-difficulty",
    short_help="EmbodiedBrain: accuracy under pixel masking, lambda*.",
    help=(
        "EmbodiedBrain: accuracy under pixel masking 0.0..0.9 (--k masks per ratio) and the failure "
        "threshold lambda*. Records {id, image (path, data URL or base64), question, answer}; writes "
        "{id, curve: [{ratio, accuracy}, …], lambda_star}. Needs a judge model to answer; a record whose "
        "judge call failed is an error record (retried on a rerun)."
    ),
)
@curate_command
@judge_command
def mask_difficulty_cmd(
    frame: _Frame = FRAME,
    k: int = typer.Option(10, "--k", min=1, help="Masked copies per ratio (paper: 10)."),
    seed: int = SEED,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate import mask_difficulty
    from groundrl.judges import SamplingParams
    from groundrl.rewards.outcome import outcome

    def record_fn(backend: Any) -> RecordFn:
        def answer_fn(img: Any, sample: Mapping[str, Any]) -> bool:
            content = [{"type": "image", "image": img}, {"type": "text", "text": str(sample["question"])}]
            g = backend.generate([[{"role": "user", "content": content}]], SamplingParams(max_tokens=64))[0]
            if not g.ok:  # a failed call is not a wrong answer: the record errors and is retried
                raise RuntimeError(f"judge call failed: {g.error}")
            return outcome(g.text, sample["answer"]).value == 1.0

        return lambda r: mask_difficulty(r, answer_fn, k=k, seed=seed)

    params = {"--k": k, "--seed": seed}
    counts, backend = _judged_run(
        frame, "mask-difficulty", params, judge, record_fn, "lambda_star", required=True
    )
    _report(counts, frame.output, backend)


@app.command(
    "decompose",
    short_help="Reinforced Reasoning: one sample per step of a trajectory.",
    help=(
        "Reinforced Reasoning: a trajectory of T actions → T per-step samples. Records "
        "{id, instruction, actions: [...], observations?: [...]}; writes {id: '<id>/step<t>', instruction, "
        "history, observation, target} per step."
    ),
)
@curate_command
def decompose_cmd(
    frame: _Frame = FRAME,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate import decompose

    # run() resumes by input line and redoes a record cut mid-write whole
    _guard(frame.output, "decompose", {}, frame.restart)
    _report(frame.run(decompose, None), frame.output)


@app.command(
    "proxy-records",
    short_help="Proxy-GRM: GRM outputs to proxy-agent records.",
    help=(
        "Proxy-GRM: policy GRM outputs → proxy-agent records. Records {id, query, response_1, response_2, "
        "preferred, image?, output (the GRM's <rubric>…<eval>…<answer>… text) or rubric}; writes {id, query, "
        "response_1, response_2, preferred, image?, rubric, status} with the rubric only (up to </rubric>); "
        "status kept | no_rubric | missing_fields."
    ),
)
@curate_command
def proxy_records_cmd(
    frame: _Frame = FRAME,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate.proxy import proxy_record

    _guard(frame.output, "proxy-records", {}, frame.restart)
    _report(frame.run(proxy_record, "status"), frame.output)


@app.command(
    "proxy-distill",
    short_help="Proxy-GRM: keep a teacher's valid, right proxy outputs.",
    help=(
        "Proxy-GRM teacher distillation: keep a teacher's proxy-agent output whose format is valid "
        "(<think>…</think><answer>1|2</answer>) and whose verdict is the preferred response, as `target`. "
        "Records are proxy records with teacher_output / teacher_outputs; with --judge-* the teacher is "
        "asked (--samples outputs per record) for records that have none. status kept | bad_format | "
        "wrong_verdict | missing_fields."
    ),
)
@curate_command
@judge_command
def proxy_distill_cmd(
    frame: _Frame = FRAME,
    samples: int = typer.Option(
        1, "--samples", min=1, help="Teacher outputs drawn per record (with a judge)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the teacher's sampling (with --samples > 1)."),
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate.proxy import distill_record, proxy_request
    from groundrl.judges.base import SamplingParams

    def record_fn(backend: Any) -> RecordFn:
        def fn(r: dict[str, object]) -> ProxyRecord:
            if backend is not None and r.get("teacher_output") is None and r.get("teacher_outputs") is None:
                params = need_judge(judge).sampling() or SamplingParams(  # a backend comes from a judge
                    temperature=0.0 if samples == 1 else 1.0, max_tokens=512
                )
                draw = dataclasses.replace(
                    params, n=samples, seed=params.seed if params.seed is not None else seed
                )
                g = backend.generate([proxy_request(r)], draw)[0]
                if not g.ok:
                    raise RuntimeError(f"teacher call failed: {g.error}")
                r = {**r, "teacher_outputs": list(g.texts)}
            return distill_record(r)

        return fn

    params = {"--samples": samples, "--seed": seed}
    counts, backend = _judged_run(frame, "proxy-distill", params, judge, record_fn, "status")
    _report(counts, frame.output, backend)


KEPT = typer.Option(
    None,
    "--kept",
    help="Also write the kept records (annotations removed) to this JSONL, ready for the next step.",
)


def _write_kept(output: Path, kept: Path | None) -> None:
    if kept is not None:
        # lazy: loads when the command runs; groundrl --help imports every command module
        from groundrl.curate.rejection import kept_records

        typer.echo(f"{kept_records(output, kept)} kept records -> {kept}")


@app.command(
    "reject-pass-rate",
    short_help="EmbodiedBrain rejection 1: drop prompts by pass rate.",
    help=(
        "EmbodiedBrain rejection stage 1: drop prompts none of whose K samples is right (pass rate <= "
        "--min-rate, default 0: only the all-wrong), and, with --max-rate, those at or above it (off by "
        "default: the paper keeps all-correct prompts). With --judge-* an LLM judges each answer against the "
        "gold (semantic equivalence, as the paper's judge model); without, normalised exact match. Records "
        "{id, gold|answer, answers: [K texts]} or {id, passes: [K bools]}; writes the record plus "
        "{n_samples, n_pass, pass_rate, kept, reason}."
    ),
)
@curate_command
@judge_command
def reject_pass_rate_cmd(
    frame: _Frame = FRAME,
    min_rate: float = typer.Option(0.0, "--min-rate", min=0.0, max=1.0, help="Drop when pass rate <= this."),
    max_rate: float | None = typer.Option(
        None, "--max-rate", min=0.0, max=1.0, help="Also drop when pass rate >= this (default: never)."
    ),
    kept: Path | None = KEPT,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate.consensus import exact_judge
    from groundrl.curate.rejection import pass_rate_filter, semantic_judge

    if max_rate is not None and min_rate >= max_rate:
        raise typer.BadParameter("--min-rate must be < --max-rate", param_hint="--min-rate")
    _not_an_input(kept, frame.input, frame.output, flag="--kept")

    def record_fn(backend: Any) -> RecordFn:
        check = exact_judge if backend is None else semantic_judge(backend)
        return lambda r: pass_rate_filter(r, min_rate, max_rate, judge=check)

    params = {"--min-rate": min_rate, "--max-rate": max_rate}
    counts, backend = _judged_run(frame, "reject-pass-rate", params, judge, record_fn, "reason")
    _write_kept(frame.output, kept)
    _report(counts, frame.output, backend)


@app.command(
    "reject-label",
    short_help="EmbodiedBrain rejection 2: drop labels a stronger model contradicts.",
    help=(
        "EmbodiedBrain rejection stage 2: drop samples whose gold label a stronger model contradicts. "
        "Records {id, gold|answer, strong_answer?, question?, image?}; without strong_answer the --judge-* "
        "model answers the question, and with --judge-* the same model checks whether its answer and the "
        "gold mean the same (without a judge: normalised exact match). Writes the record plus "
        "{strong_answer, kept, reason}."
    ),
)
@curate_command
@judge_command
def reject_label_cmd(
    frame: _Frame = FRAME,
    kept: Path | None = KEPT,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate.consensus import exact_judge
    from groundrl.curate.rejection import label_check, semantic_judge
    from groundrl.judges import SamplingParams
    from groundrl.parse.answers import extract_answer

    _not_an_input(kept, frame.input, frame.output, flag="--kept")

    def record_fn(backend: Any) -> RecordFn:
        def ask(rec: Mapping[str, object]) -> object:
            if backend is None:
                return None
            content: list[ContentPart] = []
            if rec.get("image"):
                content.append({"type": "image", "image": rec["image"]})
            content.append({"type": "text", "text": str(rec.get("question", rec.get("prompt", "")))})
            g = backend.generate([[{"role": "user", "content": content}]], SamplingParams(max_tokens=64))[0]
            if not g.ok:  # a failed call is not a contradiction: the record errors and is retried
                raise RuntimeError(f"judge call failed: {g.error}")
            ans = extract_answer(g.text or "")
            return ans.value if ans.ok else (g.text or "").strip()

        check = exact_judge if backend is None else semantic_judge(backend)
        return lambda r: label_check(r, ask, judge=check)

    counts, backend = _judged_run(frame, "reject-label", {}, judge, record_fn, "reason")
    _write_kept(frame.output, kept)
    _report(counts, frame.output, backend)


@app.command(
    "rr-sft",
    short_help="Reinforced Reasoning: SFT data from simulator tasks.",
    help=(
        "Reinforced Reasoning SFT data from simulator tasks: expert plans in the paper's JSON "
        "(reasoning_and_reflection, visual_state_description, language_plan, executable_plan with ids from "
        "the tasks' action map), kept only when they succeed when executed; --per-step decomposes each "
        "trajectory. With --judge-* the reasoning text is distilled from that teacher. Writes "
        "{id, prompt, target, gold} to -o and the action map next to it (OUTPUT.action_map.json)."
    ),
)
@judge_command
def rr_sft_cmd(
    input_path: Path | None = typer.Argument(
        None,
        metavar="INPUT",
        exists=True,
        dir_okay=False,
        show_default=False,
        help="A task file (groundrl sim format); without it, --n tasks are generated.",
    ),
    output: Path = OUTPUT,
    n: int = typer.Option(20, "--n", min=1, help="Procedural tasks to generate (without INPUT)."),
    tasks_file: Path | None = typer.Option(
        None, "--tasks", exists=True, dir_okay=False, help="The same as INPUT (kept for older scripts)."
    ),
    per_step: bool = typer.Option(False, "--per-step/--whole-plan", help="One record per step of each plan."),
    list_actions: bool = typer.Option(
        True,
        "--list-actions/--no-list-actions",
        help="List the action vocabulary with ids in each prompt, as EB-ALFRED's planner prompt does.",
    ),
    seed: int = SEED,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.sim.tasks import generate_tasks, load_tasks
    from groundrl.train.rr_sft_data import rr_sft_records

    tasks_file = input_path or tasks_file
    _not_an_input(output, tasks_file)
    tasks = load_tasks(tasks_file) if tasks_file is not None else generate_tasks(n, seed=seed)
    with open_judge(judge, required=False) as backend:
        records, amap, counts = rr_sft_records(
            tasks, teacher=backend, per_step=per_step, list_actions=list_actions
        )
    write_jsonl(output, records)
    amap_path = output.with_name(output.stem + ".action_map.json")
    amap_path.write_text(json.dumps({str(k): v for k, v in sorted(amap.items())}, indent=0), encoding="utf-8")
    typer.echo(", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    typer.echo(f"wrote {output} and {amap_path}")


def _write_split(output: Path, dest: Path | None, keep: Any, convert: Any) -> int:
    """Write ``convert(rec)`` for the records of ``output`` that ``keep`` accepts to ``dest``."""
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate.pipelines import write_selected

    return 0 if dest is None else write_selected(output, dest, keep, convert)


@app.command(
    "proxy-cold-start",
    short_help="Proxy-GRM: cold-start critiques from a teacher.",
    help=(
        "Proxy-GRM cold-start data (paper §3.3, App. B.2-B.3): a teacher's <rubric><eval><answer> critique "
        "of each preference pair {id, query, response_1, response_2, preferred, image?} (teacher_output(s) "
        "in the record, or asked through --judge-*) splits it into status correct (well-formed, picks the "
        "preferred response; split cold_start | proxy_sft | proxy_rl in Table 5's 10k:5k:10k shares) or "
        "hard (for RL). --sft writes the cold_start records as {id, prompt, target, images?} for a "
        "`kind: sft` stage; --rl writes the hard records as proxy_grpo rows."
    ),
)
@curate_command
@judge_command
def proxy_cold_start_cmd(
    frame: _Frame = FRAME,
    sft: Path | None = typer.Option(None, "--sft", help="Write the cold-start SFT records here."),
    rl: Path | None = typer.Option(None, "--rl", help="Write the hard records (RL rows) here."),
    samples: int = typer.Option(
        1, "--samples", min=1, help="Teacher critiques drawn per record (with a judge)."
    ),
    seed: int = SEED,
    judge: JudgeConfig | None = None,
) -> None:
    # lazy: loads when the command runs; groundrl --help imports every command module
    from groundrl.curate.cold_start import rl_record, sft_record, split_record, teacher_outputs
    from groundrl.judges.base import SamplingParams

    _not_an_input(sft, frame.input, frame.output, flag="--sft")
    _not_an_input(rl, frame.input, frame.output, sft, flag="--rl")

    def record_fn(backend: Any) -> RecordFn:
        if backend is None:
            return lambda r: split_record(r, seed=seed)
        # a backend comes from a judge
        base = need_judge(judge).sampling() or SamplingParams(
            temperature=0.0 if samples == 1 else 1.0, max_tokens=1024
        )
        params = dataclasses.replace(base, n=samples)

        def fn(r: dict[str, object]) -> SplitRecord:
            if r.get("teacher_output") is None and r.get("teacher_outputs") is None:
                r = {**r, "teacher_outputs": teacher_outputs(backend, [r], params)[0]}
            return split_record(r, seed=seed)

        return fn

    params = {"--samples": samples, "--seed": seed}
    counts, backend = _judged_run(frame, "proxy-cold-start", params, judge, record_fn, "status")
    n_sft = _write_split(frame.output, sft, lambda r: r.get("split") == "cold_start", sft_record)
    n_rl = _write_split(frame.output, rl, lambda r: r.get("status") == "hard", rl_record)
    if sft is not None:
        typer.echo(f"{n_sft} cold-start SFT records -> {sft}")
    if rl is not None:
        typer.echo(f"{n_rl} hard RL records -> {rl}")
    _report(counts, frame.output, backend)
