"""Data-curation rules (pure functions): EQA-RM rejective fine-tuning, Reinforced
Reasoning's per-step decomposition, EmbodiedBrain's Step-GRPO hints."""

from groundrl.curate.decompose import decompose
from groundrl.curate.rejective import rejective_filter
from groundrl.curate.step_hints import hinted_prompt, step_hint

__all__ = ["decompose", "hinted_prompt", "rejective_filter", "step_hint"]
