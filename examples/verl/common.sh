#!/usr/bin/env bash
# Shared launcher for the per-recipe scripts: verl 0.8's PPO/GRPO trainer with groundrl's
# compute_score as the custom reward function. Needs a GPU machine with verl installed
# (its own environment: verl pins numpy<2) and the data written by
#   groundrl export verl DATA.jsonl -o train.parquet --recipe RECIPE
# Settings come from the environment (defaults in brackets); anything after the script's
# name is passed to verl as more Hydra overrides.
#   MODEL [Qwen/Qwen2.5-VL-3B-Instruct, or a local path]   TRAIN [data/train.parquet]
#   VAL [$TRAIN]   GPUS [1]   ROLLOUT_N [8]   BATCH [32]   MAX_PROMPT [2048]   MAX_RESPONSE [1024]
# GROUNDRL_DRY_RUN=1 prints the overrides, one per line, instead of launching.
set -euo pipefail

groundrl_verl() {
  local recipe=$1; shift
  local reward_py
  reward_py=$(python3 -c 'import groundrl.integrations.verl as m; print(m.__file__)')
  local overrides=(
    algorithm.adv_estimator=grpo
    "data.train_files=${TRAIN:-data/train.parquet}"
    "data.val_files=${VAL:-${TRAIN:-data/train.parquet}}"
    "data.train_batch_size=${BATCH:-32}"
    "data.max_prompt_length=${MAX_PROMPT:-2048}"
    "data.max_response_length=${MAX_RESPONSE:-1024}"
    data.image_key=images
    data.reward_fn_key=data_source
    "actor_rollout_ref.model.path=${MODEL:-Qwen/Qwen2.5-VL-3B-Instruct}"
    "actor_rollout_ref.rollout.n=${ROLLOUT_N:-8}"
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.actor.use_kl_loss=false
    "trainer.n_gpus_per_node=${GPUS:-1}"
    trainer.nnodes=1
    trainer.logger=[console]
    "trainer.project_name=groundrl"
    "trainer.experiment_name=${recipe}"
    "reward.custom_reward_function.path=${reward_py}"
    reward.custom_reward_function.name=compute_score
    "+reward.custom_reward_function.reward_kwargs.recipe=${recipe}"
  )
  overrides+=("${RECIPE_OVERRIDES[@]}" "$@")
  if [ "${GROUNDRL_DRY_RUN:-0}" = 1 ]; then
    printf '%s\n' "${overrides[@]}"
  else
    python3 -m verl.trainer.main_ppo "${overrides[@]}"
  fi
}
