"""Native loaders on tiny hand-made files in each published layout (issue 19, item 1),
broken rows included, and the two parse protocols (item 2)."""

import io
import json

import pytest
from typer.testing import CliRunner

from groundrl.benchmarks.datasets import (
    detect_format,
    load_mm_rlhf_rewardbench,
    load_multimodal_rewardbench,
    load_openeqa,
    load_vl_rewardbench,
)
from groundrl.benchmarks.protocols import released_verdict, strict_verdict
from groundrl.cli.main import app

runner = CliRunner()


def png_bytes(color=(200, 10, 10)) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(buf, format="PNG")
    return buf.getvalue()


def write_png(path, color=(0, 0, 200)):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(color))
    return path


# --------------------------------------------------------------------------- VL-RewardBench


def vl_rows(tmp_path):
    write_png(tmp_path / "imgs" / "b.png")
    return [
        # embedded image, response 1 preferred
        {"id": "mathverse_1", "query": "q1", "response": ["A", "B"], "image": {"bytes": png_bytes(), "path": None},
         "human_ranking": [0, 1], "query_source": "mathverse"},
        # image by path, response 2 preferred
        {"id": "RLAIF-V_2", "query": "q2", "response": ["C", "D"], "image": {"bytes": None, "path": "imgs/b.png"},
         "human_ranking": [1, 0], "query_source": "rlaif-v"},
        # no query_source: classified by id -> general
        {"id": "wild_3", "query": "q3", "response": ["E", "F"], "image": {"bytes": png_bytes(), "path": None},
         "human_ranking": [0, 1], "query_source": None},
        # broken: tie ranking, missing image file, one response only, undecodable bytes
        {"id": "bad_tie", "query": "q", "response": ["x", "y"], "image": {"bytes": png_bytes(), "path": None},
         "human_ranking": [0, 0], "query_source": "povid"},
        {"id": "bad_img", "query": "q", "response": ["x", "y"], "image": {"bytes": None, "path": "imgs/none.png"},
         "human_ranking": [0, 1], "query_source": "povid"},
        {"id": "bad_resp", "query": "q", "response": ["x"], "image": {"bytes": png_bytes(), "path": None},
         "human_ranking": [0, 1], "query_source": "povid"},
        {"id": "bad_bytes", "query": "q", "response": ["x", "y"], "image": {"bytes": b"not an image", "path": None},
         "human_ranking": [0, 1], "query_source": "povid"},
    ]  # fmt: skip


def test_vl_rewardbench_parquet(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(vl_rows(tmp_path)), path)
    assert detect_format(path) == "vl-rewardbench"
    items, bad = load_vl_rewardbench(path)
    assert [(i["id"], i["preferred"], i["category"]) for i in items] == [
        ("mathverse_1", 1, "reasoning"),
        ("RLAIF-V_2", 2, "hallucination"),
        ("wild_3", 1, "general"),
    ]
    assert isinstance(items[0]["image"], bytes) and items[1]["image"] == str(tmp_path / "imgs" / "b.png")
    assert [b["id"] for b in bad] == ["bad_tie", "bad_img", "bad_resp", "bad_bytes"]
    assert bad[0]["error"] == "malformed human_ranking [0, 0]"
    assert bad[1]["error"] == "missing image 'imgs/none.png'"
    assert bad[3]["error"].startswith("unreadable embedded image")
    # a folder of parquet files (the published test/ split) loads the same rows
    folder = tmp_path / "split"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(vl_rows(tmp_path)[:2]), folder / "a.parquet")
    pq.write_table(pa.Table.from_pylist(vl_rows(tmp_path)[2:3]), folder / "b.parquet")
    items2, bad2 = load_vl_rewardbench(folder, image_root=tmp_path)
    assert [i["id"] for i in items2] == ["mathverse_1", "RLAIF-V_2", "wild_3"] and bad2 == []


def test_vl_rewardbench_jsonl_with_paths(tmp_path):
    rows = [
        {"id": "a", "query": "q", "response": ["x", "y"], "image": "imgs/b.png", "human_ranking": [1, 0],
         "query_source": "wildvision-battle"},
        {"id": "b", "query": "q", "response": ["x", "y"], "image": "imgs/b.png", "human_ranking": "[0, 1]",
         "query_source": "mmmu-pro"},
    ]  # fmt: skip
    write_png(tmp_path / "imgs" / "b.png")
    path = tmp_path / "vl.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n")
    assert detect_format(path) == "vl-rewardbench"
    items, bad = load_vl_rewardbench(path)
    assert [(i["preferred"], i["category"], i["source"]) for i in items] == [
        (2, "general", "wildvision-battle"),
        (1, "reasoning", "mmmu-pro"),
    ]
    assert len(bad) == 1 and bad[0]["row"] == 3 and bad[0]["error"].startswith("not JSON")


