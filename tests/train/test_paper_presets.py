"""The paper presets hold the papers' values (issue 24 items 2 and 6).

``PAPER_VALUES`` is written from the papers (``../shared/papers``) and the authors' released
scripts, one row per stated value with its citation; each row is compared with the
*effective* configuration — what ``groundrl train --config FILE --print-config`` prints,
after every default and merge — of ``configs/papers/<preset>.yaml`` and of
``configs/gpu/<preset>.yaml`` (the same pipeline on one 8-GPU node). Nothing here is read
from the code under test: a value that drifts in a preset, or a default that leaks into
it, fails a row.

Keys are dotted paths into one stage of the effective config (``args.<TRL field>``,
``blocks.<block>.<key>``) or, with stage ``None``, into its top level. Three keys are
batch sizes the papers state in their own units, computed from the effective arguments
on the papers' 8 processes: ``@per_update`` (rows per optimiser step =
per_device_train_batch_size × gradient_accumulation_steps × 8), ``@prompts_per_update``
(that ÷ num_generations) and ``@prompts_per_generation`` (generation_batch_size ÷
num_generations).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRESETS = ("eqa_rm", "argos", "embodied_brain", "reinforced_planning", "proxy_grm", "proxy_agent")
RECIPES = {
    "eqa_rm": "eqa_rm",
    "argos": "argos",
    "embodied_brain": "embodied_brain",
    "reinforced_planning": "reinforced_planning",
    "proxy_grm": "proxy_grm",
    "proxy_agent": "proxy_grm",
}
PROCESSES = 8  # the papers' GPUs for the stages whose batches are stated as totals

E, A, B, R, P = "EQA-RM", "Argos", "EmbodiedBrain", "Reinforced Reasoning", "Proxy-GRM"
EB_SFT = "released: ZTERobot/EmbodiedBrain1.0 train/SFT/train_sft.sh"
EB_RL = "released: ZTERobot/EmbodiedBrain1.0 train/RL/ms-swift-main/main_experiments/train_bash/train_rl.sh"
PG_SFT = "released: Qwen-Applications/Proxy-GRM scripts/sft/train_scripts.sh"
PG_RL = "released: Qwen-Applications/Proxy-GRM scripts/rl/train_scripts.sh"

# (preset, stage, key, value, citation)
PAPER_VALUES: list[tuple[str, str | None, str, object, str]] = [
    # -- EQA-RM: RFT -> C-GRPO [shared/papers/000, App. B Table 5] --
    ("eqa_rm", None, "model", "Qwen2-VL-2B-Instruct", f"{E} §5 Base Model, Table 5"),
    ("eqa_rm", "rft", "blocks.inputs.keyframes", 5, f"{E} §5, Table 5: N = 5"),
    ("eqa_rm", "rft", "blocks.image.max_pixels", 401408, f"{E} Table 5"),
    ("eqa_rm", "rft", "blocks.model_kwargs.attn_implementation", "flash_attention_2", f"{E} Table 5"),
    ("eqa_rm", "rft", "args.learning_rate", 1e-6, f"{E} Table 5 (SFT)"),
    ("eqa_rm", "rft", "args.per_device_train_batch_size", 1, f"{E} Table 5 (SFT) 1 × 1"),
    ("eqa_rm", "rft", "args.gradient_accumulation_steps", 1, f"{E} Table 5 (SFT) 1 × 1"),
    ("eqa_rm", "rft", "args.num_train_epochs", 2, f"{E} Table 5 (SFT)"),
    ("eqa_rm", "rft", "args.max_grad_norm", 5.0, f"{E} Table 5: SFT & C-GRPO"),
    ("eqa_rm", "rft", "args.bf16", True, f"{E} Table 5"),
    ("eqa_rm", "rft", "args.gradient_checkpointing", True, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "blocks.inputs.keyframes", 5, f"{E} §5, Table 5"),
    ("eqa_rm", "cgrpo", "blocks.image.max_pixels", 401408, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "args.loss_type", "grpo", f"{E} Eq. 7: 1/G Σ_k per-evaluation terms"),
    ("eqa_rm", "cgrpo", "args.num_generations", 8, f"{E} Table 5: G"),
    ("eqa_rm", "cgrpo", "args.beta", 0.04, f"{E} Table 5, Eq. 7: β_K"),
    ("eqa_rm", "cgrpo", "args.learning_rate", 1e-6, f"{E} §5, Table 5"),
    ("eqa_rm", "cgrpo", "args.lr_scheduler_type", "cosine", f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "args.weight_decay", 0.01, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "args.max_grad_norm", 5.0, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "args.max_completion_length", 768, f"{E} Table 5: |e_k|"),
    ("eqa_rm", "cgrpo", "args.per_device_train_batch_size", 1, f"{E} §5, Table 5: 1 × 1"),
    ("eqa_rm", "cgrpo", "args.gradient_accumulation_steps", 1, f"{E} Table 5: 1 × 1"),
    ("eqa_rm", "cgrpo", "args.generation_batch_size", 8, f"{E} Table 5: G = 8 = 1 × 1 × 8 GPUs"),
    ("eqa_rm", "cgrpo", "args.num_train_epochs", 1, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "args.max_steps", -1, f"{E} Table 5: one epoch"),
    ("eqa_rm", "cgrpo", "args.bf16", True, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "args.gradient_checkpointing", True, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "blocks.cgrpo.types", ["temporal", "spatial", "reasoning"], f"{E} §4.3, Eq. 5"),
    ("eqa_rm", "cgrpo", "blocks.cgrpo.delta", 0.95, f"{E} Eq. 4, Table 5: δ"),
    ("eqa_rm", "cgrpo", "blocks.cgrpo.mu", 0.3, f"{E} Eq. 4, Table 5: μ"),
    ("eqa_rm", "cgrpo", "blocks.cgrpo.min_acc", 0.1, f"{E} Table 5: H_min_acc"),
    ("eqa_rm", "cgrpo", "blocks.cgrpo.mask_ratio", 0.15, f"{E} Table 5"),
    ("eqa_rm", "cgrpo", "blocks.cgrpo.patch", 16, f"{E} Table 5: mask size (16, 16)"),
    # -- Argos: verifier filter -> SFT -> GRPO [shared/papers/001] --
    ("argos", None, "model", "Qwen2.5-VL-7B-Instruct", f"{A} §5: Qwen2.5-VL 7B"),
    ("argos", "curate", "blocks.threshold", 0.7, f"{A} App. C.3"),
    ("argos", "curate", "blocks.verifier.masks.provider", "detector_segmenter", f"{A} §3.1 Eq. 1-2"),
    ("argos", "grpo", "blocks.verifier.masks.provider", "detector_segmenter", f"{A} §3.1 Eq. 1-2"),
    ("argos", "sft", "args.learning_rate", 1e-5, f"{A} App. A"),
    ("argos", "sft", "args.@per_update", 256, f"{A} App. A: SFT batch 256"),
    ("argos", "sft", "args.num_train_epochs", 3, f"{A} App. A, C.4: ≈1000 steps × 256 over ≈85K ≈ 3 epochs"),
    ("argos", "grpo", "args.loss_type", "grpo", f"{A} Eq. 10-11"),
    ("argos", "grpo", "args.learning_rate", 1e-5, f"{A} App. A"),
    ("argos", "grpo", "args.@prompts_per_update", 56, f"{A} App. A: RL batch 56"),
    ("argos", "grpo", "args.@prompts_per_generation", 56, f"{A} App. A: RL batch 56"),
    ("argos", "grpo", "args.max_steps", 80, f"{A} App. A: ≈80 RL steps"),
    # -- EmbodiedBrain: SFT -> Step-GRPO [shared/papers/002; the released scripts] --
    ("embodied_brain", None, "model", "Qwen2.5-VL-7B-Instruct", f"{B} §2, §5: Qwen2.5-VL 7B"),
    ("embodied_brain", "grpo", "blocks.judge.model", "Qwen/Qwen3-30B-A3B", f"{B} §4.2.2: the GRM"),
    ("embodied_brain", "grpo", "blocks.recipe_options.router", True, f"{B} §4.2.2: four task types"),
    ("embodied_brain", "sft", "blocks.image.max_pixels", 262144, EB_SFT),
    ("embodied_brain", "sft", "blocks.freeze.vision_tower", True, EB_SFT),
    ("embodied_brain", "sft", "blocks.freeze.projector", True, EB_SFT),
    ("embodied_brain", "sft", "args.learning_rate", 1e-6, EB_SFT),
    ("embodied_brain", "sft", "args.lr_scheduler_type", "cosine", EB_SFT),
    ("embodied_brain", "sft", "args.warmup_steps", 0.1, EB_SFT),
    ("embodied_brain", "sft", "args.num_train_epochs", 3, EB_SFT),
    ("embodied_brain", "sft", "args.max_length", 8192, EB_SFT),
    ("embodied_brain", "sft", "args.per_device_train_batch_size", 1, EB_SFT),
    ("embodied_brain", "sft", "args.gradient_accumulation_steps", 2, EB_SFT + " (16 GPUs)"),
    ("embodied_brain", "sft", "args.bf16", True, EB_SFT),
    ("embodied_brain", "sft", "args.gradient_checkpointing", True, EB_SFT),
    ("embodied_brain", "grpo", "blocks.image.max_pixels", 401408, EB_RL),
    ("embodied_brain", "grpo", "blocks.freeze.vision_tower", True, EB_RL + " (ms-swift default)"),
    ("embodied_brain", "grpo", "blocks.freeze.projector", True, EB_RL + " (ms-swift default)"),
    ("embodied_brain", "grpo", "args.loss_type", "bnpo", EB_RL),
    ("embodied_brain", "grpo", "args.epsilon_high", 0.28, EB_RL),
    ("embodied_brain", "grpo", "args.learning_rate", 2.5e-6, EB_RL),
    ("embodied_brain", "grpo", "args.warmup_steps", 0.05, EB_RL),
    ("embodied_brain", "grpo", "args.num_generations", 16, EB_RL),
    ("embodied_brain", "grpo", "args.temperature", 1.2, EB_RL),
    ("embodied_brain", "grpo", "args.top_p", 0.98, EB_RL),
    ("embodied_brain", "grpo", "args.top_k", 160, EB_RL),
    ("embodied_brain", "grpo", "args.beta", 0.001, EB_RL),
    ("embodied_brain", "grpo", "args.num_iterations", 1, EB_RL),
    ("embodied_brain", "grpo", "args.mask_truncated_completions", True, EB_RL + " --overlong_filter"),
    ("embodied_brain", "grpo", "args.max_completion_length", 2048, EB_RL),
    ("embodied_brain", "grpo", "args.per_device_train_batch_size", 4, EB_RL),
    ("embodied_brain", "grpo", "args.gradient_accumulation_steps", 1, EB_RL),
    ("embodied_brain", "grpo", "args.generation_batch_size", 32, EB_RL + ": 4 × 1 × 8 GPUs"),
    ("embodied_brain", "grpo", "args.num_train_epochs", 1, EB_RL),
    ("embodied_brain", "grpo", "args.bf16", True, EB_RL),
    # -- Reinforced Reasoning: SFT -> GRPO + online filter [shared/papers/003] --
    ("reinforced_planning", None, "model", "Qwen2.5-VL-7B-Instruct", f"{R} §4.1.3, App. B.2"),
    ("reinforced_planning", "sft", "blocks.freeze.vision_tower", True, f"{R} Table 4"),
    ("reinforced_planning", "sft", "blocks.freeze.projector", True, f"{R} Table 4"),
    ("reinforced_planning", "sft", "blocks.image.max_pixels", 262144, f"{R} Table 4"),
    ("reinforced_planning", "sft", "args.learning_rate", 1e-5, f"{R} Table 4"),
    ("reinforced_planning", "sft", "args.lr_scheduler_type", "cosine", f"{R} Table 4"),
    ("reinforced_planning", "sft", "args.warmup_steps", 0.1, f"{R} Table 4: warmup_ratio"),
    ("reinforced_planning", "sft", "args.num_train_epochs", 3, f"{R} Table 4"),
    ("reinforced_planning", "sft", "args.per_device_train_batch_size", 1, f"{R} Table 4"),
    ("reinforced_planning", "sft", "args.gradient_accumulation_steps", 2, f"{R} Table 4 (4 GPUs)"),
    ("reinforced_planning", "sft", "args.max_length", 2048, f"{R} Table 4: cutoff_len"),
    ("reinforced_planning", "sft", "args.bf16", True, f"{R} Table 4"),
    ("reinforced_planning", "grpo", "blocks.freeze.vision_tower", True, f"{R} Table 5: freeze_prefix visual"),
    ("reinforced_planning", "grpo", "blocks.freeze.projector", True, f"{R} Table 5: freeze_prefix visual"),
    ("reinforced_planning", "grpo", "args.loss_type", "grpo", f"{R} Eq. 13"),
    ("reinforced_planning", "grpo", "args.num_generations", 8, f"{R} Table 5: n_samples_per_prompt"),
    ("reinforced_planning", "grpo", "args.learning_rate", 1e-6, f"{R} Table 5"),
    ("reinforced_planning", "grpo", "args.beta", 0.0, f"{R} Table 5: init_kl_coef"),
    ("reinforced_planning", "grpo", "args.temperature", 1.0, f"{R} Table 5"),
    ("reinforced_planning", "grpo", "args.max_completion_length", 4096, f"{R} Table 5: generate_max_len"),
    (
        "reinforced_planning",
        "grpo",
        "args.per_device_train_batch_size",
        1,
        f"{R} Table 5: micro_train_batch_size",
    ),
    ("reinforced_planning", "grpo", "args.@per_update", 128, f"{R} Table 5: train_batch_size"),
    ("reinforced_planning", "grpo", "args.num_train_epochs", 10, f"{R} Table 5: max_episodes"),
    (
        "reinforced_planning",
        "grpo",
        "args.steps_per_generation",
        128,
        f"{R} §3.3, Table 5: n = 8 updates × 16",
    ),
    ("reinforced_planning", "grpo", "blocks.online_filter.lo", 0.1, f"{R} Eq. 14, Table 5"),
    ("reinforced_planning", "grpo", "blocks.online_filter.hi", 0.9, f"{R} Eq. 14, Table 5"),
    ("reinforced_planning", "grpo", "blocks.online_filter.criterion", "paper", f"{R} Eq. 14"),
    ("reinforced_planning", "grpo", "blocks.online_filter.buffer_groups", 128, f"{R} §3.3, Table 5: B"),
    ("reinforced_planning", "grpo", "blocks.online_filter.steps_per_buffer", 8, f"{R} §3.3, Table 5: n"),
    # -- Proxy-GRM policy: cold-start SFT -> GRPO with the proxy [shared/papers/004] --
    ("proxy_grm", None, "model", "Qwen2.5-VL-7B-Instruct", f"{P} §4.1"),
    ("proxy_grm", "cold_start", "args.learning_rate", 1e-5, f"{P} §4.1, App. C.1"),
    ("proxy_grm", "cold_start", "args.lr_scheduler_type", "cosine", f"{P} §4.1, App. C.1"),
    ("proxy_grm", "cold_start", "args.num_train_epochs", 1, f"{P} §4.1, App. C.1"),
    ("proxy_grm", "cold_start", "args.warmup_steps", 0.05, PG_SFT),
    ("proxy_grm", "cold_start", "args.max_length", 8192, PG_SFT),
    ("proxy_grm", "cold_start", "blocks.image.max_pixels", 1003520, PG_SFT),
    ("proxy_grm", "policy", "args.loss_type", "grpo", f"{P} §3.3: GRPO"),
    ("proxy_grm", "policy", "args.num_generations", 7, f"{P} §4.1, App. C.2: G"),
    ("proxy_grm", "policy", "args.learning_rate", 5e-6, f"{P} §4.1, App. C.2"),
    ("proxy_grm", "policy", "args.num_train_epochs", 1, f"{P} App. C.2"),
    ("proxy_grm", "policy", "args.max_steps", -1, f"{P} App. C.2: one epoch"),
    ("proxy_grm", "policy", "args.@prompts_per_generation", 256, f"{P} App. C.2: training batch"),
    ("proxy_grm", "policy", "args.@prompts_per_update", 128, f"{P} App. C.2: mini-batch"),
    ("proxy_grm", "policy", "blocks.proxy.unparseable", "released", f"{P} Eq. 7: −1 otherwise"),
    ("proxy_grm", "policy", "blocks.proxy.weight", 1.0, f"{P} Eq. 8"),
    ("proxy_grm", "policy", "args.beta", 0.01, PG_RL + ": kl_loss_coef"),
    ("proxy_grm", "policy", "args.max_completion_length", 8192, PG_RL + ": max_response_length"),
    # -- Proxy-GRM proxy agent: Proxy-SFT -> Proxy-RL, "the same setups" [App. C] --
    ("proxy_agent", None, "model", "Qwen2.5-VL-7B-Instruct", f"{P} §4.1"),
    ("proxy_agent", "proxy_sft", "args.learning_rate", 1e-5, f"{P} §4.1, App. C"),
    ("proxy_agent", "proxy_sft", "args.lr_scheduler_type", "cosine", f"{P} §4.1, App. C"),
    ("proxy_agent", "proxy_sft", "args.num_train_epochs", 1, f"{P} §4.1, App. C"),
    ("proxy_agent", "proxy_sft", "args.warmup_steps", 0.05, PG_SFT),
    ("proxy_agent", "proxy_sft", "args.max_length", 8192, PG_SFT),
    ("proxy_agent", "proxy_rl", "args.loss_type", "grpo", f"{P} §3.3: GRPO"),
    ("proxy_agent", "proxy_rl", "args.num_generations", 7, f"{P} §4.1, App. C.2"),
    ("proxy_agent", "proxy_rl", "args.learning_rate", 5e-6, f"{P} §4.1, App. C.2"),
    ("proxy_agent", "proxy_rl", "args.num_train_epochs", 1, f"{P} App. C.2"),
    ("proxy_agent", "proxy_rl", "args.@prompts_per_generation", 256, f"{P} App. C.2"),
    ("proxy_agent", "proxy_rl", "args.@prompts_per_update", 128, f"{P} App. C.2"),
    ("proxy_agent", "proxy_rl", "args.beta", 0.01, PG_RL),
]

# configs/gpu runs every pipeline on one node of 8 GPUs; where a paper ran a stage on another
# number of GPUs, the gpu preset keeps the paper's rows per update instead of its split.
GPU_VALUES: dict[tuple[str, str, str], tuple[object, str]] = {
    ("embodied_brain", "sft", "args.gradient_accumulation_steps"): (4, EB_SFT + ": 32 per update on 8 GPUs"),
    ("reinforced_planning", "sft", "args.gradient_accumulation_steps"): (1, f"{R} Table 4: 8 per update"),
}


def _effective(path: Path) -> dict:
    from groundrl.train.config import effective_config, load_train_config

    return effective_config(load_train_config(path))


@pytest.fixture(scope="module")
def effective() -> dict[str, dict]:
    return {
        f"{d}/{p}": _effective(ROOT / "configs" / d / f"{p}.yaml") for d in ("papers", "gpu") for p in PRESETS
    }


def _stage(eff: dict, name: str | None) -> dict:
    if name is None:
        return eff
    found = [st for st in eff["stages"] if st["name"] == name]
    assert found, f"no stage {name!r}; stages: {[st['name'] for st in eff['stages']]}"
    return found[0]


def _lookup(eff: dict, stage: str | None, key: str) -> object:
    st = _stage(eff, stage)
    if key.startswith("args.@"):
        a = st["args"]
        per_update = a["per_device_train_batch_size"] * a["gradient_accumulation_steps"] * PROCESSES
        derived = {
            "@per_update": per_update,
            "@prompts_per_update": per_update / a["num_generations"] if a.get("num_generations") else None,
            "@prompts_per_generation": (a.get("generation_batch_size") or per_update) / a["num_generations"]
            if a.get("num_generations")
            else None,
        }
        return derived[key[len("args.") :]]
    value: object = st
    for part in key.split("."):
        assert isinstance(value, dict) and part in value, f"{stage}: no {key!r} (missing {part!r})"
        value = value[part]
    if key == "model":  # a hub id in configs/papers, a local path in configs/gpu
        return Path(str(value)).name
    return value


def _same(got: object, want: object) -> bool:
    if isinstance(want, bool) or isinstance(got, bool):
        return got is want
    if isinstance(want, (int, float)) and isinstance(got, (int, float)):
        return math.isclose(got, want, rel_tol=1e-9)
    return got == want


@pytest.mark.parametrize("where", ["papers", "gpu"])
@pytest.mark.parametrize("preset", PRESETS)
def test_effective_config_holds_the_papers_values(effective, where, preset):
    eff = effective[f"{where}/{preset}"]
    rows = [r for r in PAPER_VALUES if r[0] == preset]
    assert rows
    wrong = []
    for _, stage, key, want, cite in rows:
        if where == "gpu" and (preset, stage, key) in GPU_VALUES:
            want, cite = GPU_VALUES[(preset, stage, key)]
        got = _lookup(eff, stage, key)
        if not _same(got, want):
            wrong.append(f"{stage}.{key} = {got!r}, the paper says {want!r} [{cite}]")
    assert not wrong, f"configs/{where}/{preset}.yaml:\n" + "\n".join(wrong)


@pytest.mark.parametrize("where", ["papers", "gpu"])
@pytest.mark.parametrize("preset", PRESETS)
def test_the_file_names_its_recipe_and_the_papers_pipeline(effective, where, preset):
    eff = effective[f"{where}/{preset}"]
    assert eff["recipe"] == RECIPES[preset]
    assert eff["cpu_smoke_defaults"] is False
    paper = effective[f"papers/{preset}"]
    assert [(s["name"], s["kind"]) for s in eff["stages"]] == [
        (s["name"], s["kind"]) for s in paper["stages"]
    ]


@pytest.mark.parametrize("where", ["papers", "gpu"])
@pytest.mark.parametrize("preset", PRESETS)
def test_sft_stages_train_the_papers_epochs_and_grpo_stages_name_their_loss(effective, where, preset):
    """No SFT stage stops at a step count (CPU smoke defaults once made two of them train 2
    steps), each has the paper's epochs in the table; no GRPO stage falls through to TRL's
    default loss (`dapo`), each has the paper's loss in the table."""
    eff = effective[f"{where}/{preset}"]
    stated = {(r[1], r[2]) for r in PAPER_VALUES if r[0] == preset}
    for st in eff["stages"]:
        if st["trainer_config"] == "SFTConfig":
            assert st["args"]["max_steps"] == -1, st["name"]
            assert (st["name"], "args.num_train_epochs") in stated, (
                f"{st['name']}: no epochs row in the table"
            )
        if st["trainer_config"] == "GRPOConfig":
            assert (st["name"], "args.loss_type") in stated, f"{st['name']}: no loss row in the table"


