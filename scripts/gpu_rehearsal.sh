#!/usr/bin/env bash
# GPU rehearsal (issue 25 item 7, issue 35 item 5): a few steps of every training path, to
# check a CUDA machine before a real run. Never part of `make test`. Usage, from the
# repository root on a machine with CUDA:
#   scripts/gpu_rehearsal.sh [--allow-skip] [--plan] [WORK_DIR]   (default: runs/gpu-rehearsal)
# --plan (or REHEARSAL_DRY=1) prints every step and the command it would run, runs nothing
# and needs no CUDA.
# Environment, each interpreter used for everything of its trainer (the one probed is the one run):
#   PY  [.venv/bin/python]                      TRL and groundrl (probed for CUDA first)
#   CPY [.venv-cluster/bin/python, else $PY]    verl: it needs verl, vLLM, Ray and CUDA torch there
#   OPY [$CPY]                                  OpenRLHF: openrlhf, vLLM, Ray, DeepSpeed, CUDA torch
# verl's and OpenRLHF's launch scripts call `python3`: their interpreter's folder goes first
# on PATH, and a step fails when `python3` there is not that interpreter.
# Each step prints RAN, SKIPPED (with why) or FAILED (its log's last lines). The script fails
# when it proves nothing: exit 2 without CUDA; exit 1 when a step failed, when a step was
# skipped unless --allow-skip, and when a training log (scripts/rehearsal_check.py) shows a
# non-finite loss or reward, a zero gradient on every step, no reward variance in any group,
# a reward that did not move (the real-model TRL step), or logged rewards that differ from
# `groundrl score` re-scoring the logged completions. It ends with a summary of what ran.
set -uo pipefail

allow_skip=0 plan=${REHEARSAL_DRY:-0} work_arg=""
for arg in "$@"; do
  case $arg in
    --allow-skip) allow_skip=1 ;;
    --plan) plan=1 ;;
    -h | --help) sed -n '2,19p' "$0" | cut -c3-; exit 0 ;;
    -*) echo "gpu_rehearsal: unknown option $arg (--allow-skip, --plan, -h)" >&2; exit 2 ;;
    *) work_arg=$arg ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$root/.venv/bin/python}
CPY=${CPY:-$root/.venv-cluster/bin/python}
[ -x "$CPY" ] || CPY=$PY
OPY=${OPY:-$CPY}
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
scripts=$root/scripts
rp_data=$root/configs/data/reinforced_planning_sft.jsonl
rp_map=$root/configs/data/reinforced_planning_sft.action_map.json
summary=()
failed=0
skipped=0

note() { summary+=("$1"); echo "== $1"; }
skip() { skipped=1; note "SKIPPED $1"; }
step() { # step NAME LOG CMD...: run CMD, logging to LOG; print RAN / FAILED (--plan: the command)
  local name=$1 log=$2; shift 2
  if [ "$plan" = 1 ]; then
    note "PLANNED $name"
    printf '         '; printf ' %q' "$@"; printf '\n'
    return 0
  fi
  echo "-- $name (log: $log)"
  if "$@" >"$log" 2>&1; then note "RAN     $name"; else
    local rc=$?
    failed=1; note "FAILED  $name (exit $rc; last lines of $log below)"; tail -n 15 "$log"; return 1; fi
}
check() { # check NAME RUN_DIR STAGE [checker flags]: the run's log.jsonl must prove training
  local name=$1 run=$2 stage=$3 what="steps, finite loss/reward"; shift 3
  [[ " $* " == *" --code-path-only "* ]] || what+=", non-zero gradient, reward variance"
  [[ " $* " == *" --reward-moved "* ]] && what+=", the reward moved"
  [[ " $* " == *" --samples "* ]] && what+=", rewards = groundrl score offline"
  step "$name: log check ($what)" "$run.$stage.check.log" \
    "$PY" "$scripts/rehearsal_check.py" "$run" --stage "$stage" --python "$PY" "$@"
}
needs() { # needs WHAT INTERPRETER MODULE...: false (and SKIPPED) when a module, or CUDA torch, is missing
  local what=$1 py=$2 mod; shift 2
  [ "$plan" = 1 ] && return 0
  for mod in "$@" cuda; do
    local probe="import $mod"
    [ "$mod" = cuda ] && probe='import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'
    if ! "$py" -c "$probe" 2>/dev/null; then
      skip "$what: $py lacks $mod (install it in that environment, or point the variable at one that has it)"
      return 1
    fi
  done
}
fresh() { # fresh NAME: an empty $work/NAME (a re-run must not read the last run's logs or dumps)
  [ "$plan" = 1 ] || { rm -rf "${work:?}/$1" && mkdir -p "$work/$1"; }
}
on_path() { # on_path PY: put PY's folder first on PATH; fail when `python3` there is another interpreter
  local bin; bin=$(dirname "$1")
  export PATH="$bin:$PATH"
  [ "$plan" = 1 ] && return 0
  local want got
  want=$("$1" -c 'import sys; print(sys.prefix)')
  got=$(python3 -c 'import sys; print(sys.prefix)' 2>/dev/null)
  if [ "$want" != "$got" ]; then
    failed=1; note "FAILED  python3 on PATH is $got, not $1's environment ($want): the launch scripts would run it"
    return 1
  fi
}

