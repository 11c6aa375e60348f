"""Reward-model benchmarks: score-RM (EQARewardBench-style, with its builder from OpenEQA),
pairwise-RM (VL-RewardBench / Multimodal RewardBench / MM-RLHF, native loaders, strict and
released parse protocols, rubric transfer, scalar-RM baseline), planning P/R/F1 (exact and
LLM action matchers), judge reliability, and loaders for OpenEQA and the EmbodiedBrain
planning set."""
