"""The EmbodiedBrain router rubric's parts for other task types answer "not applicable"
with the reason naming their task, and a part whose field is missing says so; the
answers are shared constants since issue 41 (a Score is frozen), so two samples' verdicts
must still be equal part by part and never leak one sample's values into another."""

from groundrl.recipes import get_recipe

BOXES = '[{"bbox_2d": [0, 0, 10, 10], "label": "mug"}]'
HIT = f"<answer>{BOXES}</answer>"
MISS = '<answer>[{"bbox_2d": [50, 50, 60, 60], "label": "mug"}]</answer>'


def test_other_task_parts_say_why_they_do_not_apply():
    rubric = get_recipe("embodied_brain").rubric(router=True)
    hit, miss = rubric.score_batch([HIT, MISS], [{"task_type": "detection", "boxes": BOXES}] * 2)
    assert hit.parts["detection.iou"].value == 1.0
    assert miss.parts["detection.iou"].value == 0.0
    for v in (hit, miss):
        assert (v.parts["format"].value, v.parts["format"].reason) == (None, "not a planning sample")
        assert v.parts["counting.accuracy"].reason == "not a counting sample"
        assert v.parts["format"].name == "format"
    assert (hit.total, miss.total) == (1.0, 0.0)
    one = rubric.score(HIT, task_type="detection", boxes=BOXES)
    assert (one.total, one.parts) == (hit.total, hit.parts)


def test_a_missing_field_is_named():
    rubric = get_recipe("embodied_brain").rubric(router=True)
    v = rubric.score(HIT, task_type="detection")
    assert (v.parts["detection.iou"].value, v.parts["detection.iou"].reason) == (
        None,
        "no boxes in the sample",
    )
    assert v.parts["plan_f1"].reason == "not a planning sample"
