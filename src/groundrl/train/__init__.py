"""Training on TRL: the demo's planner pipeline (SFT then GRPO on simulator tasks),
online accuracy filtering, and the data builders they share. Imports torch/TRL lazily."""
