#!/usr/bin/env bash
# Reinforced Planning on OpenRLHF: the gold plan in `gold`; ACTION_MAP names the action
# map the rollout actors read (a path on every node).
source "$(dirname "$0")/common.sh"
RECIPE_OPTIONS=${RECIPE_OPTIONS:-"{\"action_map\": \"${ACTION_MAP:-data/alfred_action_map.json}\"}"}
export RECIPE_OPTIONS
groundrl_openrlhf reinforced_planning gold "$@"