# -- 1. TRL on a real pretrained model, bf16: SFT then GRPO (vLLM colocate when installed).
# SmolLM2-135M-Instruct from its pinned PyPI wheel (the project's real-model fixture): a random
# model earns no reward, so only a real one can show a non-zero gradient. Its logged
# completions are re-scored offline; the reward must move between the first and last steps.
# Completions up to 768 tokens: the SFT targets are 326-616 SmolLM2 tokens, and at 256 even a
# copy of the gold target is cut mid-JSON and scores 0 (measured with groundrl score).
rehearse_trl() {
  local vllm_lines="" how=", no vLLM installed: HF generate"
  if [ "$plan" = 1 ] || "$PY" -c 'import vllm' 2>/dev/null; then
    vllm_lines=$'    use_vllm: true\n    vllm_mode: colocate\n    vllm_gpu_memory_utilization: 0.3' how=", vLLM colocate"
  fi
  fresh trl
  step "real-model fixture (groundrl models get smollm2-135m-instruct)" "$work/model.log" \
    "$PY" -m groundrl models get smollm2-135m-instruct
  real="$work/smollm2-135m-instruct (the path the fixture step prints)"
  [ "$plan" = 1 ] || real=$(tail -n 1 "$work/model.log")
  cat >"$work/trl.yaml" <<YAML
recipe: reinforced_planning
model: $real
output_dir: $work/trl
recipe_options: {action_map: $rp_map}
stages:
  - name: sft
    kind: sft
    data: $rp_data
    sft: {max_steps: 8, per_device_train_batch_size: 4, learning_rate: 1.0e-4, bf16: true, use_cpu: false}
  - name: grpo
    kind: grpo
    data: $rp_data
    grpo:
      max_steps: 4
      num_generations: 8
      per_device_train_batch_size: 8
      max_completion_length: 768
      learning_rate: 1.0e-5
      temperature: 1.0
      bf16: true
      use_cpu: false
      log_completions: true
${vllm_lines}
YAML
  step "TRL SFT -> GRPO bf16 (SmolLM2-135M-Instruct$how)" "$work/trl.log" \
    "$PY" -m groundrl train --config "$work/trl.yaml" || return 0
  check "TRL SFT" "$work/trl" sft --min-steps 8
  step "TRL GRPO: logged completions with their data rows" "$work/trl.samples.log" \
    "$PY" "$scripts/rehearsal_logs.py" trl-samples "$work/trl/grpo" "$rp_data" -o "$work/trl/samples.jsonl"
  check "TRL GRPO" "$work/trl" grpo --min-steps 4 --reward-moved \
    --samples "$work/trl/samples.jsonl" --recipe reinforced_planning -O "action_map=$rp_map"
}

