#!/usr/bin/env bash
# EQA-RM on OpenRLHF: the gold score in `gt_score`.
source "$(dirname "$0")/common.sh"
groundrl_openrlhf eqa_rm gt_score "$@"
