#!/usr/bin/env bash
# Argos on OpenRLHF: the answer in `answer` (spatial points need points_masks: put the
# label as a JSON object {"answer": …, "points_masks": …}); TAU sets the accuracy gate.
source "$(dirname "$0")/common.sh"
# up to 32 video frames [Argos §4.1]
MAX_IMAGES=${MAX_IMAGES:-32}
RECIPE_OPTIONS=${RECIPE_OPTIONS:-"{\"tau\": ${TAU:-0.5}}"}
export RECIPE_OPTIONS
# KL 0.01: [ours] the paper's Eq. 11 keeps a KL term but states no β (configs/papers/argos.yaml)
groundrl_openrlhf argos answer 0.01 "$@"
