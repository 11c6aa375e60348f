"""``groundrl train RECIPE --config FILE.yaml``: a TRL ``GRPOTrainer`` for any recipe.

dataset (JSONL: ``prompt`` text, optional ``images`` paths, the recipe's fields) → chat
prompts with image parts → the recipe's rubric through :mod:`groundrl.integrations.trl`
(one reward function per part, ``reward_weights``, per-part logging) → ``GRPOConfig``
from the YAML's ``grpo:`` section on top of CPU-safe defaults.

YAML keys: ``model`` (a local path, or ``tiny`` to build the tiny random Qwen2.5-VL),
``data`` (JSONL path), ``recipe_options`` (the recipe's declared options, e.g.
``action_map``; ``groundrl recipes`` lists them), ``judge`` (a
:class:`~groundrl.judges.config.JudgeConfig` block for the recipe's model-based parts,
e.g. ``{backend: openai, model: judge, url: "http://127.0.0.1:8000/v1"}``), ``output_dir``,
``grpo`` (any ``GRPOConfig`` field, merged with the defaults by
:func:`groundrl.train.config.trainer_args`), ``step_grpo`` (``{p: 0.5, seed: 0}``: EmbodiedBrain's
Step-GRPO guided precursors, see :func:`apply_step_hints`). The same file with a real checkpoint path and GPU
settings runs unchanged on a GPU (see ``configs/``).
"""

from __future__ import annotations

import inspect
import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from groundrl.integrations.trl import reward_funcs
from groundrl.io import JsonlError, iter_lines
from groundrl.judges.base import ImagePart, TextPart
from groundrl.models.loading import flatten_text_content, is_text_only
from groundrl.recipes import get_recipe
from groundrl.recipes.resolve import resolve_rubric
from groundrl.settings import parse_settings
from groundrl.train.builders import grpo_trainer
from groundrl.train.online_filter import recorder_for
from groundrl.train.stage_settings import StageSettings, VerifierSettings
from groundrl.train.step_grpo import StepGRPOConfig, StepHinter, hint_record
from groundrl.verify import AgenticVerifier
from groundrl.verify.masks import mask_provider_from_spec


def apply_step_hints(records: list[dict[str, Any]], p: float = 0.5, seed: int = 0) -> list[dict[str, Any]]:
    """Step-GRPO hints drawn once over a list of records (offline data preparation).
    Training draws them anew at every sampling instead (``step_grpo:`` in the config,
    :mod:`groundrl.train.step_grpo`). With probability ``p`` a record's prompt gets a
    random prefix (0 … T−1 steps, uniform) of its gold plan as guided precursors
    (:func:`groundrl.train.step_grpo.hint_record`): an EmbodiedBrain gold stays whole (the
    hint is its first k ``<plans>`` lines, and the GRM judges the complete answer); a list
    gold (Reinforced Reasoning) becomes the remaining steps. Records without a usable gold
    are left as they are."""
    rng = random.Random(seed)
    return [hint_record(rec, rng, p)[0] for rec in records]


