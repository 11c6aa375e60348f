#!/usr/bin/env bash
# Proxy-GRM: accuracy + 0.5·format + the proxy agent's verdict (served at JUDGE_URL).
source "$(dirname "$0")/common.sh"
RECIPE_OVERRIDES=(
  "+reward.custom_reward_function.reward_kwargs.judge.backend=openai"
  "+reward.custom_reward_function.reward_kwargs.judge.model=${JUDGE_MODEL:-proxy-agent}"
  "+reward.custom_reward_function.reward_kwargs.judge.url=${JUDGE_URL:-http://127.0.0.1:8000/v1}"
)
groundrl_verl proxy_grm "$@"
