#!/usr/bin/env bash
# EmbodiedBrain: rule format reward plus the planning GRM (0.8 GRM + 0.2 rule) served
# OpenAI-compatibly at JUDGE_URL (model JUDGE_MODEL); without JUDGE_URL the rule reward alone.
source "$(dirname "$0")/common.sh"
RECIPE_OVERRIDES=()
if [ -n "${JUDGE_URL:-}" ]; then
  RECIPE_OVERRIDES+=(
    "+reward.custom_reward_function.reward_kwargs.judge.backend=openai"
    "+reward.custom_reward_function.reward_kwargs.judge.model=${JUDGE_MODEL:-planning-grm}"
    "+reward.custom_reward_function.reward_kwargs.judge.url=${JUDGE_URL}"
  )
fi
groundrl_verl embodied_brain "$@"
