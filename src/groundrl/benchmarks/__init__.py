"""Reward-model benchmarks: score-RM (EQARewardBench-style), pairwise-RM (VL-RewardBench /
Multimodal RewardBench / MM-RLHF style, with rubric transfer), planning P/R/F1, and
loaders for OpenEQA and the EmbodiedBrain planning set."""
