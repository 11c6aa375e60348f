"""Perturbations for EQA-RM's contrastive GRPO and EmbodiedBrain's masking sweeps.

Every function takes a ``random.Random`` (its second argument), returns new objects and
never modifies its input: :func:`shuffle_frames` (temporal), :func:`mask_patches`
(spatial, 15% of 16×16 patches), :func:`shuffle_reasoning` (reasoning steps) and
:func:`mask_pixels` (random pixel masking).
"""

from groundrl.augment.frames import shuffle_frames
from groundrl.augment.masking import mask_pixels
from groundrl.augment.patches import mask_patches
from groundrl.augment.reasoning import shuffle_reasoning

__all__ = ["mask_patches", "mask_pixels", "shuffle_frames", "shuffle_reasoning"]
