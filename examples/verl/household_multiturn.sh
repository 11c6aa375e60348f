#!/usr/bin/env bash
# Multi-turn GRPO with groundrl's household simulator in verl 0.8's rollout: every row is
# played by the groundrl_household agent loop (household_multiturn.yaml), which writes the
# episode reward into verl's rm_scores itself, so no custom reward function is set.
# Needs a GPU machine with verl (its own environment: verl pins numpy<2) and groundrl.
# Rows first (task JSON in extra_info["task"], agent_name groundrl_household):
#   python -m groundrl.integrations.verl_agent_loop rows data/household_train.parquet --n 512 --seed 0
#   python -m groundrl.integrations.verl_agent_loop rows data/household_val.parquet --n 64 --seed 1 --split val
# Settings come from the environment (defaults in brackets); anything after the script's
# name is passed to verl as more Hydra overrides.
#   MODEL [Qwen/Qwen2.5-3B-Instruct, or a local path]   TRAIN [data/household_train.parquet]
#   VAL [data/household_val.parquet]   MAX_PROMPT [1024]
#   MAX_RESPONSE [1024: every turn and its feedback together]
#   AGENT_LOOP_CONFIG [this directory's household_multiturn.yaml]
#   the batch geometry (NODES, GPUS, BATCH, ROLLOUT_N, MINI_BATCH, MICRO, TP) and VERL_ENTRY
#   as in common.sh (defaults: 1 node x 8 GPUs), checked before launch
# GROUNDRL_DRY_RUN=1 prints the overrides, one per line, instead of launching.
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
config=${AGENT_LOOP_CONFIG:-$here/household_multiturn.yaml}
verl_geometry
overrides=(
  algorithm.adv_estimator=grpo
  "data.train_files=${TRAIN:-data/household_train.parquet}"
  "data.val_files=${VAL:-data/household_val.parquet}"
  "data.max_prompt_length=${MAX_PROMPT:-1024}"
  "data.max_response_length=${MAX_RESPONSE:-1024}"
  "actor_rollout_ref.model.path=${MODEL:-Qwen/Qwen2.5-3B-Instruct}"
  actor_rollout_ref.rollout.name=vllm
  actor_rollout_ref.rollout.mode=async
  "actor_rollout_ref.rollout.agent.agent_loop_config_path=${config}"
  actor_rollout_ref.rollout.agent.default_agent_loop=groundrl_household
  actor_rollout_ref.actor.use_kl_loss=false
  "${GEOMETRY[@]}"
  trainer.logger=[console]
  trainer.project_name=groundrl
  trainer.experiment_name=household_multiturn
)
overrides+=("$@")
if [ "${GROUNDRL_DRY_RUN:-0}" != 1 ]; then
  python3 -m groundrl.integrations.verl_agent_loop check "$config"
fi
verl_launch "${overrides[@]}"
