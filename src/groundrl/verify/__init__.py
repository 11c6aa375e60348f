"""Argos' agentic verifier: per sample it picks the scoring tools that apply, runs them
(judge calls batched across samples) and aggregates behind the accuracy gate."""

from groundrl.verify.masks import BoxMaskProvider, DetectorSegmenterMasks
from groundrl.verify.verifier import AgenticVerifier, ParsedResponse, Tool, VerifierResult

__all__ = [
    "AgenticVerifier",
    "BoxMaskProvider",
    "DetectorSegmenterMasks",
    "ParsedResponse",
    "Tool",
    "VerifierResult",
]