# --------------------------------------------------------------------------- Multimodal RewardBench


def test_multimodal_rewardbench_all_data(tmp_path):
    data = tmp_path / "data"
    write_png(data / "images" / "mathvista" / "1.png")
    write_png(data / "images" / "pairs" / "2.png")
    rows = [
        {"ID": "mathvista_1", "Text": "q", "Image": "images/mathvista/1.png", "Output1": "a", "Output2": "b",
         "Better": "Output2", "Category": "reasoning"},
        {"ID": "PAIRS_2", "Text": "q", "Image": "images/pairs/2.png", "Output1": "a", "Output2": "b",
         "Better": "Output1", "Category": "safety"},
        {"ID": "vqa_3", "Text": "q", "Image": "images/pairs/2.png", "Output1": "a", "Output2": "b",
         "Better": "Output1", "Category": "vqa"},
        {"ID": "bad_label", "Text": "q", "Image": "images/pairs/2.png", "Output1": "a", "Output2": "b",
         "Better": "tie", "Category": "vqa"},
        {"ID": "bad_image", "Text": "q", "Image": "images/gone.png", "Output1": "a", "Output2": "b",
         "Better": "Output1", "Category": "vqa"},
        {"ID": "bad_text", "Image": "images/pairs/2.png", "Output1": "a", "Output2": "b",
         "Better": "Output1", "Category": "vqa"},
    ]  # fmt: skip
    path = data / "all_data.json"
    path.write_text(json.dumps(rows))
    assert detect_format(path) == "multimodal-rewardbench"
    items, bad = load_multimodal_rewardbench(path)
    assert [(i["id"], i["preferred"], i["category"]) for i in items] == [
        ("mathvista_1", 2, "reasoning/math"),  # IDs starting "math" are reasoning/math
        ("PAIRS_2", 1, "safety/bias"),
        ("vqa_3", 1, "vqa"),
    ]
    assert [(b["id"], b["error"]) for b in bad] == [
        ("bad_label", "Better must be Output1 or Output2, got 'tie'"),
        ("bad_image", "missing image 'images/gone.png'"),
        ("bad_text", "missing field 'Text'"),
    ]


# --------------------------------------------------------------------------- MM-RLHF-RewardBench


def test_mm_rlhf_rewardbench_groups_and_video(tmp_path):
    write_png(tmp_path / "images" / "mcq_01.png")
    for k in range(40):
        write_png(tmp_path / "videos" / "video_7" / f"c01_{k:04d}.jpeg")
    rows = [
        {"id": "1", "prompt": "q", "chosen": "good", "rejected": "bad1", "image": "images/mcq_01.png"},
        {"id": "1", "prompt": "q", "chosen": "good", "rejected": "bad2", "image": "images/mcq_01.png"},
        {"id": "2", "prompt": "q", "chosen": "good", "rejected": "bad", "video": "videos/video_7"},
        {"id": "3", "prompt": "q", "chosen": "good", "rejected": "bad", "video": "videos/none"},
        {"id": "4", "prompt": "q", "chosen": "good", "image": "images/mcq_01.png"},
    ]
    path = tmp_path / "mm_reward_bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert detect_format(path) == "mm-rlhf-rewardbench"
    items, bad = load_mm_rlhf_rewardbench(path)
    assert [(i["id"], i["group"], i["category"], i["preferred"]) for i in items] == [
        ("1#0", "1", "mcq", 1),
        ("1#1", "1", "mcq", 1),
        ("2#0", "2", "video", 1),
    ]
    frames = items[2]["image"]
    assert len(frames) == 32 and frames[0].endswith("c01_0000.jpeg") and frames[-1].endswith("c01_0039.jpeg")
    assert [(b["id"], b["error"]) for b in bad] == [
        ("3", "missing video frame folder 'videos/none'"),
        ("4", "missing field 'rejected'"),
    ]


# --------------------------------------------------------------------------- OpenEQA


