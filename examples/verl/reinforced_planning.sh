#!/usr/bin/env bash
# Reinforced Reasoning for Embodied Planning: GRPO on JSON plans with the action map
# (ACTION_MAP, the {id: name} file; samples may name it "alfred" in extra_info.action_map).
source "$(dirname "$0")/common.sh"
RECIPE_OVERRIDES=(
  "+reward.custom_reward_function.reward_kwargs.recipe_options.action_map=${ACTION_MAP:-data/alfred_action_map.json}"
  "+reward.custom_reward_function.reward_kwargs.recipe_options.action_maps.alfred=${ACTION_MAP:-data/alfred_action_map.json}"
  actor_rollout_ref.actor.optim.lr=1e-6
)
groundrl_verl reinforced_planning "$@"
