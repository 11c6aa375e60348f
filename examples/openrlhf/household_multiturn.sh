#!/usr/bin/env bash
# Multi-turn GRPO on OpenRLHF 0.11 with groundrl's household simulator in the loop:
# OpenRLHF's MultiTurnAgentExecutor runs groundrl.integrations.openrlhf_household (loaded
# with --train.agent_func_path); each sample is one episode (plan, feedback, re-plan)
# and its reward is the environment's. Needs a GPU machine with OpenRLHF and vLLM, a
# Ray cluster (`ray start --head`), and groundrl importable on every node.
#
# Settings from the environment (defaults in brackets):
#   MODEL [Qwen/Qwen2.5-1.5B-Instruct, or a local path]
#   GROUNDRL_PROMPTS [${TMPDIR:-/tmp}/groundrl-household-<TASKS>-<SEED>.jsonl]: the prompt
#       file (named so that it cannot be the docs' DATA folder); when it does not exist,
#       TASKS [512] procedural tasks from SEED [0] are written to it (never into the repo)
#   GPUS [1]  N [8] (samples per prompt)  BATCH [32] (prompts per rollout)
#   MAX_LEN [4096] (prompt + every turn + every feedback)  SAVE [./ckpt/household]
#   RAY_ADDRESS [http://127.0.0.1:8265]   PYTHON [python3]
#   KL_COEF [0.001: ours; the reinforced_planning preset has 0, its paper's init_kl_coef
#       (Reinforced Planning App. C.2, Table 5), for single-turn plans]
# The agent's own settings are every GROUNDRL_ENV_* variable you export (MAX_TURNS,
# REWARD, SUCCESS_BONUS, TURN_PENALTY, INVALID_PENALTY, MAX_STEPS, MAX_INVALID, VOCAB,
# FEEDBACK_ROLE [user: a chat turn], FEEDBACK_TEMPLATE [raw only]) plus GROUNDRL_STOP_TOKENS: they go to the rollout actors in the
# job's runtime_env. Anything after the script's name is passed to OpenRLHF.
# GROUNDRL_DRY_RUN=1 prints the command (copy-pasteable: one flag per `\`-continued line)
# and writes nothing.
source "$(dirname "$0")/common.sh"

PY=${PYTHON:-python3}
agent=$("$PY" -c 'import groundrl.integrations.openrlhf_household as m; print(m.__file__)')
data=${GROUNDRL_PROMPTS:-${TMPDIR:-/tmp}/groundrl-household-${TASKS:-512}-${SEED:-0}.jsonl}
groundrl_check_prompts "$data"
gpus=${GPUS:-1}
runtime_env=$("$PY" -c '
import json, os
env = {k: v for k, v in os.environ.items() if k.startswith("GROUNDRL_ENV_") or k == "GROUNDRL_STOP_TOKENS"}
print(json.dumps({"env_vars": env}))')

args=(
  --train.agent_func_path "$agent"
  --data.prompt_dataset "$data"
  --data.input_key input
  --data.label_key label
  --data.apply_chat_template
  --data.max_len "${MAX_LEN:-4096}"
  --actor.model_name_or_path "${MODEL:-Qwen/Qwen2.5-1.5B-Instruct}"
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
  --algo.kl.use_loss
  --algo.kl.estimator k3
  --algo.kl.init_coef "${KL_COEF:-0.001}"
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
  --ckpt.output_dir "${SAVE:-./ckpt/household}"
  --logger.logging_steps 1
  "$@"
)
cmd=(ray job submit --address="${RAY_ADDRESS:-http://127.0.0.1:8265}" --runtime-env-json="$runtime_env"
     -- python3 -m openrlhf.cli.train_ppo_ray "${args[@]}")

if [ "${GROUNDRL_DRY_RUN:-0}" = 1 ]; then
  groundrl_print_command "${cmd[@]}"
  exit 0
fi
if [ ! -f "$data" ]; then
  "$PY" -c '
import sys
from groundrl.integrations.openrlhf_household import write_prompt_dataset
from groundrl.sim.generate import generate_tasks
n = write_prompt_dataset(generate_tasks(int(sys.argv[2]), seed=int(sys.argv[3])), sys.argv[1])
print(f"wrote {n} household prompts to {sys.argv[1]}")' "$data" "${TASKS:-512}" "${SEED:-0}"
fi
"${cmd[@]}"
