#!/usr/bin/env bash
# Argos: outcome-gated grounding reward (spatial points need points_masks in extra_info);
# TAU sets the accuracy gate.
source "$(dirname "$0")/common.sh"
RECIPE_OVERRIDES=("+reward.custom_reward_function.reward_kwargs.recipe_options.tau=${TAU:-0.5}")
groundrl_verl argos "$@"
