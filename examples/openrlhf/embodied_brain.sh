#!/usr/bin/env bash
# EmbodiedBrain on OpenRLHF: the gold plan in `gold`; JUDGE_URL (an OpenAI-compatible
# planning GRM) adds the grm part, JUDGE_MODEL names it [judge].
source "$(dirname "$0")/common.sh"
# KL 0.001: the released train_rl.sh (the paper states none; configs/papers/embodied_brain.yaml)
groundrl_openrlhf embodied_brain gold 0.001 "$@"