# -- 1b. TRL with image rows (C-GRPO on EQA-RM keyframes) on the tiny random Qwen2.5-VL, bf16:
# the code path of perturbed images on CUDA (a random model has no signal: steps and finite
# values are checked, not the gradient)
rehearse_cgrpo() {
  fresh cgrpo
  cat >"$work/cgrpo.yaml" <<YAML
recipe: eqa_rm
model: tiny
data: $root/configs/data/eqa_rm_episodes.jsonl
output_dir: $work/cgrpo
image: {min_pixels: 3136, max_pixels: 3136}
stages:
  - name: cgrpo
    kind: cgrpo
    inputs: {keyframes: 5}
    cgrpo: {types: [temporal, spatial, reasoning]}
    grpo: {max_steps: 2, num_generations: 2, per_device_train_batch_size: 4, max_completion_length: 16, bf16: true, use_cpu: false}
YAML
  step "TRL C-GRPO bf16 with image rows (tiny Qwen2.5-VL)" "$work/cgrpo.log" \
    "$PY" -m groundrl train --config "$work/cgrpo.yaml" || return 0
  check "TRL C-GRPO" "$work/cgrpo" cgrpo --min-steps 2 --code-path-only
}

# -- 1c. every stage kind on 2 processes (gloo; CPU ranks, so one GPU suffices)
rehearse_two_processes() {
  step "every stage kind on 2 processes (tests/train/test_two_processes.py)" "$work/two_processes.log" \
    env OMP_NUM_THREADS=1 "$PY" -m pytest -q -p no:cacheprovider "$root/tests/train/test_two_processes.py"
}

# -- 1d. one configs/gpu preset as shipped (SFT -> GRPO with the online filter, reporters,
# vLLM colocate when installed) on the real-model fixture, 2 steps per stage: the keys it
# changes are SHRINK_* in scripts/rehearsal_data.py. The filter may keep no group in 2 steps
# (its `repeat` fallback then trains on nothing): its GRPO stage is checked for steps and finite
# values, its SFT stage for a non-zero gradient too.
rehearse_gpu_stage() {
  local vllm=no-vllm how=", no vLLM installed: use_vllm off"
  if [ "$plan" = 1 ] || "$PY" -c 'import vllm' 2>/dev/null; then vllm="" how=", vLLM colocate"; fi
  fresh gpu_stage
  step "configs/gpu/reinforced_planning.yaml at 2 steps: its config" "$work/gpu_stage.data.log" \
    "$PY" "$scripts/rehearsal_data.py" gpu-stage "$work" "$root" "$real" $vllm || return 0
  step "configs/gpu/reinforced_planning.yaml SFT -> GRPO + online filter (SmolLM2-135M-Instruct$how)" \
    "$work/gpu_stage.log" "$PY" -m groundrl train --config "$work/gpu_stage.yaml" || return 0
  check "configs/gpu SFT" "$work/gpu_stage" sft --min-steps 2
  check "configs/gpu GRPO" "$work/gpu_stage" grpo --min-steps 2 --code-path-only
}

