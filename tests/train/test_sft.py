import pytest

pytest.importorskip("trl")

from PIL import Image  # noqa: E402

from groundrl.train.sft import build_sft_trainer, rft_records  # noqa: E402


def test_rft_records_keep_only_informative_correct_critiques():
    inst = [
        {
            "id": "a",
            "prompt": "p",
            "gt_score": 7,
            "evaluations": [{"critique": "ok", "score": 6}, {"critique": "bad", "score": 2}],
        },
        {
            "id": "b",
            "prompt": "p",
            "gt_score": 7,
            "evaluations": [{"critique": "x", "score": 7}, {"critique": "y", "score": 8}],
        },
        {"id": "c", "prompt": "p", "gt_score": 7, "evaluations": [{"critique": "z", "score": 1}]},
    ]
    rows, counts = rft_records(inst)
    assert counts == {"kept": 1, "too_easy": 1, "none_correct": 1}
    assert rows == [{"prompt": "p", "target": "<critique>ok</critique><score>6</score>", "images": []}]


@pytest.mark.slow
def test_sft_trainer_runs_on_tiny_vlm_with_images(tiny_vlm_dir, tmp_path):
    import torch

    img = tmp_path / "f.png"
    Image.new("RGB", (40, 40), (9, 200, 9)).save(img)
    rows = [
        {
            "prompt": "Judge this trajectory.",
            "target": "<critique>grounded</critique><score>8</score>",
            "images": [str(img)],
        }
    ] * 4
    trainer = build_sft_trainer(str(tiny_vlm_dir), rows, str(tmp_path / "out"))
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    changed = [n for n, p in trainer.model.named_parameters() if not torch.equal(before[n], p.detach())]
    assert changed and any("visual" in n for n in changed)
    assert any("loss" in h for h in trainer.state.log_history)


@pytest.mark.slow
def test_sft_cli_cold_start(tmp_path):
    import json

    from typer.testing import CliRunner

    from groundrl.cli.main import app

    Image.new("RGB", (40, 40), (9, 9, 200)).save(tmp_path / "f.png")
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(
            json.dumps({"prompt": "Plan.", "target": "find a Apple", "images": ["f.png"]}) + "\n"
            for _ in range(4)
        )
    )
    r = CliRunner().invoke(
        app, ["sft", str(data), "-o", str(tmp_path / "out"), "--max-steps", "3", "--lr", "1e-3"]
    )
    assert r.exit_code == 0, r.output
    assert "saved to" in r.output and (tmp_path / "out" / "final").is_dir()
    r = CliRunner().invoke(app, ["sft", str(data), "--model", str(tmp_path / "nope")], env={"COLUMNS": "250"})
    assert r.exit_code != 0 and "not a local path" in r.output
