#!/usr/bin/env bash
# Argos: outcome-gated grounding reward (spatial points need points_masks in extra_info);
# TAU sets the accuracy gate.
source "$(dirname "$0")/common.sh"
# Argos samples up to 32 video frames [Argos §4.1] and states no pixel cap or prompt length:
# EQA-RM's 401,408 px per image and an 8192-token prompt [ours]; a 32-frame row at that
# cap (16,384 image tokens) is dropped by the overlong filter: lower MAX_PIXELS for those.
MAX_PIXELS=${MAX_PIXELS:-401408}
MAX_PROMPT=${MAX_PROMPT:-8192}
RECIPE_OVERRIDES=("+reward.custom_reward_function.reward_kwargs.recipe_options.tau=${TAU:-0.5}")
groundrl_verl argos "$@"