# -- 2. verl, 2 steps each at a 1-GPU geometry: household multi-turn and eqa_rm on text rows and on
# image rows (exported by `groundrl export verl`, through verl's rollout) on tiny random models
# (code path and finite values), and reinforced_planning from step 1's SFT model (a real model
# that writes the plan format: the gradient must be non-zero). The single-turn rewards verl used
# are re-scored offline from its rollout dumps. (The household reward is the simulator's
# episode outcome, not a per-completion score: it is not re-scored.)
verl_run() { # verl_run NAME MODEL TRAIN MAX_PROMPT ROLLOUT_N RECIPE_SCRIPT [overrides]
  local name=$1 model=$2 train=$3 max_prompt=$4 n=$5 script=$6; shift 6
  fresh "verl_$name"
  step "verl $name (2 steps)" "$work/verl_$name.log" \
    env MODEL="$model" GPUS=1 BATCH=4 ROLLOUT_N="$n" MINI_BATCH=2 MICRO=1 MAX_PROMPT="$max_prompt" \
    MAX_RESPONSE=768 TRAIN="$train" VAL="$train" ACTION_MAP="$rp_map" \
    bash "$root/examples/verl/$script" trainer.total_training_steps=2 trainer.save_freq=-1 trainer.test_freq=-1 \
    trainer.val_before_train=false actor_rollout_ref.rollout.gpu_memory_utilization=0.3 \
    actor_rollout_ref.model.use_remove_padding=false actor_rollout_ref.rollout.enforce_eager=true \
    "trainer.default_local_dir=$work/verl-ckpt-$name" "trainer.rollout_data_dir=$work/verl_$name/dump" "$@" ||
    return 1
  step "verl $name: its console metrics as step rows" "$work/verl_$name.rows.log" \
    "$CPY" "$scripts/rehearsal_logs.py" verl-log "$work/verl_$name.log" "$work/verl_$name" --stage "$name"
}
verl_single_turn_check() { # verl_single_turn_check NAME RECIPE LABEL_FIELD [checker flags]
  local name=$1 recipe=$2 field=$3; shift 3
  step "verl $name: rollout dumps as samples" "$work/verl_$name.samples.log" \
    "$CPY" "$scripts/rehearsal_logs.py" verl-samples "$work/verl_$name/dump" --field "$field" \
    -o "$work/verl_$name/samples.jsonl" || return 0
  check "verl $name" "$work/verl_$name" "$name" --min-steps 2 --samples "$work/verl_$name/samples.jsonl" \
    --recipe "$recipe" "$@"
}
verl_real_model() { # reinforced_planning from step 1's SFT model
  local sft=$work/trl/sft/final
  if [ "$plan" = 0 ] && [ ! -d "$sft" ]; then
    failed=1; note "FAILED  verl reinforced_planning: step 1 left no SFT model ($sft) to start from"; return 0
  fi
  step "verl data: the Reinforced Planning SFT prompts (groundrl export verl)" "$work/verl_rr_data.log" \
    "$CPY" -m groundrl export verl "$rp_data" -o "$work/reinforced_planning.parquet" --recipe reinforced_planning ||
    return 0
  verl_run reinforced_planning "$sft" "$work/reinforced_planning.parquet" 512 4 reinforced_planning.sh \
    actor_rollout_ref.rollout.mode=async &&
    verl_single_turn_check reinforced_planning reinforced_planning gold -O "action_map=$rp_map"
}
rehearse_verl() {
  needs "verl household multi-turn, eqa_rm (text, image), reinforced_planning" "$CPY" verl vllm ray || return 0
  on_path "$CPY" || return 0
  step "verl data: tiny Qwen2 chat model, household and eqa_rm text rows" "$work/verl_data.log" \
    "$CPY" "$scripts/rehearsal_data.py" verl-text "$work" || return 0
  verl_run household "$work/tiny-qwen2" "$work/household.parquet" 512 2 household_multiturn.sh &&
    check "verl household" "$work/verl_household" household --min-steps 2 --code-path-only
  verl_run eqa_rm_text "$work/tiny-qwen2" "$work/eqa_rm.parquet" 512 2 eqa_rm.sh actor_rollout_ref.rollout.mode=async &&
    verl_single_turn_check eqa_rm_text eqa_rm gt_score --code-path-only
  verl_real_model
  step "verl image rows: tiny Qwen2.5-VL and EQA-RM keyframe rows" "$work/verl_image_data.log" \
    "$CPY" "$scripts/rehearsal_data.py" verl-image "$work" "$root" || return 0
  step "verl image rows: groundrl export verl" "$work/verl_export.log" \
    "$CPY" -m groundrl export verl "$work/eqa_rm_images.jsonl" -o "$work/eqa_rm_images.parquet" --recipe eqa_rm ||
    return 0
  verl_run eqa_rm_image "$work/tiny-qwen2.5-vl" "$work/eqa_rm_images.parquet" 4096 2 eqa_rm.sh \
    actor_rollout_ref.rollout.mode=async && verl_single_turn_check eqa_rm_image eqa_rm gt_score --code-path-only
}

