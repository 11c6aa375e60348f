"""EQA-RM RFT: Eq. 1 selection on fixed samples, and the preset's rft → cgrpo run."""

import json
import re
from pathlib import Path

import pytest
import yaml

from groundrl.train.config import read_config

ROOT = Path(__file__).resolve().parents[2]


def test_kept_rows_are_exactly_those_eq1_keeps():
    from groundrl.train.rft import select_rft

    instances = [
        # gt 7, τ 2: |7−6| = 1 kept, |7−9| = 2 not < 2, |7−7| = 0 kept, unparseable → wrong
        {
            "gt_score": 7,
            "evaluations": [
                "<score>6</score>",
                "<score>9</score>",
                "<critique>c</critique><score>7</score>",
                "none",
            ],
        },
        {"gt_score": 3, "evaluations": ["<score>3</score>", "<score>4</score>"]},  # all correct: too easy
        {"gt_score": 5, "evaluations": ["<score>9</score>", "<score>0</score>"]},  # none correct
        {"gt_score": "x", "evaluations": ["<score>1</score>"]},  # no gold: an error, nothing kept
        {"gt_score": 2, "evaluations": [{"score": 1}, {"critique": "<score>8</score>"}]},
    ]
    kept, counts = select_rft(instances, tau=2.0)
    assert kept == [(0, 0), (0, 2), (4, 0)]
    assert counts == {
        "instances": 5,
        "sampled": 11,
        "kept": 3,
        "kept_instances": 2,
        "too_easy": 1,
        "none_correct": 1,
        "errors": 1,
    }
    # τ = 3: |7−9| = 2 < 3 is correct too; the first instance is still kept (the unparseable one is wrong)
    assert select_rft(instances, tau=3.0)[0] == [(0, 0), (0, 1), (0, 2), (4, 0)]


def test_rft_config_is_typed():
    from groundrl.train.rft import RFTConfig

    with pytest.raises(ValueError, match="allowed: k, tau"):
        RFTConfig.from_mapping({"K": 4})
    with pytest.raises(ValueError, match="tau"):
        RFTConfig.from_mapping({"tau": 0})
    assert RFTConfig.from_mapping({"sampler": "policy"}).tau == 2.0


SCORES = [8, 8, 1, 5]  # the server's score for sample i of every request


def test_eqa_rm_preset_runs_rft_then_cgrpo(tmp_path, chat_server):
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    chat_server.responder = lambda msgs, body: (
        f"<critique>looks fine</critique><score>{SCORES[body['sample_index']]}</score>"
    )
    cfg = read_config(ROOT / "configs/cpu-tiny/eqa_rm_pipeline.yaml")
    cfg["data"] = str(ROOT / cfg["data"])
    cfg["output_dir"] = str(tmp_path / "run")
    rft, cg = cfg["stages"]
    rft["rft"]["sampler"] = {
        "backend": "openai",
        "model": "policy",
        "url": chat_server.base_url,
        "retries": 0,
    }
    cg["grpo"]["max_steps"] = 1
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    res = CliRunner().invoke(app, ["train", "eqa_rm", "--config", str(path)])
    assert res.exit_code == 0, res.output
    out = tmp_path / "run"
    rows = [json.loads(x) for x in (out / "log.jsonl").read_text().splitlines()]
    head = rows[0]
    # gold 8, 6, 3 vs samples 8, 8, 1, 5 (τ = 2): ep0 keeps 8, 8; ep1 keeps 5; ep2 keeps none
    assert head["stage"] == "rft" and head["rft/kept"] == 3 and head["rft/sampled"] == 12
    assert head["rft/kept_rate"] == pytest.approx(0.25) and head["rft/none_correct"] == 1
    assert any(r["stage"] == "rft" and "loss" in r for r in rows)  # the SFT on the kept evaluations ran
    assert any(r["stage"] == "cgrpo" and "cgrpo/boost_rate/spatial" in r for r in rows)
    kept = [json.loads(x) for x in (out / "rft" / "rft.jsonl").read_text().splitlines()]
    assert [(k["id"], k["target"]) for k in kept] == [
        ("ep0", "<critique>looks fine</critique><score>8</score>"),
        ("ep0", "<critique>looks fine</critique><score>8</score>"),
        ("ep1", "<critique>looks fine</critique><score>5</score>"),
    ]
    # the sampler saw the one EQA-RM prompt: 5 keyframes, then question / reasoning / answer
    # (calls run concurrently: find the mug episode's request rather than the first to arrive)
    req = next(r for r in chat_server.requests if "Where is the mug" in str(r["messages"]))["messages"]
    parts = req[-1]["content"]
    assert [p["type"] for p in parts] == ["image_url"] * 5 + ["text"]
    assert re.search(r"Question: Where is the mug\?", parts[-1]["text"])
    assert (out / "cgrpo" / "final").is_dir() and (out / "report.md").is_file()
    assert "kept rate 0.250" in (out / "report.md").read_text()


