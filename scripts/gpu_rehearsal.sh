#!/usr/bin/env bash
# GPU rehearsal (issue 25 item 7, issue 35 item 5): a few steps of every training path, to
# check a CUDA machine before a real run. Never part of `make test`. Usage, from the
# repository root on a machine with CUDA:
#   scripts/gpu_rehearsal.sh [--allow-skip] [WORK_DIR]     (default: runs/gpu-rehearsal)
# Environment: PY [.venv/bin/python] runs TRL and groundrl (the interpreter it probes for CUDA
# is the one it runs); CPY [.venv-cluster/bin/python, else $PY] runs verl (its own
# environment: it needs verl, vLLM and Ray there).
# Each step prints RAN, SKIPPED (with why) or FAILED (its log's last lines). The script fails
# when it proves nothing: exit 2 without CUDA; exit 1 when a step failed, when a training
# step's log shows a zero gradient on every step, no reward variance in any group, or a
# non-finite loss/reward (scripts/rehearsal_check.py), and when a step was skipped unless
# --allow-skip. It ends with a summary of what ran.
set -uo pipefail

allow_skip=0
if [ "${1:-}" = "--allow-skip" ]; then allow_skip=1; shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-$root/.venv/bin/python}
CPY=${CPY:-$root/.venv-cluster/bin/python}
[ -x "$CPY" ] || CPY=$PY
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
summary=()
failed=0
skipped=0

if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "gpu_rehearsal: no CUDA device visible to $PY: nothing was rehearsed (run it on a GPU machine," >&2
  echo "or point PY at the interpreter of the environment that has CUDA torch)" >&2
  exit 2
fi
work=$(mkdir -p "${1:-$root/runs/gpu-rehearsal}" && cd "${1:-$root/runs/gpu-rehearsal}" && pwd)
"$PY" -c 'import torch; print("CUDA:", torch.cuda.get_device_name(0), "| torch", torch.__version__)'

note() { summary+=("$1"); echo "== $1"; }
skip() { skipped=1; note "SKIPPED $1"; }
step() {  # step NAME LOG CMD...: run CMD, logging to LOG; print RAN / FAILED
  local name=$1 log=$2; shift 2
  echo "-- $name (log: $log)"
  if "$@" >"$log" 2>&1; then note "RAN     $name"; else
    failed=1; note "FAILED  $name (exit $?; last lines of $log below)"; tail -n 15 "$log"; fi
}
check() {  # check NAME RUN_DIR STAGE [checker flags]: the run's log.jsonl must prove training
  local name=$1 run=$2 stage=$3; shift 3
  step "$name: log check (finite loss/reward, non-zero gradient, reward variance)" "$run.check.log" \
    "$PY" "$root/scripts/rehearsal_check.py" "$run" --stage "$stage" "$@"
}
has() { "$1" -c "import $2" 2>/dev/null; }
groundrl=("$PY" -m groundrl)

# -- 1. TRL on a real pretrained model, bf16: SFT then GRPO (vLLM colocate when installed).
# SmolLM2-135M-Instruct from its pinned PyPI wheel (the project's real-model fixture): a random
# model earns no reward, so only a real one can show a non-zero gradient.
vllm_lines=""
if has "$PY" vllm; then
  vllm_lines=$'    use_vllm: true\n    vllm_mode: colocate\n    vllm_gpu_memory_utilization: 0.3'
fi
step "real-model fixture (groundrl models get smollm2-135m-instruct)" "$work/model.log" \
  "${groundrl[@]}" models get smollm2-135m-instruct
real=$(tail -n 1 "$work/model.log")
cat >"$work/trl.yaml" <<YAML
recipe: reinforced_planning
model: $real
output_dir: $work/trl
recipe_options: {action_map: $root/configs/data/reinforced_planning_sft.action_map.json}
stages:
  - name: sft
    kind: sft
    data: $root/configs/data/reinforced_planning_sft.jsonl
    sft: {max_steps: 8, per_device_train_batch_size: 4, learning_rate: 1.0e-4, bf16: true, use_cpu: false}
  - name: grpo
    kind: grpo
    data: $root/configs/data/reinforced_planning_sft.jsonl
    grpo:
      max_steps: 4
      num_generations: 8
      per_device_train_batch_size: 8
      max_completion_length: 256
      learning_rate: 1.0e-5
      temperature: 1.0
      bf16: true
      use_cpu: false
${vllm_lines}
YAML
step "TRL SFT -> GRPO bf16 (SmolLM2-135M-Instruct$([ -n "$vllm_lines" ] && echo ', vLLM colocate' || echo ', no vLLM installed: HF generate'))" \
  "$work/trl.log" "${groundrl[@]}" train --config "$work/trl.yaml"
