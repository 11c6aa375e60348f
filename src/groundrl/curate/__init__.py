"""Data curation: EQA-RM rejective fine-tuning, Argos verifier filtering, EmbodiedBrain
consensus rejection sampling and masking difficulty, Reinforced Reasoning's per-step
decomposition and online accuracy filtering, Step-GRPO hints — pure rules plus
streaming, resumable pipelines (:mod:`groundrl.curate.pipelines`)."""

from groundrl.curate.accuracy_filter import OnlineFilterBuffer, group_accepted, group_keep_mask
from groundrl.curate.consensus import categorize, consensus, consensus_batch, exact_judge
from groundrl.curate.decompose import decompose
from groundrl.curate.difficulty import difficulty_weight, keep_by_difficulty, mask_difficulty
from groundrl.curate.rejective import read_score, rejective_filter
from groundrl.curate.step_hints import hint_sample, hinted_prompt, step_hint

__all__ = [
    "OnlineFilterBuffer",
    "categorize",
    "consensus",
    "consensus_batch",
    "decompose",
    "difficulty_weight",
    "exact_judge",
    "group_accepted",
    "group_keep_mask",
    "hint_sample",
    "hinted_prompt",
    "keep_by_difficulty",
    "mask_difficulty",
    "read_score",
    "rejective_filter",
    "step_hint",
]