def load_dataset_records(
    path: str | Path, step_grpo: StepGRPOConfig | Mapping[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Training rows from a JSONL file (see :func:`load_rows`); ``step_grpo`` applies
    hints once here (offline); training applies them per sampling instead."""
    return load_rows(path, step_grpo)[0]


def load_rows(
    path: str | Path, step_grpo: StepGRPOConfig | Mapping[str, Any] | None = None, text_only: bool = False
) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """``(rows, json_columns)``: chat prompts with image parts and every other field as a
    column. Arrow needs one type per column, so a column holding mappings or nested
    lists (``points_masks``, ``boxes``, ``timestamps``…) is stored as JSON text and named
    in ``json_columns``; :func:`decode_columns` turns it back into objects before the
    reward functions see it. ``text_only`` (a text-only model, whose chat template may
    take only string content) makes the prompt a plain string and refuses images.
    ``step_grpo`` (a :class:`~groundrl.train.step_grpo.StepGRPOConfig`, or its ``{p, seed}``
    block, parsed by the same rules) applies Step-GRPO hints once, offline."""
    # lazy: Pillow loads only when images are read
    from PIL import Image

    base = Path(path).parent
    raw = []
    for line in iter_lines(path):
        if line.problem or "prompt" not in line.value:
            raise JsonlError(
                path,
                line.number,
                line.problem or "no `prompt`",
                "write one JSON object with a `prompt` per line",
            )
        raw.append(line.value)
    if not raw:
        raise ValueError(f"{path}: no records")
    hints = (
        step_grpo if isinstance(step_grpo, StepGRPOConfig) else StepGRPOConfig.from_mapping(step_grpo or None)
    )
    if hints is not None:
        raw = apply_step_hints(raw, hints.p, hints.seed)
    if not any("question" in rec or "task" in rec for rec in raw):
        # judges that read the task (the planning GRM) find the prompt text here
        raw = [{**rec, "question": rec["prompt"]} for rec in raw]
    keys = {k for rec in raw for k in rec} - {"prompt", "images"}
    json_cols = frozenset(k for k in keys if not _plain_column([rec.get(k) for rec in raw]))
    rows = []
    for rec in raw:
        rec = dict(rec)
        images = [
            Image.open(p if Path(p).is_absolute() else base / p).convert("RGB")
            for p in rec.pop("images", None) or []
        ]
        if text_only and images:
            raise ValueError(f"{path}: a record has images; the model is text-only (no vision part)")
        content: list[TextPart | ImagePart] = [{"type": "image"} for _ in images]
        content.append({"type": "text", "text": rec.pop("prompt")})
        row: dict[str, Any] = {"prompt": [{"role": "user", "content": content}]}
        if text_only:
            row["prompt"] = flatten_text_content(row["prompt"])
        for key in sorted(keys):
            v = rec.get(key)
            row[key] = json.dumps(v) if key in json_cols and v is not None else v
        if images:
            row["images"] = images
        rows.append(row)
    if any("images" in r for r in rows):
        for r in rows:
            r.setdefault("images", [])
    return rows, json_cols


def _plain_column(values: list[Any]) -> bool:
    """Arrow stores the column as it is: plain values of one kind (numbers, strings,
    booleans or lists of strings), ``None`` allowed."""
    kinds = set()
    for v in values:
        if v is None:
            continue
        if not _plain(v):
            return False
        kinds.add(
            "bool" if isinstance(v, bool) else "num" if isinstance(v, (int, float)) else type(v).__name__
        )
    return len(kinds) <= 1


def _plain(v: Any) -> bool:
    """Values Arrow stores as they are: scalars and lists of strings."""
    if v is None or isinstance(v, (str, bool, int, float)):
        return True
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _arrow_safe(v: Any) -> Any:
    # kept for callers of the former API: one JSON-encoded value
    return v if _plain(v) else json.dumps(v)


def decode_columns(func: Callable[..., Any], columns: frozenset[str]) -> Callable[..., Any]:
    """``func`` with the JSON-text ``columns`` decoded back into objects (same name, same
    sync/async kind, so TRL logs and awaits it as before)."""
    if not columns:
        return func

    def fix(kwargs: dict[str, object]) -> dict[str, object]:
        for col in columns & set(kwargs):
            vals = kwargs[col]
            if isinstance(vals, (list, tuple)):
                kwargs[col] = [json.loads(v) if isinstance(v, str) else v for v in vals]
        return kwargs

    wrapped: Callable[..., Any]  # the same sync/async kind as func: TRL awaits coroutine functions
    if inspect.iscoroutinefunction(func):

        async def awaited(*args: Any, **kwargs: Any) -> Any:
            return await func(*args, **fix(kwargs))

        wrapped = awaited
    else:

        def called(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **fix(kwargs))

        wrapped = called
    wrapped.__name__ = wrapped.__qualname__ = getattr(func, "__name__", "reward")
    return wrapped


def count_judge_failures(func: Callable[..., Any]) -> Callable[..., Any]:
    """A judge-backed TRL reward function that also logs ``judge/<name>/failed_frac``: the
    share of the batch whose reason says the judge call failed (the part scores those 0,
    the paper's fallback, so the reward mean alone cannot show them)."""
    name = getattr(func, "__name__", "judge")

    def fix(kwargs: dict[str, object]) -> dict[str, object]:
        log_extra, log_metric = kwargs.get("log_extra"), kwargs.get("log_metric")
        if not callable(log_metric):
            return kwargs

        def spy(column: str, values: list[Any]) -> None:
            if column == f"{name}_reason" and values:
                failed = sum(isinstance(v, str) and "judge call failed" in v for v in values)
                log_metric(f"judge/{name}/failed_frac", failed / len(values))
            if callable(log_extra):
                log_extra(column, values)

        return {**kwargs, "log_extra": spy}

    wrapped: Callable[..., Any]  # the same sync/async kind as func: TRL awaits coroutine functions
    if inspect.iscoroutinefunction(func):

        async def awaited(*args: Any, **kwargs: Any) -> Any:
            return await func(*args, **fix(kwargs))

        wrapped = awaited
    else:

        def called(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **fix(kwargs))

        wrapped = called
    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


def make_verifier(spec: VerifierSettings | Mapping[str, Any] | None = None, judge: Any = None) -> Any:
    """An :class:`~groundrl.verify.AgenticVerifier` from a stage's ``verifier`` block
    (:class:`~groundrl.train.stage_settings.VerifierSettings`: ``tools``, ``tau``,
    ``weights``, ``masks``: ``boxes`` — masks from the sample's ``boxes``/``points_masks``
    fields, the default — or ``{provider: detector_segmenter, detector: PATH, segmenter:
    PATH}``; a mapping from Python is parsed by the same rules) with the teachers of the
    ``judge:`` block (a :class:`~groundrl.judges.config.JudgeConfig`)."""
    block = parse_settings(VerifierSettings, spec, "verifier")
    masks = mask_provider_from_spec(block.masks)
    backend = judge.make_backend() if judge is not None and hasattr(judge, "make_backend") else judge
    return AgenticVerifier(
        backend, mask_provider=masks, weights=block.weights, tau=block.tau, tools=block.tools
    )


def build_trainer(
    recipe: str,
    st: StageSettings,
    extra_reward_funcs: Sequence[Callable[..., Any]] = (),
    extra_weights: Sequence[float] = (),
) -> Any:
    """A ready ``GRPOTrainer`` (a :class:`~groundrl.train.trainer.GroundGRPOTrainer`;
    call ``.train()``) for one stage's typed settings ``st``, checked once when the file
    loaded (:func:`groundrl.train.config.load_train_config`; from Python,
    :func:`~groundrl.train.config.stage_settings` types a mapping the same way); the GRPO
    arguments are the stage's effective ones (the CPU smoke defaults only for ``tiny``)."""
    rec = get_recipe(recipe)
    out = Path(st.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    if st.data is None:  # a stage kind that needs data: load_train_config's check_paths says so first
        raise ValueError("the config needs `data:` (a JSONL of prompts and the recipe's fields)")
    rows, json_cols = load_rows(st.data, text_only=is_text_only(st.model))
    missing = [f for f in rec.required if f not in rows[0]]
    if missing:
        raise ValueError(f"{st.data}: recipe {recipe} needs field(s) {missing}")
    rubric = _rubric(recipe, st)
    check = getattr(rubric, "check_samples", None)
    if callable(check):  # e.g. the task-type router: a sample whose type has no reward
        check(
            [
                {k: (json.loads(v) if k in json_cols and isinstance(v, str) else v) for k, v in r.items()}
                for r in rows
            ]
        )
    funcs, weights = reward_funcs(rubric)
    judged = {p.name for p in rubric.parts if p.batched}
    funcs = [decode_columns(f, json_cols) for f in funcs]
    funcs = [count_judge_failures(f) if getattr(f, "__name__", "") in judged else f for f in funcs]
    funcs = [*funcs, *(decode_columns(f, json_cols) for f in extra_reward_funcs)]
    weights = [*weights, *extra_weights]
    filt = st.online_filter
    recorder = None
    if filt is not None:
        names = [getattr(f, "__name__", "") for f in funcs]
        if filt.reward not in names:
            raise ValueError(
                f"online_filter.reward {filt.reward!r} is not a reward of recipe {recipe} "
                f"(its rewards: {', '.join(names)})"
            )
        i = names.index(filt.reward)
        recorder = funcs[i] = recorder_for(funcs[i])
    return grpo_trainer(
        st,
        rows,
        funcs,
        weights,
        step_hinter=StepHinter(st.step_grpo) if st.step_grpo is not None else None,
        online_filter=filt,
        accuracy_recorder=recorder,
    )


def _rubric(recipe: str, st: StageSettings) -> Any:
    """The recipe's rubric with the stage's options, judge and (Argos) verifier."""
    if st.verifier is None:
        return resolve_rubric(recipe, st.recipe_options, st.judge)
    if "verifier" not in {o.name for o in get_recipe(recipe).options}:
        raise ValueError(f"recipe {recipe!r} takes no verifier (argos does)")
    verifier = make_verifier(st.verifier, st.judge)
    return resolve_rubric(recipe, {**st.recipe_options, "verifier": verifier})