# -- 3. OpenRLHF: examples/openrlhf/reinforced_planning.sh for 2 steps (2 prompts x 4 samples)
# on a local Ray head, from step 1's SFT model (a real model that already writes the plan
# format, so the reward varies and the gradient must be non-zero). Its reward function is
# groundrl's, recording what it gave (scripts/rehearsal_openrlhf_reward.py) for the offline
# comparison (2 steps x 2 prompts x 4 samples: at least 16 recorded). Dynamic filtering's range is
# widened to (-1, 2) so that no group is dropped.
rehearse_openrlhf() {
  needs "OpenRLHF reinforced_planning" "$OPY" openrlhf vllm ray deepspeed || return 0
  local sft=$work/trl/sft/final ray_bin samples=$work/openrlhf/samples.jsonl
  if [ "$plan" = 0 ] && [ ! -d "$sft" ]; then
    failed=1; note "FAILED  OpenRLHF: step 1 left no SFT model ($sft) to start from"; return 0
  fi
  on_path "$OPY" || return 0
  ray_bin=$(dirname "$OPY")/ray
  fresh openrlhf
  step "OpenRLHF prompts (the Reinforced Planning SFT prompts)" "$work/openrlhf_data.log" \
    "$OPY" "$scripts/rehearsal_data.py" openrlhf "$work" "$root" || return 0
  step "Ray head for OpenRLHF" "$work/ray_start.log" env GROUNDRL_REHEARSAL_SAMPLES="$samples" \
    "$ray_bin" start --head --num-gpus 1 --dashboard-host 127.0.0.1 --dashboard-port 8265 --disable-usage-stats ||
    return 0
  step "OpenRLHF reinforced_planning GRPO (2 steps, step 1's SFT model)" "$work/openrlhf.log" \
    env PYTHON="$OPY" MODEL="$sft" GPUS=1 N=4 BATCH=2 MAX_LEN=1024 GROUNDRL_PROMPTS="$work/openrlhf_rr.jsonl" \
    ACTION_MAP="$rp_map" SAVE="$work/openrlhf-ckpt" RAY_ADDRESS=http://127.0.0.1:8265 \
    bash "$root/examples/openrlhf/reinforced_planning.sh" --reward.remote_url "$scripts/rehearsal_openrlhf_reward.py" \
    --data.max_samples 4 --rollout.max_new_tokens 768 --rollout.micro_batch_size 1 \
    --vllm.gpu_memory_utilization 0.3 --algo.dynamic_filtering_range -1 2 --ckpt.path "$work/openrlhf-ckpt/ckpt"
  local ran=$?
  [ "$plan" = 1 ] || "$ray_bin" stop --force >"$work/ray_stop.log" 2>&1
  [ "$ran" = 0 ] || return 0
  step "OpenRLHF: its step status lines as step rows" "$work/openrlhf.rows.log" \
    "$OPY" "$scripts/rehearsal_logs.py" openrlhf-log "$work/openrlhf.log" "$work/openrlhf" --stage openrlhf
  check "OpenRLHF GRPO" "$work/openrlhf" openrlhf --min-steps 2 \
    --samples "$samples" --min-samples 16 --recipe reinforced_planning -O "action_map=$rp_map"
}

if [ "$plan" = 0 ] && ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "gpu_rehearsal: no CUDA device visible to $PY: nothing was rehearsed (run it on a GPU machine," >&2
  echo "or point PY at the interpreter of the environment that has CUDA torch; --plan lists the steps)" >&2
  exit 2
fi
work=$(mkdir -p "${work_arg:-$root/runs/gpu-rehearsal}" && cd "${work_arg:-$root/runs/gpu-rehearsal}" && pwd)
if [ "$plan" = 1 ]; then
  echo "GPU rehearsal plan (nothing runs): PY=$PY CPY=$CPY OPY=$OPY"
else
  "$PY" -c 'import torch; print("CUDA:", torch.cuda.get_device_name(0), "| torch", torch.__version__)'
fi
real=""
rehearse_trl
rehearse_cgrpo
rehearse_two_processes
rehearse_gpu_stage
rehearse_verl
rehearse_openrlhf

echo
echo "GPU rehearsal summary ($work):"
printf '  %s\n' "${summary[@]}"
echo "  not rehearsed by this script: DeepSpeed ZeRO-3 under accelerate (configs/accelerate/deepspeed_zero3.yaml),"
echo "  more than one GPU, a judge served over HTTP, and learning beyond 'the reward moved' (a few steps cannot show it)"
[ "$plan" = 1 ] && exit 0
if [ "$skipped" = 1 ] && [ "$allow_skip" = 0 ]; then
  echo "gpu_rehearsal: a step was skipped (see SKIPPED above); --allow-skip accepts that" >&2
  failed=1
fi
exit $failed
