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
    assert "wrote " in r.output and (tmp_path / "out" / "final").is_dir()
    r = CliRunner().invoke(app, ["sft", str(data), "--model", str(tmp_path / "nope")], env={"COLUMNS": "250"})
    assert r.exit_code != 0 and "not a local path" in r.output


def test_sft_dataset_mixes_text_only_and_image_records(tmp_path):
    from groundrl.train.sft import sft_dataset

    Image.new("RGB", (8, 8), (200, 9, 9)).save(tmp_path / "f.png")
    rows = [
        {"prompt": "Look.", "target": "red", "images": ["f.png"]},
        {"prompt": "No picture.", "target": "ok"},
    ]
    ds = sft_dataset(rows, base=tmp_path)
    # every row has an images list (empty for the text-only one) and a placeholder per image
    assert [len(x) for x in ds["images"]] == [1, 0]
    assert [[c["type"] for c in p[0]["content"]] for p in ds["prompt"]] == [["image", "text"], ["text"]]
    assert "images" not in sft_dataset([rows[1]]).column_names  # all text: a plain text dataset


@pytest.mark.slow
def test_mixed_batch_collates_and_trains(tiny_vlm_dir, tmp_path):
    """Issue 17 item 5: one batch holding an image record and a text-only record."""
    Image.new("RGB", (40, 40), (9, 200, 9)).save(tmp_path / "f.png")
    rows = [
        {"prompt": "Judge this frame.", "target": "<score>8</score>", "images": ["f.png"]},
        {"prompt": "Plan without a picture.", "target": "find a Apple"},
    ]
    trainer = build_sft_trainer(str(tiny_vlm_dir), rows * 2, str(tmp_path / "out"), base=tmp_path)
    batch = trainer.data_collator([trainer.train_dataset[0], trainer.train_dataset[1]])
    assert batch["input_ids"].shape[0] == 2
    assert batch["image_grid_thw"].shape[0] == 1  # one image in the batch of two
    trainer.train()
    assert any("loss" in h for h in trainer.state.log_history)


@pytest.mark.slow
def test_sft_cli_mixed_file_limit_and_bad_line(tmp_path):
    import json

    from typer.testing import CliRunner

    from groundrl.cli.main import app

    Image.new("RGB", (40, 40), (9, 9, 200)).save(tmp_path / "f.png")
    data = tmp_path / "d.jsonl"
    rows = [
        {"prompt": "Plan.", "target": "find a Apple", "images": ["f.png"]},
        {"prompt": "Say ok.", "target": "ok"},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows * 3))
    out = tmp_path / "new" / "run"
    r = CliRunner().invoke(app, ["sft", str(data), "-o", str(out), "--max-steps", "2", "--limit", "4"])
    assert r.exit_code == 0, r.output
    assert "4 records, 2 logged steps" in r.output and (out / "final").is_dir()
    data.write_text(json.dumps(rows[0]) + "\nnot json\n")
    r = CliRunner().invoke(app, ["sft", str(data), "-o", str(tmp_path / "o2")], env={"COLUMNS": "250"})
    assert r.exit_code == 2 and "d.jsonl:2: not JSON" in r.output
    assert not (tmp_path / "o2").exists()  # checked before any model is built
