#!/usr/bin/env bash
# EQA-RM: GRPO of the generative reward model on critique + score (accuracy + format).
# C-GRPO's perturbations run in groundrl's own trainer (groundrl train, docs/reward-models.md).
source "$(dirname "$0")/common.sh"
# Budget for one prompt of 5 keyframes [EQA-RM §5.1, App. B Table 5]:
# at most 401,408 px per frame (Table 5, "Max Pixels") = 512 image tokens of 28x28 px, so
# 2,560 image tokens per prompt; max prompt 8142 and completion 768 tokens (Table 5).
MAX_PIXELS=${MAX_PIXELS:-401408}
MAX_PROMPT=${MAX_PROMPT:-8142}
MAX_RESPONSE=${MAX_RESPONSE:-768}
RECIPE_OVERRIDES=()
groundrl_verl eqa_rm "$@"