def openeqa_tree(tmp_path, n_frames=12):
    qs = [
        {"question": "What color is the sofa?", "answer": "red", "category": "attribute recognition",
         "question_id": "q1", "episode_history": "scannet-v0/002-scannet-scene0709_00"},
        {"question": "Where is the mug?", "answer": "on the table", "category": "object localization",
         "question_id": "q2", "episode_history": "hm3d-v0/000-hm3d-BFRyYbPCCPE"},
        {"question": "Is the light on?", "answer": "yes", "category": "object state recognition",
         "question_id": "q3", "episode_history": "hm3d-v0/999-missing"},
    ]  # fmt: skip
    root = tmp_path / "frames"
    for ep in ("scannet-v0/002-scannet-scene0709_00", "hm3d-v0/000-hm3d-BFRyYbPCCPE"):
        for k in range(n_frames):
            write_png(root / ep / f"{k:05d}-rgb.png", (k * 20, 0, 0))
            write_png(root / ep / f"{k:05d}-depth.png")
    path = tmp_path / "open-eqa-v0.json"
    path.write_text(json.dumps(qs))
    return path, root


def test_openeqa_questions_with_episode_frames(tmp_path):
    path, root = openeqa_tree(tmp_path)
    assert detect_format(path) == "openeqa"
    items, bad = load_openeqa(path, root, keyframes=5)
    assert [(i["question_id"], i["source"]) for i in items] == [("q1", "scannet-v0"), ("q2", "hm3d-v0")]
    # 12 rgb frames, 5 uniform: round(i * 11 / 4) = 0, 3 (2.75), 6 (5.5 -> 6), 8 (8.25), 11
    assert [p.rsplit("/", 1)[1] for p in items[0]["frames"]] == [
        "00000-rgb.png",
        "00003-rgb.png",
        "00006-rgb.png",
        "00008-rgb.png",
        "00011-rgb.png",
    ]
    assert [b["id"] for b in bad] == ["q3"] and "no frames under" in bad[0]["error"]


def test_openeqa_real_questions_file(external_data):
    items, bad = load_openeqa(
        external_data / "open-eqa" / "open-eqa-v0.json", external_data / "no-frames-here"
    )
    assert items == [] and len(bad) == 1636  # no frames here: every question reported, none dropped silently


# --------------------------------------------------------------------------- protocols


@pytest.mark.parametrize(
    ("text", "strict", "vl", "mmrb", "mmrlhf"),
    [
        ("<answer>1</answer>", 1, 1, 1, 1),
        ("<answer>Response 2</answer>", 2, 2, 2, 2),
        ("<answer>1 or 2</answer> finally 1", None, 1, 1, 1),  # tag has both: fall back to the last
        ("no tag, I pick 2", 2, 2, 2, 2),
        ("Response 1 is worse.\nResponse 2 wins", None, 2, 2, 1),  # mm-rlhf: first line with a digit
        ("no digit at all", None, None, 2, 2),  # the scripts' [0, 1] default: second shown
        ("<answer>2</answer> but 1", 2, 2, 2, 2),
    ],
)
def test_protocols_hand_worked(text, strict, vl, mmrb, mmrlhf):
    assert strict_verdict(text) == strict
    assert released_verdict(text, "vl-rewardbench") == vl
    assert released_verdict(text, "multimodal-rewardbench") == mmrb
    assert released_verdict(text, "mm-rlhf-rewardbench") == mmrlhf


