"""Staged train configs: one YAML runs a paper's pipeline (e.g. SFT → GRPO).

A config without ``stages:`` is one GRPO stage named ``grpo`` (its model lands in
``OUTPUT_DIR/final``). With ``stages:``, each entry is a mapping::

    stages:
      - {name: sft,  kind: sft,  data: sft.jsonl, sft: {max_steps: 100}}
      - {name: grpo, kind: grpo, data: rl.jsonl,  grpo: {max_steps: 200}, online_filter: {}}

* ``kind`` — ``sft`` (TRL ``SFTTrainer`` on ``{prompt, target, images?}`` records),
  ``grpo`` (the recipe's rubric, :func:`groundrl.train.grpo.build_trainer`), or
  ``verifier_filter`` (Argos: keep the samples whose best-of-N rollout the agentic
  verifier scores ≥ ``threshold`` and write them as SFT records ``OUTPUT_DIR/<name>/sft.jsonl``;
  a following ``sft`` stage without ``data`` trains on them);
* every other key of the stage overrides the top-level one of the same name for that
  stage (``data``, ``grpo``, ``step_grpo``, ``online_filter``, ``peft``, ``freeze``, …);
* the model of stage k+1 is stage k's ``final/`` (the first stage starts from ``model``).

Each stage writes ``OUTPUT_DIR/<name>/final``; the last trained model is also saved to
``OUTPUT_DIR/final``. Every stage appends to the one ``OUTPUT_DIR/log.jsonl`` (its rows
carry ``"stage": name``); ``report.md`` and ``curves.png`` cover all stages
(:mod:`groundrl.train.runlog`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from groundrl.train import runlog

log = logging.getLogger("groundrl.train")

KINDS = ("grpo", "sft", "verifier_filter")
STAGE_ONLY = {"name", "kind", "threshold", "candidates"}

# Stage kinds added by other modules: kind -> (runner, the stage keys it reads).
_EXTRA_KINDS: dict[str, tuple[Callable[..., dict[str, Any]], frozenset[str]]] = {}
_BUILTIN_EXTENSIONS = ("groundrl.train.rm_stages",)  # rft, cgrpo, proxy_grpo, proxy_rl


def register_stage_kind(kind: str, runner: Callable[..., dict[str, Any]], keys: tuple[str, ...] = ()) -> None:
    """Add a stage kind. ``runner(recipe, st, out, prev_data, **build_kw)`` gets the stage's
    full config (``model`` = the previous stage's ``final/``, ``output_dir`` = ``out``) and
    returns ``{"trainer"?, "data"?, "notes"?}``: a ``trainer`` is trained, logged and saved
    like a ``grpo`` stage's; ``data`` is what a following stage without ``data`` trains on;
    ``notes`` go to ``report.md``. ``keys`` are the stage keys it reads besides the config's."""
    if kind in KINDS:
        raise ValueError(f"stage kind {kind!r} is built in")
    _EXTRA_KINDS[kind] = (runner, frozenset(keys))


def stage_kinds() -> dict[str, tuple[Callable[..., dict[str, Any]], frozenset[str]]]:
    """The registered extra stage kinds (the built-in extension modules imported first)."""
    import importlib

    for mod in _BUILTIN_EXTENSIONS:
        importlib.import_module(mod)
    return _EXTRA_KINDS


def check_stages(cfg: Mapping[str, Any]) -> None:
    stages = cfg.get("stages")
    if not isinstance(stages, list) or not stages:
        raise ValueError("stages must be a non-empty list of {name, kind, …} mappings")
    seen: set[str] = set()
    from groundrl.train.grpo import CONFIG_KEYS

    for i, st in enumerate(stages, start=1):
        if not isinstance(st, Mapping):
            raise ValueError(f"stage {i} must be a mapping with name and kind")
        kind = st.get("kind")
        extra = stage_kinds()
        if kind not in KINDS and kind not in extra:
            raise ValueError(f"stage {i}: kind must be one of {', '.join((*KINDS, *extra))}, got {kind!r}")
        name = st.get("name") or kind
        if name in seen or name == "final":
            raise ValueError(f"stage {i}: name {name!r} is used twice (or is `final`)")
        seen.add(name)
        unknown = set(st) - STAGE_ONLY - (set(CONFIG_KEYS) - {"stages", "output_dir", "model"})
        unknown -= extra[kind][1] if kind in extra else frozenset()
        if unknown:
            raise ValueError(f"stage {name}: unknown key(s) {sorted(unknown)}")


def plan(cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The stages of a config, each a full one-stage config (top level + stage keys)."""
    if not cfg.get("stages"):
        return [{**{k: v for k, v in cfg.items() if k != "stages"}, "name": "grpo", "kind": "grpo"}]
    base = {k: v for k, v in cfg.items() if k != "stages"}
    return [{**base, **st, "name": st.get("name") or st["kind"]} for st in cfg["stages"]]


def _is_main_process() -> bool:
    """True on the process that writes the run folder's files (rank 0 under
    ``accelerate launch``; always in a single process)."""
    try:
        from accelerate import PartialState

        return bool(PartialState().is_main_process)
    except Exception:  # accelerate missing or no distributed state: one process
        return True


def _save(trainer: Any, path: Path) -> None:
    trainer.save_model(str(path))  # every rank calls it (ZeRO-3 gathers the shards); rank 0 writes
    proc = getattr(trainer, "processing_class", None)
    if proc is not None and hasattr(proc, "save_pretrained") and _is_main_process():
        proc.save_pretrained(str(path))


def run_config(
    recipe: str, cfg: dict[str, Any], echo: Callable[[str], None] = print, **build_kw: Any
) -> dict[str, Any]:
    """Run every stage of ``cfg``; returns ``{"output_dir", "final", "stages": [...]}``.
    Each trained model is saved before any report is written; reports never raise."""
    from groundrl.train.grpo import build_trainer, validate_config

    validate_config(cfg)
    out = Path(cfg.get("output_dir", f"runs/train-{recipe}"))
    out.mkdir(parents=True, exist_ok=True)
    main = _is_main_process()
    if main:
        (out / runlog.LOG_FILE).unlink(missing_ok=True)
        runlog.write_config(out, cfg)
    stages = plan(cfg)
    staged = bool(cfg.get("stages"))
    model = cfg.get("model", "tiny")
    prev_data: str | None = None
    done: list[dict[str, Any]] = []
    final: Path | None = None
    try:
        for st in stages:
            name, kind = st["name"], st["kind"]
            st_out = out / name if staged else out
            st = {**st, "model": model, "output_dir": str(st_out)}
            for k in ("name", "kind"):
                st.pop(k, None)
            notes: dict[str, Any] = {}
            if kind in stage_kinds():
                res = stage_kinds()[kind][0](recipe, st, st_out, prev_data, **build_kw)
                prev_data = res.get("data") or prev_data
                notes = dict(res.get("notes") or {})
                trainer = res.get("trainer")
                if trainer is None:
                    done.append({"name": name, "kind": kind, "model": "", "notes": notes})
                    echo(f"[{name}] {kind}: {notes}")
                    continue
            elif kind == "verifier_filter":
                path, counts = run_verifier_filter(recipe, st, st_out)
                prev_data = str(path)
                done.append({"name": name, "kind": kind, "model": "", "notes": counts})
                echo(f"[{name}] kept {counts['kept']} of {counts['seen']} samples -> {path}")
                continue
            elif kind == "sft":
                trainer = build_sft_stage(st, prev_data)
            else:
                for k in STAGE_ONLY:
                    st.pop(k, None)
                trainer = build_trainer(recipe, st, **build_kw)
            trainer.add_callback(runlog.log_callback(out / runlog.LOG_FILE, name))
            echo(f"[{name}] {kind}: training")
            trainer.train()
            final = st_out / "final"
            _save(trainer, final)  # saved before any report
            echo(f"[{name}] saved to {final}")
            if staged:
                _save(trainer, out / "final")
            model = str(final)
            done.append({"name": name, "kind": kind, "model": str(final), "trainer": trainer, "notes": notes})
    finally:
        if main:
            runlog.plot_curves(out)
            runlog.write_report(out, done, title=f"groundrl train {recipe}")
    return {"output_dir": out, "final": out / "final" if final else None, "stages": done}


def build_sft_stage(st: Mapping[str, Any], prev_data: str | None) -> Any:
    from groundrl.testing.tiny_vlm import build_tiny_vlm
    from groundrl.train.sft import build_sft_trainer, read_jsonl

    data = st.get("data") if st.get("data") and not prev_data else (prev_data or st.get("data"))
    if not data:
        raise ValueError("an sft stage needs `data:` (or a verifier_filter stage before it)")
    rows = read_jsonl(data)
    if not rows:
        raise ValueError(f"{data}: no SFT records")
    out = Path(st["output_dir"])
    model = st.get("model", "tiny")
    if model == "tiny":
        model = str(build_tiny_vlm(out / "tiny-model", seed=int(st.get("seed", 0))))
    return build_sft_trainer(
        model, rows, str(out), base=Path(data).parent, hardware=st, **(st.get("sft") or {})
    )


def run_verifier_filter(recipe: str, st: Mapping[str, Any], out: Path) -> tuple[Path, dict[str, int]]:
    """Argos: candidates ``{prompt, images?, rollouts: [...], answer, points_masks?, …}``
    → SFT records of the samples whose best rollout scores ≥ ``threshold`` (0.7) with the
    right outcome (:func:`groundrl.curate.verifier_filter.verifier_filter`)."""
    import json

    from groundrl.curate.verifier_filter import verifier_filter
    from groundrl.train.sft import read_jsonl

    data = st.get("data")
    if not data:
        raise ValueError("a verifier_filter stage needs `data:` (samples with `rollouts`)")
    threshold = float(st.get("threshold", 0.7))
    from groundrl.train.grpo import make_verifier

    verifier = make_verifier(st.get("verifier") or {}, st.get("judge"))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "sft.jsonl"
    counts = {"seen": 0, "kept": 0}
    with path.open("w", encoding="utf-8") as f:
        for rec in read_jsonl(data):
            counts["seen"] += 1
            res = verifier_filter(rec, verifier, threshold)
            if res["kept"]:
                counts["kept"] += 1
                row = {"prompt": rec["prompt"], "target": res["best_rollout"]}
                if rec.get("images"):
                    base = Path(data).parent
                    row["images"] = [
                        str(p if Path(p).is_absolute() else (base / p).resolve()) for p in rec["images"]
                    ]
                f.write(json.dumps(row) + "\n")
    return path, counts
