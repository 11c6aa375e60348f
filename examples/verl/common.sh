#!/usr/bin/env bash
# Shared by the per-recipe scripts: verl 0.8's GRPO trainer with groundrl's
# compute_score_async as the custom reward function (verl awaits it; a batch's judge calls
# go to the judge together, see bench/verl_judge.py). Needs a GPU machine with verl installed (its own
# environment: verl pins numpy<2) and the data written by
#   groundrl export verl DATA.jsonl -o train.parquet --recipe RECIPE
# Settings come from the environment (defaults in brackets); anything after the script's
# name is passed to verl as more Hydra overrides.
#   MODEL [Qwen/Qwen2.5-VL-3B-Instruct, or a local path]   TRAIN [data/train.parquet]
#   VAL [$TRAIN]   MAX_PROMPT [2048]   MAX_RESPONSE [1024]
#   MAX_PIXELS [unset: the processor's own] pixels per image after the processor's resize,
#     MIN_PIXELS [3136 = 56x56, Qwen2-VL's own] (data.mm_processor_kwargs, passed by verl's
#     overlong filter and rollout to the processor call). Flat ints: verl hands a nested
#     `size` dict over as a DictConfig, which the processor rejects. transformers 5.23
#     applies them; 5.9 (verl 0.9.1's pin) ignores them in the call (measured): there,
#     set size.longest_edge in the model's preprocessor_config.json instead.
# Prompts longer than MAX_PROMPT tokens (text + image tokens) are dropped at load
# (data.filter_overlong_prompts=True) instead of failing at the first rollout step.
#   VERL_ENTRY [verl.trainer.main_ppo; verl.trainer.main_ppo_sync needs TransferQueue and torchdata]
# Batch geometry (defaults: 1 node x 8 GPUs), all checked before launch:
#   NODES [1]  GPUS [8] per node  BATCH [32] prompts per step  ROLLOUT_N [8] samples per prompt
#   MINI_BATCH [16] prompts per optimizer step (BATCH/MINI_BATCH updates per step)
#   MICRO [4] sequences per GPU per forward/backward (actor, rollout and ref log-probs)
#   TP [1] vLLM tensor parallel size
# The rules (verl's validate_config and its FSDP workers): MINI_BATCH <= BATCH and divides
# it; BATCH*ROLLOUT_N and MINI_BATCH*ROLLOUT_N are multiples of NODES*GPUS; the
# per-GPU mini-batch MINI_BATCH*ROLLOUT_N/(NODES*GPUS) is a multiple of MICRO; TP divides
# GPUS. Other machines, for example: one GPU: GPUS=1 BATCH=8 MINI_BATCH=4 MICRO=2;
# 2 nodes x 8: NODES=2 (the defaults still divide: 256 sequences over 16 GPUs).
# GROUNDRL_DRY_RUN=1 prints the overrides, one per line, instead of launching.
set -euo pipefail

# The Hydra overrides of the batch geometry above; exits (status 2) naming the setting
# to change when the numbers do not fit together.
verl_geometry() {
  local nodes=${NODES:-1} gpus=${GPUS:-8} batch=${BATCH:-32} n=${ROLLOUT_N:-8}
  local mini=${MINI_BATCH:-16} micro=${MICRO:-4} tp=${TP:-1}
  local world=$((nodes * gpus))
  local bad=""
  if [ "$mini" -gt "$batch" ] || [ $((batch % mini)) -ne 0 ]; then
    bad="MINI_BATCH ($mini) must divide BATCH ($batch)"
  elif [ $((batch * n % world)) -ne 0 ] || [ $((mini * n % world)) -ne 0 ]; then
    bad="BATCH*ROLLOUT_N ($((batch * n))) and MINI_BATCH*ROLLOUT_N ($((mini * n))) must be multiples of NODES*GPUS ($world)"
  elif [ $((mini * n / world % micro)) -ne 0 ]; then
    bad="MICRO ($micro) must divide the per-GPU mini-batch MINI_BATCH*ROLLOUT_N/(NODES*GPUS) ($((mini * n / world)))"
  elif [ $((gpus % tp)) -ne 0 ]; then
    bad="TP ($tp) must divide GPUS ($gpus)"
  fi
  if [ -n "$bad" ]; then
    echo "batch geometry: $bad; see the top of examples/verl/common.sh" >&2
    exit 2
  fi
  GEOMETRY=(
    "data.train_batch_size=${batch}"
    "actor_rollout_ref.rollout.n=${n}"
    "actor_rollout_ref.actor.ppo_mini_batch_size=${mini}"
    "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=${micro}"
    "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=${micro}"
    "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=${micro}"
    "actor_rollout_ref.rollout.tensor_model_parallel_size=${tp}"
    "trainer.n_gpus_per_node=${gpus}"
    "trainer.nnodes=${nodes}"
  )
}

# Print the overrides (dry run) or launch verl with them.
verl_launch() {
  if [ "${GROUNDRL_DRY_RUN:-0}" = 1 ]; then
    printf '%s\n' "$@"
  else
    python3 -m "${VERL_ENTRY:-verl.trainer.main_ppo}" "$@"
  fi
}

groundrl_verl() {
  local recipe=$1; shift
  local reward_py
  reward_py=$(python3 -c 'import groundrl.integrations.verl as m; print(m.__file__)')
  verl_geometry
  local overrides=(
    algorithm.adv_estimator=grpo
    "data.train_files=${TRAIN:-data/train.parquet}"
    "data.val_files=${VAL:-${TRAIN:-data/train.parquet}}"
    "data.max_prompt_length=${MAX_PROMPT:-2048}"
    "data.max_response_length=${MAX_RESPONSE:-1024}"
    data.image_key=images
    data.filter_overlong_prompts=True
    data.reward_fn_key=data_source
    "actor_rollout_ref.model.path=${MODEL:-Qwen/Qwen2.5-VL-3B-Instruct}"
    actor_rollout_ref.rollout.name=vllm
    actor_rollout_ref.actor.use_kl_loss=false
    "${GEOMETRY[@]}"
    trainer.logger=[console]
    "trainer.project_name=groundrl"
    "trainer.experiment_name=${recipe}"
    "reward.custom_reward_function.path=${reward_py}"
    reward.custom_reward_function.name=compute_score_async
    "+reward.custom_reward_function.reward_kwargs.recipe=${recipe}"
  )
  if [ -n "${MAX_PIXELS:-}" ]; then
    overrides+=(
      "+data.mm_processor_kwargs.max_pixels=${MAX_PIXELS}"
      "+data.mm_processor_kwargs.min_pixels=${MIN_PIXELS:-3136}"
    )
  fi
  overrides+=("${RECIPE_OVERRIDES[@]}" "$@")
  verl_launch "${overrides[@]}"
}
