"""Data curation: EQA-RM rejective fine-tuning, Argos verifier filtering, EmbodiedBrain
consensus rejection sampling and masking difficulty, Reinforced Reasoning's per-step
decomposition, Step-GRPO hints — pure rules plus streaming, resumable pipelines."""

from groundrl.curate.consensus import consensus
from groundrl.curate.decompose import decompose
from groundrl.curate.difficulty import mask_difficulty
from groundrl.curate.rejective import rejective_filter
from groundrl.curate.step_hints import hinted_prompt, step_hint

__all__ = ["consensus", "decompose", "hinted_prompt", "mask_difficulty", "rejective_filter", "step_hint"]
