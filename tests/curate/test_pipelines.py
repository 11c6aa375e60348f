import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.curate import consensus, mask_difficulty
from groundrl.verify import AgenticVerifier, ParsedResponse

runner = CliRunner()


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def read(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_tool_selection_points_without_frames():
    v = AgenticVerifier()
    p = ParsedResponse.of('The cup <points x1="2" y1="2">cup</points> is here. <answer>cup</answer>')
    assert p.points and not p.frames and p.answer == "cup"
    r = v.verify(
        ['The cup <points x1="2" y1="2">cup</points> is here. <answer>cup</answer>'],
        [{"answer": "cup", "boxes": {"cup": [[0, 0, 5, 5]]}}],
    )[0]
    assert set(r.chosen) == {"outcome", "spatial"}
    assert r.parts["spatial"].value == 1.0 and r.total == 1.0


def test_gate_and_weights():
    v = AgenticVerifier(weights={"grounding": 3.0}, tau=0.5)
    text = 'See <points x1="9" y1="9">cup</points> <answer>cup</answer>'
    s = {"answer": "cup", "boxes": {"cup": [[0, 0, 5, 5]]}}
    # outcome 1 ≥ τ: (1·1 + 3·G) / 4 with G = spatial = 0 (the only grounding category)
    assert v.verify([text], [s])[0].total == 0.25
    # wrong answer: gate closed, R = R_acc = 0 whatever the grounding
    assert v.verify([text.replace("<answer>cup", "<answer>mug")], [s])[0].total == 0.0
    with pytest.raises(ValueError, match="gate"):
        AgenticVerifier(tools=["spatial"])
    with pytest.raises(ValueError, match="unknown tool"):
        AgenticVerifier(tools=["outcome", "reasoning"])


def test_verifier_filter_pipeline(tmp_path):
    rows = [
        {
            "id": "a",
            "question": "q",
            "answer": "cup",
            "boxes": {"cup": [[0, 0, 5, 5]]},
            "rollouts": [
                '<points x1="9" y1="9">cup</points><answer>cup</answer>',
                '<points x1="1" y1="1">cup</points><answer>cup</answer>',
            ],
        },
        {"id": "b", "question": "q", "answer": "cup", "rollouts": ["<answer>mug</answer>"]},
        {
            "id": "c",
            "question": "q",
            "answer": "cup",
            "boxes": {"cup": [[0, 0, 5, 5]]},
            "rollouts": [
                '<points x1="9" y1="9">cup</points><points x1="1" y1="1">cup</points><answer>cup</answer>'
            ],
        },
    ]
    out = tmp_path / "o.jsonl"
    r = runner.invoke(
        app, ["curate", "verifier-filter", str(write(tmp_path / "i.jsonl", rows)), "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    res = {x["id"]: x for x in read(out)}
    assert res["a"]["kept"] and res["a"]["best_index"] == 1 and res["a"]["best_score"] == 1.0
    assert not res["b"]["kept"] and res["b"]["reason"] == "outcome wrong"
    # (1 + 0.5) / 2 = 0.75 ≥ 0.7 kept; with --threshold 0.8 it would not be
    assert res["c"]["kept"] and res["c"]["best_score"] == 0.75


def test_rejective_and_consensus_pipelines(tmp_path):
    rows = [
        {
            "id": "x",
            "gt_score": 7,
            "evaluations": [{"critique": "c", "score": 6}, {"critique": "c", "score": 1}],
        },
        {"id": "y", "gt_score": 7, "evaluations": [{"critique": "c", "score": 7}]},
    ]
    out = tmp_path / "r.jsonl"
    r = runner.invoke(
        app, ["curate", "rejective", str(write(tmp_path / "r_in.jsonl", rows)), "-o", str(out), "--tau", "2"]
    )
    assert r.exit_code == 0 and "kept: 1" in r.output and "too_easy: 1" in r.output
    assert read(out) == [
        {"id": "x", "kept": [0], "reason": "kept", "line": 1},
        {"id": "y", "kept": [], "reason": "too_easy", "line": 2},
    ]
    assert consensus({"id": 1, "gold": "Cup", "answers": ["cup", "the cup"]}, keep_a=1.0)["category"] == "A"
    assert consensus({"id": 1, "gold": "cup", "answers": ["mug", "cup"]})["category"] == "B"
    c = consensus({"id": 1, "gold": "cup", "answers": ["mug"], "strong_answer": "cup"})
    assert (c["category"], c["kept"], c["suspect_label"]) == ("C", True, False)
    d = consensus({"id": 1, "gold": "cup", "answers": ["mug"], "strong_answer": "bowl"})
    assert (d["category"], d["kept"], d["suspect_label"]) == ("D", False, True)
    a0 = consensus({"id": 1, "gold": "cup", "answers": ["cup"]}, keep_a=0.0)
    assert (a0["category"], a0["kept"]) == ("A", False)


def test_mask_difficulty_known_threshold():
    img = Image.new("L", (20, 20), 255)

    def honest(masked, sample):
        # right while at least 55% of the pixels survive: the answer reads the pixels it gets
        return (np.array(masked) > 0).mean() >= 0.55

    res = mask_difficulty({"id": "s", "image": img}, honest, k=3)
    accs = {c["ratio"]: c["accuracy"] for c in res["curve"]}
    assert accs[0.4] == 1.0 and accs[0.5] == 0.0
    assert res["lambda_star"] == 0.5
    assert mask_difficulty({"id": "t", "image": img}, lambda m, s: True, k=2)["lambda_star"] is None


def test_resume_after_kill_gives_same_output(tmp_path):
    rows = [{"id": f"t{i}", "instruction": "do", "actions": [f"a{j}" for j in range(3)]} for i in range(40)]
    inp = write(tmp_path / "in.jsonl", rows)
    full = tmp_path / "full.jsonl"
    assert runner.invoke(app, ["curate", "decompose", str(inp), "-o", str(full)]).exit_code == 0
    # an interrupted run: the first records written, the last line cut mid-write
    partial = tmp_path / "partial.jsonl"
    lines = full.read_text().splitlines(keepends=True)
    partial.write_text("".join(lines[:50]) + lines[50][:17])
    r = runner.invoke(app, ["curate", "decompose", str(inp), "-o", str(partial)])
    assert r.exit_code == 0, r.output
    assert partial.read_text() == full.read_text()
    # and a real kill of a running process, then a rerun
    slow = tmp_path / "slow.jsonl"
    rej_rows = [
        {"id": f"r{i}", "gt_score": 5, "evaluations": [{"critique": "c", "score": i % 10}]}
        for i in range(3000)
    ]
    rin = write(tmp_path / "rin.jsonl", rej_rows)
    proc = subprocess.Popen(
        [sys.executable, "-m", "groundrl.cli.main", "curate", "rejective", str(rin), "-o", str(slow)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import time

    deadline = time.time() + 30
    while time.time() < deadline and (not slow.exists() or len(slow.read_text().splitlines()) < 100):
        time.sleep(0.01)
    proc.kill()
    proc.wait()
    r = runner.invoke(app, ["curate", "rejective", str(rin), "-o", str(slow)])
    assert r.exit_code == 0, r.output
    ids = [x["id"] for x in read(slow)]
    assert len(ids) == len(set(ids)) == 3000
    ref = tmp_path / "ref.jsonl"
    runner.invoke(app, ["curate", "rejective", str(rin), "-o", str(ref)])
    assert sorted(read(slow), key=lambda x: x["id"]) == sorted(read(ref), key=lambda x: x["id"])


@pytest.mark.slow
def test_verifier_filter_on_tiny_vlm_rollouts(tiny_vlm_dir, tmp_path):
    from groundrl.judges import SamplingParams
    from groundrl.testing.judge_backend import make_backend

    backend = make_backend("transformers", str(tiny_vlm_dir), batch_size=4)
    img = Image.new("RGB", (56, 56), (30, 90, 200))
    req = [
        {
            "role": "user",
            "content": [
                {"type": "image", "image": img},
                {"type": "text", "text": "Which colour is the square? Answer in <answer></answer>."},
            ],
        }
    ]
    rollouts = backend.generate([req], SamplingParams(max_tokens=12, n=4, temperature=1.0, seed=0))[0].texts
    assert len(rollouts) == 4
    rows = [
        {"id": "tiny", "question": "Which colour?", "answer": "blue", "rollouts": rollouts},
        {"id": "hand", "question": "Which colour?", "answer": "blue", "rollouts": ["<answer>blue</answer>"]},
    ]
    out = tmp_path / "o.jsonl"
    r = runner.invoke(
        app, ["curate", "verifier-filter", str(write(tmp_path / "i.jsonl", rows)), "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    res = {x["id"]: x for x in read(out)}
    assert res["tiny"]["kept"] is False  # a random model does not answer "blue"
    assert res["hand"]["kept"] is True


def test_verifier_as_the_argos_rubric_part():
    from groundrl.integrations.trl import reward_funcs
    from groundrl.recipes import get_recipe

    rubric = get_recipe("argos").rubric(verifier=AgenticVerifier())
    assert rubric.names == ["verifier"]
    funcs, weights = reward_funcs(rubric, async_judges=False)
    out = funcs[0](
        prompts=["q", "q"],
        completions=['<points x1="1" y1="1">cup</points><answer>cup</answer>', "<answer>mug</answer>"],
        answer=["cup", "cup"],
        boxes=[{"cup": [[0, 0, 5, 5]]}] * 2,
    )
    assert out == [1.0, 0.0] and weights == [1.0]


def test_consensus_and_mask_difficulty_through_the_cli(tmp_path, chat_server):
    import base64
    import io

    rows = [
        {"id": "a", "gold": "cup", "answers": ["cup", "cup"]},
        {"id": "b", "gold": "cup", "answers": ["mug"], "strong_answer": "cup"},
        {"id": "c", "gold": "cup", "answers": ["mug"]},
    ]
    out = tmp_path / "c.jsonl"
    r = runner.invoke(
        app,
        ["curate", "consensus", str(write(tmp_path / "c_in.jsonl", rows)), "-o", str(out), "--keep-a", "1.0"],
    )
    assert r.exit_code == 0, r.output
    assert [(x["category"], x["kept"]) for x in read(out)] == [("A", True), ("C", True), ("D", False)]

    def honest(msgs, body):
        # the answering model sees the pixels it is sent: right while ≥ 55% survive masking
        url = next(p["image_url"]["url"] for p in msgs[-1]["content"] if p["type"] == "image_url")
        arr = np.array(Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("L"))
        return "<answer>white</answer>" if (arr > 0).mean() >= 0.55 else "<answer>dark</answer>"

    chat_server.responder = honest
    Image.new("RGB", (16, 16), (255, 255, 255)).save(tmp_path / "w.png")
    rows = [{"id": "s", "image": str(tmp_path / "w.png"), "question": "What colour?", "answer": "white"}]
    out = tmp_path / "m.jsonl"
    r = runner.invoke(
        app,
        [
            "curate",
            "mask-difficulty",
            str(write(tmp_path / "m_in.jsonl", rows)),
            "-o",
            str(out),
            "--k",
            "2",
            "--judge-backend",
            "openai",
            "--judge-model",
            "m",
            "--judge-url",
            chat_server.base_url,
        ],
    )
    assert r.exit_code == 0, r.output
    res = read(out)[0]
    assert res["lambda_star"] == 0.5 and res["curve"][4]["accuracy"] == 1.0
