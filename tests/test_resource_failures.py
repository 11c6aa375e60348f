"""Issue 42, N2: a sample's declared sizes are bounded before anything is allocated from
them, and a resource failure never scores above an honest sample. A 247-byte Argos
sample whose ``frame_masks`` named frame 10**12 made ``spatial_video`` build a list of
10**12 frame times; the MemoryError made the grounding part "not applicable" and Eq. 9's
gated mean rose from 0.5 to 1.0. Each family below scores a hostile sample next to the
honest one it imitates: the hostile one gets a reason and never more."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from groundrl.recipes import get_recipe
from groundrl.rewards.grounding import MAX_FRAMES, MAX_MASK_BOXES, spatial, spatial_video
from groundrl.rewards.perception import MAX_BOXES, detection_reward
from groundrl.rubric import Part, Rubric

# the answer is right (outcome 1) and the point misses the cup (grounding 0): Eq. 9 gives
# (1 + 0) / 2 = 0.5 with weights 1 [Argos §3.1, Eq. 9]
TRACE = 'At 1 seconds the <points x1="50" y1="50" alt="cup">cup</points> is there. <answer>cup</answer>'
HONEST = {"answer": "cup", "fps": 1, "frame_masks": {"2": {"cup": [[0, 0, 5, 5]]}}}
HOSTILE = {**HONEST, "frame_masks": {str(10**12): {"cup": [[0, 0, 5, 5]]}}}


def _argos_total(sample):
    return get_recipe("argos").rubric().score(TRACE, **sample)


def test_argos_honest_trace_is_worth_one_half():
    v = _argos_total(HONEST)
    assert v.parts["grounding"].value == 0.0 and v.total == pytest.approx(0.5)


# the hostile cases run in a child with its address space capped (3 GiB): before the
# bounds they allocated without limit, and this way they end in a MemoryError there
# instead of taking memory from everything else on the machine
CAPPED = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    out = {}
    exec(sys.argv[1])
    print(json.dumps(out))
    """
)


