import hashlib

import pytest

pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from groundrl.models.tiny_vlm import build_tiny_vlm, load_tiny_vlm  # noqa: E402


def digest(path):
    return hashlib.sha256((path / "model.safetensors").read_bytes()).hexdigest()


def test_round_trip_processor_and_generate(tiny_vlm_dir):
    model, processor = load_tiny_vlm(tiny_vlm_dir)
    assert type(processor).__name__ == "TinyQwen2_5_VLImageProcessor"
    msgs = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "what is here"}]}]
    text = processor.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
    assert "<|vision_start|><|image_pad|><|vision_end|>" in text
    enc = processor(text=[text], images=[Image.new("RGB", (90, 90), (10, 200, 30))], return_tensors="pt")
    assert {"pixel_values", "image_grid_thw"} <= set(enc)
    # a square image resized to 56×56 pixels, patch 14 → 4×4 patches, merge 2 → 4 image tokens
    assert enc["image_grid_thw"].tolist() == [[1, 4, 4]]
    assert int((enc["input_ids"] == processor.tokenizer.convert_tokens_to_ids("<|image_pad|>")).sum()) == 4
    out = model.generate(**enc, max_new_tokens=3, do_sample=False)
    assert out.shape[1] == enc["input_ids"].shape[1] + 3


def test_deterministic_under_seed(tiny_vlm_dir, tmp_path):
    again = build_tiny_vlm(tmp_path / "again", seed=0)
    assert digest(again) == digest(tiny_vlm_dir)


def test_processor_files_are_deterministic_too(tiny_vlm_dir, tmp_path):
    again = build_tiny_vlm(tmp_path / "again", seed=0)
    for name in ("tokenizer.json", "config.json"):
        assert (again / name).read_bytes() == (tiny_vlm_dir / name).read_bytes()


def test_another_seed_gives_other_weights(tiny_vlm_dir, tmp_path):
    assert digest(build_tiny_vlm(tmp_path / "other", seed=1)) != digest(tiny_vlm_dir)


def test_extra_corpus_enters_the_vocabulary():
    from groundrl.models.tiny_vlm import build_tokenizer

    word = "zqxjvkwy"  # letters the generated corpus never puts together
    plain = build_tokenizer(seed=0)
    task = build_tokenizer(seed=0, extra_corpus=[f"{word} {word} {word}"] * 200)
    assert len(plain(word, add_special_tokens=False)["input_ids"]) > 1
    assert len(task(word, add_special_tokens=False)["input_ids"]) == 1
    for t in ("<|im_start|>", "<|vision_start|>", "<|image_pad|>", "<|vision_end|>", "<|endoftext|>"):
        assert len(task(t, add_special_tokens=False)["input_ids"]) == 1
