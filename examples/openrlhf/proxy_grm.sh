#!/usr/bin/env bash
# Proxy GRM on OpenRLHF: the preferred response in `preferred`; JUDGE_URL (the proxy
# agent, OpenAI-compatible) [http://127.0.0.1:8000/v1], JUDGE_MODEL [proxy-agent].
source "$(dirname "$0")/common.sh"
export JUDGE_URL=${JUDGE_URL:-http://127.0.0.1:8000/v1} JUDGE_MODEL=${JUDGE_MODEL:-proxy-agent}
# KL 0.01: the released scripts/rl/train_scripts.sh kl_loss_coef (configs/papers/proxy_grm.yaml)
groundrl_openrlhf proxy_grm preferred 0.01 "$@"
