"""Reward-model stage kinds for staged train configs (:mod:`groundrl.train.stages`):
``rft``, ``cgrpo`` (EQA-RM), ``proxy_grpo`` and ``proxy_rl`` (Proxy-GRM).

Registered with :func:`groundrl.train.stages.register_stage_kind` when imported; the
runners import torch/TRL only when a stage runs.
"""

from __future__ import annotations
