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


def test_eb_rejection_judge_gets_the_question_and_answers_the_papers_json():
    from groundrl.curate.rejection import label_check, pass_rate_filter, semantic_judge
    from groundrl.judges.base import Generation

    sent = []

    class Backend:
        def generate(self, requests, params):
            sent.extend(requests)
            return [Generation(['{"consistent": false, "reason": "left is not right"}']) for _ in requests]

    judge = semantic_judge(Backend())
    rec = {"id": 1, "question": "Is the cup left of the sink?", "gold": "left", "answers": ["right"]}
    assert pass_rate_filter(rec, judge=judge)["reason"] == "too_hard"
    assert label_check({**rec, "strong_answer": "right"}, judge=judge)["reason"] == "label_contradicted"
    text = sent[0][-1]["content"][-1]["text"]
    assert "Is the cup left of the sink?" in text and "Answer A: right" in text and "Answer B: left" in text
    assert '"consistent"' in sent[0][0]["content"]  # [EmbodiedBrain §9.2.1] JSON output


def test_argos_video_reasoning_quality_sees_frames_across_the_video():
    from groundrl.judges.base import LogProbResult
    from groundrl.judges.papers import REASONING_FRAMES, ArgosTeachers

    seen = []

    class Backend:
        def logprob(self, requests, continuations):
            seen.extend(requests)
            return [LogProbResult([-0.1]) for _ in requests]

    frames = [f"f{k}.png" for k in range(30)]
    ArgosTeachers(Backend()).reasoning(
        ["I look. <answer>cup</answer>"], [{"question": "q", "frames": frames}]
    )
    images = [p["image"] for p in seen[0][-1]["content"] if p.get("type") == "image"]
    # Eq. 5's v is the video [Argos §3.1]: frames from first to last, not the first alone
    assert len(images) == REASONING_FRAMES and images[0] == "f0.png" and images[-1] == "f29.png"
