#!/usr/bin/env bash
# EQA-RM: GRPO of the generative reward model on critique + score (accuracy + format).
# C-GRPO's perturbations run in groundrl's own trainer (groundrl train, docs/reward-models.md).
source "$(dirname "$0")/common.sh"
RECIPE_OVERRIDES=()
groundrl_verl eqa_rm "$@"
