#!/usr/bin/env bash
# EQA-RM on OpenRLHF: the gold score in `gt_score`.
source "$(dirname "$0")/common.sh"
# KL 0.04: β_K, the C-GRPO KL coefficient [EQA-RM paper Table 5, Eq. 7] (configs/papers/eqa_rm.yaml)
groundrl_openrlhf eqa_rm gt_score 0.04 "$@"
