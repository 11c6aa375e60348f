#!/usr/bin/env bash
# Reinforced Planning on OpenRLHF: the gold plan in `gold`; ACTION_MAP names the action
# map the rollout actors read (a path on every node).
source "$(dirname "$0")/common.sh"
RECIPE_OPTIONS=${RECIPE_OPTIONS:-"{\"action_map\": \"${ACTION_MAP:-data/alfred_action_map.json}\"}"}
export RECIPE_OPTIONS
# KL 0: init_kl_coef 0.0 [Reinforced Planning paper App. C.2, Table 5] (configs/papers/reinforced_planning.yaml);
# with 0, OpenRLHF loads no reference model
groundrl_openrlhf reinforced_planning gold 0.0 "$@"
