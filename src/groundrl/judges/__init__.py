"""Generative judges: backends (local transformers, OpenAI-compatible HTTP), the papers'
judge prompts and parsers, and test-time scaling. Importing this package loads neither
torch nor transformers; the transformers backend imports them when built."""

from groundrl.judges.base import Generation, JudgeBackend, JudgeStats, LogProbResult, SamplingParams
from groundrl.judges.config import JudgeConfig
from groundrl.judges.registry import judge_backend_names, register_judge_backend, unregister_judge_backend

__all__ = [
    "Generation",
    "JudgeBackend",
    "JudgeConfig",
    "JudgeStats",
    "LogProbResult",
    "SamplingParams",
    "judge_backend_names",
    "register_judge_backend",
    "unregister_judge_backend",
]