check "TRL GRPO" "$work/trl" grpo --min-steps 4

# -- 1b. TRL with image rows (C-GRPO on EQA-RM keyframes) on the tiny random Qwen2.5-VL, bf16:
# the code path of perturbed images on CUDA (a random model has no signal: steps and finite
# values are checked, not the gradient)
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
step "TRL C-GRPO bf16 with image rows (tiny Qwen2.5-VL)" "$work/cgrpo.log" "${groundrl[@]}" train --config "$work/cgrpo.yaml"
check "TRL C-GRPO" "$work/cgrpo" cgrpo --min-steps 2 --code-path-only

# -- 1c. every stage kind on 2 processes (gloo; CPU ranks, so one GPU suffices)
step "every stage kind on 2 processes (tests/train/test_two_processes.py)" "$work/two_processes.log" \
  env OMP_NUM_THREADS=1 "$PY" -m pytest -q -p no:cacheprovider "$root/tests/train/test_two_processes.py"

# -- 2. verl: household multi-turn and one single-turn recipe (eqa_rm), 2 steps each
if ! has "$CPY" verl || ! has "$CPY" vllm; then
  skip "verl household multi-turn and eqa_rm: $CPY lacks verl or vLLM (build a GPU env with both)"
else
  # a tiny random Qwen2 chat model with a ChatML template, and the data of both runs
  "$CPY" - "$work" <<'PYEOF' >"$work/verl_data.log" 2>&1 || { failed=1; note "FAILED  verl data (see $work/verl_data.log)"; }
import json, sys
from pathlib import Path
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
import groundrl.integrations.verl as gverl
import groundrl.integrations.verl_agent_loop as gloop
from groundrl.sim.generate import generate_tasks

work = Path(sys.argv[1])
tasks = generate_tasks(64, seed=0)
rows = gloop.household_rows(tasks)
gloop.write_rows(rows, str(work / "household.parquet"))
eqa = [{"prompt": f"Rate answer {i} from 0 to 10 as <critique>…</critique><score>N</score>.", "gt_score": i % 10}
       for i in range(64)]
gverl.write_dataset(eqa, str(work / "eqa_rm.parquet"), recipe="eqa_rm")
tok = Tokenizer(models.BPE(unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
tok.decoder = decoders.ByteLevel()
corpus = [r["prompt"][-1]["content"] for r in rows] + [e["prompt"] for e in eqa] + ["\n".join(t.gold_plan) for t in tasks]
tok.train_from_iterator(corpus * 4, trainers.BpeTrainer(vocab_size=1000, special_tokens=["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
hf = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token="<unk>")
hf.chat_template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
hf.save_pretrained(work / "tiny-qwen2")
Qwen2ForCausalLM(Qwen2Config(vocab_size=len(hf), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, eos_token_id=hf.eos_token_id, pad_token_id=hf.pad_token_id,
    tie_word_embeddings=True)).save_pretrained(work / "tiny-qwen2")
print("tiny model and data in", work)
PYEOF
  export PATH="$(dirname "$CPY"):$PATH"
  common=(MODEL="$work/tiny-qwen2" GPUS=1 BATCH=4 ROLLOUT_N=2 MINI_BATCH=2 MICRO=1 MAX_PROMPT=512 MAX_RESPONSE=256)
  short=(trainer.total_training_steps=2 trainer.save_freq=-1 trainer.test_freq=-1 trainer.val_before_train=false
         actor_rollout_ref.rollout.gpu_memory_utilization=0.3 actor_rollout_ref.model.use_remove_padding=false
         actor_rollout_ref.rollout.enforce_eager=true "trainer.default_local_dir=$work/verl-ckpt")
  step "verl household multi-turn (agent loop, 2 steps)" "$work/verl_household.log" \
    env "${common[@]}" TRAIN="$work/household.parquet" VAL="$work/household.parquet" \
    bash "$root/examples/verl/household_multiturn.sh" "${short[@]}"
  step "verl eqa_rm single-turn (compute_score_async, 2 steps)" "$work/verl_eqa_rm.log" \
    env "${common[@]}" TRAIN="$work/eqa_rm.parquet" \
    bash "$root/examples/verl/eqa_rm.sh" "${short[@]}" actor_rollout_ref.rollout.mode=async
fi

echo
echo "GPU rehearsal summary ($work):"
printf '  %s\n' "${summary[@]}"
echo "  not rehearsed by this script: an OpenRLHF step, a configs/gpu stage, an image row through verl's rollout"
if [ "$skipped" = 1 ] && [ "$allow_skip" = 0 ]; then
  echo "gpu_rehearsal: a step was skipped (see SKIPPED above); --allow-skip accepts that" >&2
  failed=1
fi
exit $failed
