"""Proxy-GRM cold start [Proxy-GRM §3.3 Stage 1, App. B.2-B.3]: a teacher (a real chat
server on 127.0.0.1) critiques each pair; well-formed right critiques are Correct (shared
10k:5k:10k per Table 5), the rest Hard; the cold-start records train a plain `kind: sft`
stage."""

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.curate.cold_start import TABLE5_SHARES, _split_of, check_shares, split_record

GOOD = "<rubric>1. counts the chairs (w 0.6)</rubric><eval>r{p} counts right</eval><answer>{p}</answer>"


def _pairs(n):
    # query k: the teacher is right and well formed for k % 4 in (0, 1), wrong for 2, malformed for 3
    return [
        {
            "id": f"p{k}",
            "query": f"q{k} how many chairs?",
            "response_1": "four",
            "response_2": "three",
            "preferred": 1 + k % 2,
        }
        for k in range(n)
    ]


def _teacher(msgs, body):
    text = msgs[-1]["content"][-1]["text"]
    k = int(text.split("Question: q", 1)[1].split(" ", 1)[0])
    pref = 1 + k % 2
    if k % 4 == 2:
        return GOOD.format(p=3 - pref)  # picks the other response
    if k % 4 == 3:
        return f"Sure! {GOOD.format(p=pref)}"  # right verdict, text before <rubric>: format 0
    return GOOD.format(p=pref)


def test_split_by_hand():
    r = {**_pairs(1)[0], "teacher_outputs": ["<answer>1</answer>", GOOD.format(p=1)]}
    out = split_record(r)
    assert out["status"] == "correct" and out["target"] == GOOD.format(p=1)
    assert out["split"] in TABLE5_SHARES and out["prompt"].endswith("[Response 2]\nthree")
    hard = split_record({**r, "teacher_outputs": [GOOD.format(p=2)]})
    assert hard["status"] == "hard" and "picked 2, preferred 1" in hard["why"] and "target" not in hard
    bad = split_record({**r, "teacher_outputs": ["Sure " + GOOD.format(p=1)]})
    assert bad["status"] == "hard" and "bad format" in bad["why"]
    assert split_record({"id": 1, "query": "q"})["status"] == "missing_fields"
    with pytest.raises(ValueError, match="sum to 1"):
        check_shares({"cold_start": 0.5})


def test_table5_shares_over_many_ids():
    # 10k : 5k : 10k of the Correct set [Table 5]; the draw is a hash of id and seed
    counts = Counter(_split_of(f"id{i}", 0, TABLE5_SHARES) for i in range(20_000))
    assert abs(counts["cold_start"] / 20_000 - 0.4) < 0.02
    assert abs(counts["proxy_sft"] / 20_000 - 0.2) < 0.02
    assert _split_of("id7", 0, TABLE5_SHARES) == _split_of("id7", 0, TABLE5_SHARES)


@pytest.mark.slow
def test_cli_with_a_served_teacher_then_a_plain_sft_stage(tmp_path, chat_server):
    chat_server.responder = _teacher
    inp = tmp_path / "pairs.jsonl"
    inp.write_text("".join(json.dumps(p) + "\n" for p in _pairs(16)))
    out, sft, rl = tmp_path / "split.jsonl", tmp_path / "cold_start.jsonl", tmp_path / "rl.jsonl"
    res = CliRunner().invoke(
        app,
        [
            "curate", "proxy-cold-start", str(inp), "-o", str(out), "--sft", str(sft), "--rl", str(rl), "-q",
            "--judge-backend", "openai", "--judge-model", "teacher", "--judge-url", chat_server.base_url,
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(chat_server.requests) == 16
    # by hand: k % 4 in (0, 1) -> correct (8 of 16), 2 (wrong verdict) and 3 (malformed) -> hard
    assert [r["status"] for r in rows] == ["correct", "correct", "hard", "hard"] * 4
    cold = [r for r in rows if r.get("split") == "cold_start"]
    sft_rows = [json.loads(x) for x in sft.read_text().splitlines()]
    assert [s["id"] for s in sft_rows] == [r["id"] for r in cold] and cold
    assert all(set(s) == {"id", "prompt", "target"} and "<answer>" in s["target"] for s in sft_rows)
    rl_rows = [json.loads(x) for x in rl.read_text().splitlines()]
    assert [r["id"] for r in rl_rows] == [f"p{k}" for k in range(16) if k % 4 in (2, 3)]
    # one prompt for SFT and RL: the policy GRM's instruction, then the pair
    for r in [*rl_rows, *sft_rows]:
        k = r["id"][1:]
        assert f"Question: q{k} how many chairs?" in r["prompt"] and "<rubric>" in r["prompt"]
        assert r["prompt"].endswith("[Response 1]\nfour\n\n[Response 2]\nthree")
    # the cold-start records train a plain `kind: sft` stage on the tiny model
    cfg = {
        "recipe": "proxy_grm",
        "model": "tiny",
        "output_dir": str(tmp_path / "run"),
        "stages": [{"name": "cold_start", "kind": "sft", "data": str(sft), "sft": {"max_steps": 1}}],
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["train", "--config", str(path)])
    assert res.exit_code == 0, res.output
    assert (Path(cfg["output_dir"]) / "cold_start" / "final").is_dir()
