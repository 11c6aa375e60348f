"""Perturbations for contrastive training (EQA-RM C-GRPO) and masking sweeps: every
function is seeded and returns new objects, never mutating its input."""

from groundrl.augment.frames import shuffle_frames
from groundrl.augment.patches import mask_patches, mask_pixels
from groundrl.augment.reasoning import shuffle_reasoning

__all__ = ["mask_patches", "mask_pixels", "shuffle_frames", "shuffle_reasoning"]