def test_keyframes_and_pixel_bounds():
    from PIL import Image

    from groundrl.train.rm_data import RMInputConfig, fit_pixels, keyframe_indices, load_keyframes

    assert keyframe_indices(7, 5) == [0, 2, 3, 5, 6]
    assert keyframe_indices(100, 5) == [0, 25, 50, 74, 99]
    im = fit_pixels(Image.new("RGB", (640, 480)), 56 * 56, 112 * 112)
    assert im.size[0] % 28 == 0 and im.size[1] % 28 == 0 and im.size[0] * im.size[1] <= 112 * 112
    frames = load_keyframes("eqa_frames/ep0", ROOT / "configs/data", RMInputConfig(5, 3136, 3136))
    assert len(frames) == 5 and all(f.size == (56, 56) for f in frames)
    with pytest.raises(ValueError, match="keyframes"):
        RMInputConfig.from_mapping({"keyframes": 0})


@pytest.mark.parametrize(
    "path,recipe",
    [
        ("configs/papers/eqa_rm.yaml", "eqa_rm"),
        ("configs/papers/proxy_grm.yaml", "proxy_grm"),
        ("configs/papers/proxy_agent.yaml", "proxy_grm"),
        ("configs/cpu-tiny/eqa_rm_pipeline.yaml", "eqa_rm"),
        ("configs/cpu-tiny/proxy_grm_pipeline.yaml", "proxy_grm"),
        ("configs/cpu-tiny/proxy_agent.yaml", "proxy_grm"),
    ],
)
def test_presets_validate(path, recipe):
    """Every block of every stage is parsed at load (typed), before any model loads."""
    from groundrl.train.cgrpo import CGRPOConfig
    from groundrl.train.config import load_train_config
    from groundrl.train.rft import RFTConfig
    from groundrl.train.rm_data import RMInputConfig
    from groundrl.train.rm_stages import ProxySettings

    cfg = load_train_config(ROOT / path, recipe)
    for st in cfg.stages:
        if st.kind.name in ("rft", "cgrpo"):
            assert isinstance(st.blocks["inputs"], RMInputConfig)
        if st.kind.name == "rft":
            assert isinstance(st.blocks["rft"], RFTConfig)
        if st.kind.name == "cgrpo":
            assert isinstance(st.blocks["cgrpo"], CGRPOConfig)
        if st.kind.name == "proxy_grpo":  # typed, with its defaults when the file leaves it out
            assert isinstance(st.settings.proxy, ProxySettings)
            assert st.settings.proxy == st.blocks.get("proxy", ProxySettings())


def test_misspelt_stage_key_is_refused():
    from groundrl.train.config import build_train_config

    with pytest.raises(ValueError, match="unknown key 'cgrpoo'; did you mean 'cgrpo'"):
        build_train_config({"stages": [{"kind": "cgrpo", "cgrpoo": {}}]}, "eqa_rm")
    with pytest.raises(ValueError, match="cgrpo"):
        build_train_config({"stages": [{"kind": "cgrpi"}]}, "eqa_rm")
