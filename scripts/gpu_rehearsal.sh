#!/usr/bin/env bash
# GPU rehearsal (issue 25 item 7): a few steps of every training path on tiny random
# models built here (no downloads), to check a CUDA machine before a real run. Never part
# of `make test`. Usage, from the repository root on a machine with CUDA:
#   scripts/gpu_rehearsal.sh [WORK_DIR]        (default: runs/gpu-rehearsal)
# Environment: PY [.venv/bin/python] runs TRL; CPY [.venv-cluster/bin/python, else $PY]
# runs verl (its own environment: verl pins numpy<2; it needs verl, vLLM and Ray there).
# Each step prints RAN, SKIPPED (with why) or FAILED (its log's last lines); the script
# exits 1 when a step failed, 0 otherwise, and ends with a summary of what ran.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mkdir -p "${1:-$root/runs/gpu-rehearsal}" && cd "${1:-$root/runs/gpu-rehearsal}" && pwd)
PY=${PY:-$root/.venv/bin/python}
CPY=${CPY:-$root/.venv-cluster/bin/python}
[ -x "$CPY" ] || CPY=$PY
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}" HF_HUB_OFFLINE=1 RAY_USAGE_STATS_ENABLED=0
summary=()
failed=0

note() { summary+=("$1"); echo "== $1"; }
step() {  # step NAME LOG CMD...: run CMD, logging to LOG; print RAN / FAILED
  local name=$1 log=$2; shift 2
  echo "-- $name (log: $log)"
  if "$@" >"$log" 2>&1; then note "RAN     $name"; else
    failed=1; note "FAILED  $name (exit $?; last lines of $log below)"; tail -n 15 "$log"; fi
}

if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  echo "no CUDA device visible to $PY: nothing to rehearse (this script is for GPU machines)"
  exit 0
fi
"$PY" -c 'import torch; print("CUDA:", torch.cuda.get_device_name(0), "| torch", torch.__version__)'
has() { "$1" -c "import $2" 2>/dev/null; }

# -- 1. TRL GRPO, bf16, on the tiny random Qwen2.5-VL (vLLM colocate when installed)
vllm_lines=""
if has "$PY" vllm; then
  vllm_lines=$'  use_vllm: true\n  vllm_mode: colocate\n  vllm_gpu_memory_utilization: 0.3'
fi
cat >"$work/trl.yaml" <<YAML
recipe: reinforced_planning
model: tiny
data: $root/configs/data/reinforced_planning.jsonl
output_dir: $work/trl
recipe_options: {action_map: $root/src/groundrl/data/examples/action_map.json}
grpo:
  max_steps: 3
  num_generations: 4
  per_device_train_batch_size: 4
  max_completion_length: 32
  bf16: true
  use_cpu: false
${vllm_lines}
YAML
step "TRL GRPO bf16 (tiny Qwen2.5-VL$([ -n "$vllm_lines" ] && echo ', vLLM colocate' || echo ', no vLLM installed: HF generate'))" \
  "$work/trl.log" "$root/.venv/bin/groundrl" train --config "$work/trl.yaml"

# -- 2. verl: household multi-turn and one single-turn recipe (eqa_rm), 2 steps each
if ! has "$CPY" verl || ! has "$CPY" vllm; then
  note "SKIPPED verl household multi-turn and eqa_rm: $CPY lacks verl or vLLM (build a GPU env with both)"
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
exit $failed
