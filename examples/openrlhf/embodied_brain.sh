#!/usr/bin/env bash
# EmbodiedBrain on OpenRLHF: the gold plan in `gold`; JUDGE_URL (an OpenAI-compatible
# planning GRM) adds the grm part, JUDGE_MODEL names it [judge].
source "$(dirname "$0")/common.sh"
groundrl_openrlhf embodied_brain gold "$@"
