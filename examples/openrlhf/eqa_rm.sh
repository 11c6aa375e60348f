#!/usr/bin/env bash
# EQA-RM on OpenRLHF: the gold score in `gt_score`.
source "$(dirname "$0")/common.sh"
# 5 keyframes per episode [EQA-RM §5.1, App. B Table 5]
MAX_IMAGES=${MAX_IMAGES:-5}
# KL 0.04: β_K, the C-GRPO KL coefficient [EQA-RM paper Table 5, Eq. 7] (configs/papers/eqa_rm.yaml)
groundrl_openrlhf eqa_rm gt_score 0.04 "$@"