def test_the_table_cites_a_source_for_every_row():
    cite = re.compile(
        r"^((EQA-RM|Argos|EmbodiedBrain|Reinforced Reasoning|Proxy-GRM) (§|Eq\.|Table|App\.)|released: \S+/\S+ \S+)"
    )
    keys = [(r[0], r[1], r[2]) for r in PAPER_VALUES]
    assert len(keys) == len(set(keys)), "a value is stated twice"
    assert all(cite.match(r[4]) for r in PAPER_VALUES), [r for r in PAPER_VALUES if not cite.match(r[4])]
    assert {r[0] for r in PAPER_VALUES} == set(PRESETS)


TAG = re.compile(r"\[(paper (§|Eq\.|Table|App\.)[^\]]*|released: [^\]]+|ours: [^\]]+)\]")
STRUCTURAL = {
    "name",
    "kind",
    "recipe",
    "output_dir",
    "data",
    "backend",
    "use_cpu",
    "report_to",
    "logging_steps",
}


@pytest.mark.parametrize("where", ["papers", "gpu"])
@pytest.mark.parametrize("preset", PRESETS)
def test_every_setting_line_says_where_it_comes_from(where, preset):
    """Each `key: value` line (structural keys aside) carries [paper §…], [released: …] or
    [ours: why] in its comment."""
    text = (ROOT / "configs" / where / f"{preset}.yaml").read_text(encoding="utf-8")
    bare = []
    for i, line in enumerate(text.splitlines(), start=1):
        m = re.match(r"^\s*(?:- )?([A-Za-z_]+):[ \t]*([^#\s][^#]*)?(#.*)?$", line)
        if m and m.group(2) and m.group(1) not in STRUCTURAL and not TAG.search(m.group(3) or ""):
            bare.append(f"{i}: {line.strip()}")
    assert not bare, f"configs/{where}/{preset}.yaml lines without a source:\n" + "\n".join(bare)


@pytest.mark.parametrize("where", ["papers", "gpu"])
@pytest.mark.parametrize("preset", PRESETS)
def test_print_config_prints_the_effective_config(effective, where, preset):
    """`groundrl train --config FILE --print-config` (no recipe argument: the file names it)
    prints the effective config the table is checked against, and loads no model (the
    files name models that are not on this machine)."""
    import yaml
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    path = ROOT / "configs" / where / f"{preset}.yaml"
    r = CliRunner().invoke(app, ["train", "--config", str(path), "--print-config"])
    assert r.exit_code == 0, r.output
    assert yaml.safe_load(r.stdout) == effective[f"{where}/{preset}"]


def test_every_preset_file_is_covered():
    for where in ("papers", "gpu"):
        assert sorted(p.stem for p in (ROOT / "configs" / where).glob("*.yaml")) == sorted(PRESETS), where
