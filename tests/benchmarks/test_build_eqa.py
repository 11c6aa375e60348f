"""`bench build-eqa` end to end against the local chat server and a tiny frames folder
(issue 19, item 3): keyframes, policy responses, reference-aware labels, episode-disjoint
ScanNet/HM3D splits, resumption, and items that `bench score-rm` reads."""

import io
import json
import re

import pytest
from typer.testing import CliRunner

from groundrl.benchmarks.eqa_build import INCORRECT_SYSTEM, LABEL_SYSTEM, POLICY_SYSTEM, episode_split
from groundrl.cli.main import app

runner = CliRunner()
REFS = {"What color is the sofa?": "red", "Where is the mug?": "on the table"}


def png(path, shade):
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (shade, 0, 0)).save(buf, format="PNG")
    path.write_bytes(buf.getvalue())


@pytest.fixture
def openeqa(tmp_path):
    qs = [
        {"question": "What color is the sofa?", "answer": "red", "category": "attribute recognition",
         "question_id": "q1", "episode_history": "scannet-v0/002-scannet-scene0709_00"},
        {"question": "Where is the mug?", "answer": "on the table", "category": "object localization",
         "question_id": "q2", "episode_history": "hm3d-v0/000-hm3d-BFRyYbPCCPE"},
        {"question": "Is the light on?", "answer": "yes", "category": "object state recognition",
         "question_id": "q3", "episode_history": "hm3d-v0/999-no-frames"},
    ]  # fmt: skip
    root = tmp_path / "frames"
    for ep in ("scannet-v0/002-scannet-scene0709_00", "hm3d-v0/000-hm3d-BFRyYbPCCPE"):
        for k in range(9):
            png(root / ep / f"{k:05d}-rgb.png", 20 * k)
    path = tmp_path / "open-eqa-v0.json"
    path.write_text(json.dumps(qs))
    return path, root


def responder(msgs, body):
    system = msgs[0]["content"]
    user = " ".join(p.get("text", "") for p in msgs[1]["content"] if p.get("type") == "text")
    if system == POLICY_SYSTEM:
        ref = REFS[user.removeprefix("Question: ")]
        return [
            f"<think>frame 2 shows it</think><answer>{ref}</answer>",
            "<think>frame 4 shows it</think><answer>blue</answer>",
            "I am not sure.",  # no <answer>: dropped and counted
        ][body["sample_index"]]
    if system == INCORRECT_SYSTEM:
        return "<think>I misread frame 1</think><answer>green</answer>"
    assert system == LABEL_SYSTEM
    ref = re.search(r"Reference answer \(do not reveal\): (.*)", user).group(1)
    ans = re.search(r"Agent answer: (.*)", user).group(1)
    if ans == ref:
        return "<critique>Correct and grounded in frame 2.</critique><score>9</score>"
    if ans == "green":
        return f"<critique>It should be {ref}.</critique><score>1</score>"  # names the reference: flagged
    return "<critique>Wrong; frame 4 does not show that.</critique><score>2</score>"


def test_build_eqa_end_to_end_and_resume(openeqa, chat_server, tmp_path):
    questions, root = openeqa
    chat_server.responder = responder
    out = tmp_path / "eqa"
    args = [
        "bench", "build-eqa", str(questions), "--frames-root", str(root), "-o", str(out),
        "--policy-model", "policy", "--policy-url", chat_server.base_url, "--responses", "3", "--incorrect", "1",
        "--keyframes", "3", "--test-fraction", "0.5",
        "--judge-backend", "openai", "--judge-model", "judge", "--judge-url", chat_server.base_url,
    ]  # fmt: skip
    r = runner.invoke(app, [*args, "--limit", "1"])
    assert r.exit_code == 0, r.output
    first = len(chat_server.requests)
    r = runner.invoke(app, args)  # resumes: only q2 is asked for
    assert r.exit_code == 0, r.output
    assert len(chat_server.requests) == 2 * first
    m = json.loads((out / "manifest.json").read_text())
    assert m["n_questions"] == 2 and m["n_questions_resumed"] == 1 and m["n_bad_questions"] == 1
    # a rerun with other settings would mix two sets in one journal: refused, naming the flag
    other = [
        ("other" if prev == "--judge-model" else a) for prev, a in zip(["", *args[:-1]], args, strict=True)
    ]
    r = runner.invoke(app, other)
    said = " ".join(r.output.replace("│", " ").split())
    assert r.exit_code == 2 and '--judge-model was "judge", now "other"' in said and "--restart" in said
    assert len(chat_server.requests) == 2 * first  # nothing was asked
    # per question: 3 sampled (1 without <answer>) + 1 incorrect → 3 items scored 9, 2, 1
    assert m["n_items"] == 6 and m["n_unparsed_responses"] == 2 and m["n_unscored_responses"] == 0
    assert m["score_histogram"] == {"1": 2, "2": 2, "9": 2}
    assert m["by_response_kind"] == {"sampled": 4, "prompted_incorrect": 2}
    assert m["n_leaks_reference"] == 2 and m["episode_overlap"] == 0
    items = [json.loads(x) for x in (out / "items.jsonl").read_text().splitlines()]
    assert {it["source"] for it in items} == {"scannet-v0", "hm3d-v0"}
    for it in items:
        assert it["split"] == episode_split(it["episode"], 0, 0.5)
        assert len(it["frames"]) == 3 and it["frames"][1].endswith("00004-rgb.png")  # 9 frames: 0, 4, 8
    by_split = {s: [json.loads(x) for x in (out / f"{s}.jsonl").read_text().splitlines()]
                for s in ("train", "test") if (out / f"{s}.jsonl").exists()}  # fmt: skip
    assert sum(len(v) for v in by_split.values()) == 6
    # the policy never sees the reference; the judge does, with the instruction not to reveal it
    for req in chat_server.requests:
        text = json.dumps(req["messages"])
        if POLICY_SYSTEM[:40] in text or INCORRECT_SYSTEM[:40] in text:
            assert "Reference answer" not in text
        else:
            assert (
                "do not reveal" in text and "never mention the reference" in text
            )  # [EQA-RM App. D Important 1]
    # the built items are score-rm items
    chat_server.responder = lambda msgs, body: "<critique>c</critique><score>9</score>"
    r = runner.invoke(
        app,
        ["bench", "score-rm", str(out / "items.jsonl"), "--judge-backend", "openai", "--judge-model", "j",
         "--judge-url", chat_server.base_url, "-o", str(tmp_path / "score")],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    s = json.loads((tmp_path / "score" / "metrics.json").read_text())
    assert s["n"] == 6 and s["accuracy"] == pytest.approx(2 / 6)  # 9 is within 2 of gold 9 only
    assert set(s["by_source"]) == {"scannet-v0", "hm3d-v0"}