def capped(code: str) -> dict:
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PATH": ""}
    got = subprocess.run(
        [sys.executable, "-c", CAPPED, textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert got.returncode == 0, got.stderr[-2000:]
    return json.loads(got.stdout)


def test_argos_frame_index_of_10_to_the_12_is_refused_not_allocated():
    assert len(json.dumps(HOSTILE)) < 247
    got = capped(
        f"""
        from groundrl.recipes import get_recipe
        from groundrl.rewards.grounding import spatial_video
        trace, sample = {[TRACE, HOSTILE]!r}
        v = get_recipe("argos").rubric().score(trace, **sample)
        out["total"], out["grounding"] = v.total, v.parts["grounding"].reason
        out["spatial"] = spatial_video(trace, sample["frame_masks"], fps=1).reason
        # n_frames given outright
        s = spatial_video(trace, {{"2": {{"cup": [[0, 0, 5, 5]]}}}}, n_frames=10**12, fps=1)
        out["n_frames"] = [s.value, s.reason]
        """
    )
    assert got["total"] <= _argos_total(HONEST).total
    assert "MemoryError" not in got["grounding"] and f"at most {MAX_FRAMES}" in got["spatial"]
    assert got["n_frames"][0] == 0.0 and "declares" in got["n_frames"][1]


def test_a_frame_provider_still_scores():
    # a provider declares no frame count: seconds are placed within MAX_FRAMES frames
    hit = 'At 1 seconds the <points x1="2" y1="2" alt="cup">cup</points> is there.'
    s = spatial_video(hit, lambda label, k: [[0, 0, 5, 5]] if k == 1 else None, fps=1)
    assert s.value == 1.0


def test_argos_huge_mask_dims_are_refused_before_reading():
    text = '<points x1="2" y1="2" alt="cup">cup</points> <answer>cup</answer>'
    honest = spatial(text, {"cup": np.ones((8, 8), bool)})
    huge = np.broadcast_to(np.ones(1, bool), (1 << 20, 1 << 20))  # 10**12 pixels, 1 byte held
    s = spatial(text, {"cup": huge})
    assert s.value is not None and s.value <= honest.value and "pixel limit" in s.reason
    many = spatial(text, {"cup": {"boxes": [[0, 0, 5, 5]] * (MAX_MASK_BOXES + 1)}})
    assert many.value == 0.0 and "box limit" in many.reason
    rubric = get_recipe("argos").rubric()
    v_honest = rubric.score(text, answer="cup", points_masks={"cup": np.ones((8, 8), bool)})
    v_huge = rubric.score(text, answer="cup", points_masks={"cup": huge})
    assert v_huge.total <= v_honest.total


def test_eb_detection_huge_box_count_scores_no_more_than_honest():
    gold = [{"bbox_2d": [0, 0, 10, 10], "label": "cup"}]
    honest = detection_reward(json.dumps([{"bbox_2d": [0, 0, 10, 5], "label": "cup"}]), gold)
    boxes = [{"bbox_2d": [0, 0, 10, 10], "label": "cup"}] * (MAX_BOXES + 1)
    hostile = detection_reward(json.dumps(boxes), gold)
    assert hostile.value == 0.0 < honest.value and f"at most {MAX_BOXES}" in hostile.reason
    # a gold of 20,000 boxes would ask for a 20,000 × 20,000 weight table: not applicable
    got = capped(
        """
        import json
        from groundrl.rewards.perception import detection_reward
        gold = [{"bbox_2d": [i, 0, i + 1, 1], "label": "cup"} for i in range(20_000)]
        s = detection_reward(json.dumps(gold), gold)
        out["score"] = [s.value, s.reason]
        """
    )
    assert got["score"][0] is None and "gold holds 20000 boxes" in got["score"][1]
    rubric = get_recipe("embodied_brain").rubric(router=True)
    fields = {"task_type": "detection", "boxes": gold}
    assert rubric.score(json.dumps(boxes), **fields).total <= rubric.score(json.dumps(gold), **fields).total


def _gated(fn):
    parts = [
        Part("outcome", lambda c: 1.0, value_range=(0.0, 1.0)),
        Part("grounding", fn, batched=True, fallback=None, value_range=(0.0, 1.0)),
    ]
    return Rubric(parts, aggregate="gated_mean", gate="outcome", tau=0.5)


def test_a_part_that_runs_out_of_memory_never_lifts_the_total():
    def honest(completions, samples):
        return [0.0] * len(completions)

    def out_of_memory(completions, samples):
        raise MemoryError

    want = _gated(honest).score("x").total
    got = _gated(out_of_memory).score("x")
    assert want == pytest.approx(0.5)
    assert got.total <= want and "MemoryError" in got.parts["grounding"].reason
    # a negative weight: the least-counting end is the high one
    neg = Rubric([Part("p", lambda c: 1 / 0, weight=-1.0, fallback=None, value_range=(0.0, 1.0))])
    assert neg.score("x").total == -1.0


def test_a_part_past_its_deadline_never_lifts_the_total():
    import threading

    gate = threading.Event()

    def hangs(completions, samples):
        gate.wait(30)
        return [1.0] * len(completions)

    rubric = _gated(hangs)
    rubric.parts[1].timeout = 0.05
    try:
        v = rubric.score("x")
    finally:
        gate.set()
    assert v.total <= 0.5 and v.parts["grounding"].reason.startswith("timeout")


def test_one_slow_sample_keeps_the_scores_finished_before_it():
    """A per-sample part past its deadline: the samples it finished keep their scores
    (was: one slow sample timed out the whole batch, flipping rule-decided rewards)."""
    import threading

    gate = threading.Event()

    def exact(completion, answer):
        if completion == "slow":
            gate.wait(60)
        return float(completion == answer)

    rubric = Rubric([Part("exact", exact, timeout=3.0)])  # generous: two trivial calls go first
    try:
        verdicts = rubric.score_batch(["a", "b", "slow", "a"], [{"answer": "a"}] * 4)
    finally:
        gate.set()
    assert [v.parts["exact"].value for v in verdicts[:2]] == [1.0, 0.0]
    assert all(v.parts["exact"].reason.startswith("timeout") for v in verdicts[2:])
    assert rubric.parts[0].timeouts == 1
