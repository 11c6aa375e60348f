"""Issue 37 item 3: prompts carry the rules of the papers' prompts (in our words)."""

from __future__ import annotations

from groundrl.benchmarks import eqa_build
from groundrl.judges import prompts


def test_eqa_rm_labelling_prompt_has_the_two_important_rules():
    p = prompts.EQA_RM_REFERENCE_SYSTEM  # [EQA-RM App. D, "Important: 1. … 2. …"]
    assert "critique must never mention the reference answer" in p
    assert "only some keyframes" in p and "judge strictly" in p


def test_build_eqa_labels_with_the_papers_criteria():
    p = eqa_build.LABEL_SYSTEM  # [EQA-RM App. D]: 60 % semantic agreement, 40 % trace, 1-10
    assert "60%" in p and "40%" in p and "1 to 10" in p
    assert "never mention the reference" in p


def test_build_eqa_responses_name_no_frame_numbers():
    p = eqa_build.POLICY_SYSTEM  # [EQA-RM App. D guideline 2: no frame number or index]
    assert "which frames" not in p and "never by a frame number or index" in p
