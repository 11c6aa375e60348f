#!/usr/bin/env bash
# Shared by the single-turn recipe scripts: GRPO-style training on OpenRLHF 0.11
# (openrlhf.cli.train_ppo_ray, submitted as a Ray job) with a groundrl recipe's reward,
# either as OpenRLHF's reward-function file or from `groundrl serve` over HTTP. Needs a
# GPU machine with OpenRLHF and vLLM, a Ray cluster (`ray start --head`) and groundrl
# importable on every node. The data: a JSONL of prompts (--data.input_key, default
# `prompt`), the recipe's gold field (--data.label_key) and optional `images`.
#
# Settings from the environment (defaults in brackets):
#   REWARD [file]: file   -- --reward.remote_url is groundrl/integrations/openrlhf.py; the
#                            recipe, its options and judge reach the rollout actors in the
#                            job's runtime_env (GROUNDRL_RECIPE, GROUNDRL_OPTIONS, GROUNDRL_JUDGE_*)
#                  server -- --reward.remote_url is REWARD_URL, a `groundrl serve --recipe R`
#                            you started [http://127.0.0.1:5000/get_reward]
#   GROUNDRL_PROMPTS [data/train.jsonl]: the prompt JSONL file (named so that it cannot
#       be the docs' DATA folder; read by the job's driver on the Ray head node)
#   MODEL [Qwen/Qwen2.5-VL-3B-Instruct]  INPUT_KEY [prompt]
#   IMAGE_KEY [images]  GPUS [8]  N [8] (samples per prompt)  BATCH [32] (prompts per rollout)
#   MAX_IMAGES [0: text only] images per prompt (--data.max_images_per_prompt, vLLM's
#     limit_mm_per_prompt); image rows need one <image> tag per image in the prompt text,
#     the placeholder OpenRLHF's PromptDataset turns into an image part (`groundrl export
#     openrlhf` writes such rows)
#   MAX_LEN [4096]  SAVE [./ckpt/<recipe>]  RAY_ADDRESS [http://127.0.0.1:8265]  PYTHON [python3]
#   KL_COEF [the recipe's paper preset beta, set by each recipe script]
#   JUDGE_URL, JUDGE_MODEL: the judge of judge-backed recipes (GROUNDRL_JUDGE_* for the file)
# Anything after the script's name is passed to OpenRLHF.
# GROUNDRL_DRY_RUN=1 prints the command (copy-pasteable: one flag per `\`-continued line)
# and runs nothing.
set -euo pipefail

# groundrl_print_command ARGV...: the command as shell text that runs as printed: each
# argument quoted where it needs it, each --flag (with its value) on its own line.
groundrl_print_command() {
  local arg line="" out=""
  for arg in "$@"; do
    [[ $arg =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]] || arg=${arg@Q}
    if [[ $arg == --* && -n $line ]]; then
      out+="$line \\"$'\n'
      line="  $arg"
    else
      line+="${line:+ }$arg"
    fi
  done
  printf '%s\n' "$out$line"
}

# groundrl_check_prompts FILE: refuse a folder (e.g. the docs' DATA) before OpenRLHF's
# raw IsADirectoryError.
groundrl_check_prompts() {
  if [ -d "$1" ]; then
    echo "GROUNDRL_PROMPTS=$1 is a folder: set it to the JSONL file of prompts" >&2
    exit 2
  fi
}

# groundrl_openrlhf RECIPE LABEL_KEY KL: the recipe's reward with RECIPE_OPTIONS (a JSON
# object, set by the recipe script) and JUDGE_URL/JUDGE_MODEL when given; KL is the
# recipe's paper preset beta (configs/papers/RECIPE.yaml), KL_COEF overrides it.
groundrl_openrlhf() {
  local recipe=$1 label_key=$2 kl=${KL_COEF:-$3}; shift 3
  local py=${PYTHON:-python3} reward=${REWARD:-file} remote
  local gpus=${GPUS:-8} prompts=${GROUNDRL_PROMPTS:-data/train.jsonl}
  groundrl_check_prompts "$prompts"
  case "$reward" in
    file) remote=$("$py" -c 'import groundrl.integrations.openrlhf as m; print(m.__file__)') ;;
    server) remote=${REWARD_URL:-http://127.0.0.1:5000/get_reward} ;;
    *) echo "REWARD must be file or server, got '$reward'" >&2; exit 2 ;;
  esac
  local runtime_env
  runtime_env=$(RECIPE="$recipe" "$py" -c '
import json, os
env = {"GROUNDRL_RECIPE": os.environ["RECIPE"]}
if os.environ.get("RECIPE_OPTIONS"):
    env["GROUNDRL_OPTIONS"] = os.environ["RECIPE_OPTIONS"]
if os.environ.get("JUDGE_URL"):
    env.update(GROUNDRL_JUDGE_BACKEND="openai", GROUNDRL_JUDGE_URL=os.environ["JUDGE_URL"],
               GROUNDRL_JUDGE_MODEL=os.environ.get("JUDGE_MODEL", "judge"))
print(json.dumps({"env_vars": env}))')
  local args=(
    --reward.remote_url "$remote"
    --data.prompt_dataset "$prompts"
    --data.input_key "${INPUT_KEY:-prompt}"
    --data.label_key "$label_key"
    --data.image_key "${IMAGE_KEY:-images}"
    --data.max_images_per_prompt "${MAX_IMAGES:-0}"
    --data.apply_chat_template
    --data.max_len "${MAX_LEN:-4096}"
    --actor.model_name_or_path "${MODEL:-Qwen/Qwen2.5-VL-3B-Instruct}"
    --actor.num_nodes 1
    --actor.num_gpus_per_node "$gpus"
    --ref.num_nodes 1
    --ref.num_gpus_per_node "$gpus"
    --vllm.num_engines "$gpus"
    --vllm.tensor_parallel_size 1
    --vllm.gpu_memory_utilization 0.6
    --vllm.enable_sleep
    --train.colocate_all
    --algo.advantage.estimator group_norm
    --algo.dynamic_filtering_enable
    --algo.dynamic_filtering_range 0 1
    --algo.kl.use_loss
    --algo.kl.estimator k3
    --algo.kl.init_coef "$kl"
    --rollout.n_samples_per_prompt "${N:-8}"
    --rollout.batch_size "${BATCH:-32}"
    --rollout.micro_batch_size 4
    --rollout.temperature 1.0
    --train.batch_size "${BATCH:-32}"
    --train.micro_batch_size 1
    --train.num_episodes 1
    --actor.adam.lr 1e-6
    --actor.gradient_checkpointing_enable
    --ds.zero_stage 3
    --ckpt.output_dir "${SAVE:-./ckpt/$recipe}"
    --logger.logging_steps 1
    "$@"
  )
  local cmd=(ray job submit --address="${RAY_ADDRESS:-http://127.0.0.1:8265}" --runtime-env-json="$runtime_env"
             -- python3 -m openrlhf.cli.train_ppo_ray "${args[@]}")
  if [ "${GROUNDRL_DRY_RUN:-0}" = 1 ]; then
    groundrl_print_command "${cmd[@]}"
  else
    "${cmd[@]}"
  fi
}