def test_pairwise_cli_both_protocols_on_multimodal_rewardbench(chat_server, tmp_path):
    """Three pairs; the judge answers per query. Seed 0 swaps: computed below, so the
    expected numbers are derived by hand from the protocol rules."""
    from groundrl.benchmarks.pairwise_rm import swapped

    data = tmp_path / "data"
    write_png(data / "images" / "x.png")
    rows = [
        {"ID": f"vqa_{k}", "Text": f"Q{k}", "Image": "images/x.png", "Output1": f"good{k}", "Output2": f"bad{k}",
         "Better": "Output1", "Category": "vqa"}
        for k in range(3)
    ] + [{"ID": "broken", "Text": "Q", "Image": "images/x.png", "Output1": "a", "Output2": "b", "Better": "?",
          "Category": "vqa"}]  # fmt: skip
    (data / "all_data.json").write_text(json.dumps(rows))

    def responder(msgs, body):
        text = json.dumps(msgs)
        if "Q0" in text:  # a clean verdict for whichever slot holds good0
            return "<answer>1</answer>" if text.index("good0") < text.index("bad0") else "<answer>2</answer>"
        if "Q1" in text:
            return "I cannot decide."  # no digit: strict wrong; released votes for the 2nd shown
        return "<answer>Response 1 or Response 2</answer>"  # both digits: strict none; released last = 2

    chat_server.responder = responder
    out = tmp_path / "o"
    args = ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", chat_server.base_url]
    r = runner.invoke(
        app, ["bench", "pairwise-rm", str(data / "all_data.json"), "--parse", "both", *args, "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    assert m["dataset"] == "multimodal-rewardbench" and m["n"] == 3 and m["n_bad_items"] == 1
    # strict: only vqa_0 right
    assert m["accuracy"] == pytest.approx(1 / 3) and m["unparseable"] == 2
    # released: vqa_1 and vqa_2 both become "second shown", right exactly when the pair was swapped
    s1, s2 = swapped("vqa_1", 0), swapped("vqa_2", 0)
    assert m["released"]["accuracy"] == pytest.approx((1 + s1 + s2) / 3)
    assert m["released"]["n_differ"] == 2 and m["released"]["unparseable"] == 0
    report = (out / "report.md").read_text()
    assert "parse protocol `released`" in report and "Better must be Output1 or Output2" in report


def test_openeqa_format_with_frames_root(external_data, tmp_path):
    """The real dry-run predictions (5 questions, all from one episode) with 7 frames made
    for that episode: every item gets 3 uniform frames; an empty frames root fails."""
    oe = external_data / "open-eqa"
    preds = json.loads((oe / "dry_run" / "gpt4o-dry_run-predictions.json").read_text())
    qs = {q["question_id"]: q for q in json.loads((oe / "open-eqa-v0.json").read_text())}
    ep = qs[preds[0]["question_id"]]["episode_history"]
    for k in range(7):
        write_png(tmp_path / "frames" / ep / f"{k:05d}-rgb.png")
    (tmp_path / "empty").mkdir()
    out = tmp_path / "items.jsonl"

    def call(root):
        return runner.invoke(
            app,
            ["bench", "openeqa-format", str(oe / "open-eqa-v0.json"),
             str(oe / "dry_run" / "gpt4o-dry_run-predictions.json"),
             str(oe / "dry_run" / "gpt4o-dry_run-predictions-metrics.json"), "--frames-root", str(root),
             "--keyframes", "3", "-o", str(out)],
        )  # fmt: skip

    r = call(tmp_path / "frames")
    assert r.exit_code == 0, r.output
    items = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(items) == 5 and all(qs[it["id"]]["episode_history"] == ep for it in items)
    for it in items:  # 7 frames, 3 uniform: 0, 3, 6
        assert [f.rsplit("/", 1)[1] for f in it["frames"]] == [
            "00000-rgb.png",
            "00003-rgb.png",
            "00006-rgb.png",
        ]
    r = call(tmp_path / "empty")
    assert r.exit_code == 1 and "5 items have no frames" in r.output


def test_vl_rewardbench_report_by_category_and_source(chat_server, tmp_path):
    """A judge that always answers 1: right exactly on the pairs whose preferred response
    is shown first; macro over the three categories and a by-source table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from groundrl.benchmarks.pairwise_rm import swapped

    path = tmp_path / "test.parquet"
    pq.write_table(pa.Table.from_pylist(vl_rows(tmp_path)), path)
    chat_server.responder = lambda msgs, body: "<answer>1</answer>"
    out = tmp_path / "o"
    args = ["--judge-backend", "openai", "--judge-model", "j", "--judge-url", chat_server.base_url]
    r = runner.invoke(app, ["bench", "pairwise-rm", str(path), *args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    m = json.loads((out / "metrics.json").read_text())
    right = {
        i: (pref == 1) != swapped(i, 0) for i, pref in [("mathverse_1", 1), ("RLAIF-V_2", 2), ("wild_3", 1)]
    }
    assert m["by_category"]["reasoning"]["accuracy"] == float(right["mathverse_1"])
    assert m["by_category"]["hallucination"]["accuracy"] == float(right["RLAIF-V_2"])
    assert m["macro_accuracy"] == pytest.approx(sum(right.values()) / 3)  # one pair per category
    assert set(m["by_source"]) == {"mathverse", "rlaif-v"} and m["n_bad_items"] == 4
    assert "## by source" in (out / "report.md").read_text()
