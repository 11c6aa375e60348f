"""Issue 42 item 5 (the server half): base64 and data-URL images are accepted within a
byte limit. Every base64 image over ~4 KB was refused as "File name too long" under the
CLI's image policy and under ``--judge-image-root`` (the string was probed as a path),
and an inline image was decoded and re-encoded as PNG on its way to an HTTP judge. Now a
string that cannot name a file is never probed, the text is bounded before it is
decoded, the pixel count is checked on the header, and the judge gets the bytes sent."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

from groundrl.judges.images import MAX_IMAGE_PIXELS, MAX_INLINE_IMAGE_BYTES, ImagePolicy, to_data_url, to_pil


def _noise_png(side=200, fmt="PNG") -> str:
    """Base64 of an image of random pixels (incompressible: ~120 KB as PNG at 200 × 200)."""
    pixels = np.random.default_rng(0).integers(0, 256, (side, side, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(pixels).save(buf, format=fmt)
    return base64.b64encode(buf.getvalue()).decode()


def _policies(tmp_path):
    # the CLI's (local paths anywhere), --judge-image-root's, and the server's default
    return [ImagePolicy(), ImagePolicy(root=str(tmp_path)), ImagePolicy(allow_local=False)]


def test_a_100_kb_inline_image_is_accepted_under_every_policy(tmp_path):
    b64 = _noise_png()
    assert len(b64) > 100_000
    url = "data:image/png;base64," + b64
    for policy in _policies(tmp_path):
        assert policy.classify(b64) == "base64" and policy.classify(url) == "data"
        assert to_pil(b64, policy).size == (200, 200)
        assert to_pil(url, policy).size == (200, 200)
        # passed on as sent: no decode-and-re-encode of the pixels
        assert to_data_url(url, policy) == url
        assert to_data_url(b64, policy) == url


def test_an_inline_image_over_the_limit_is_refused_before_decoding(tmp_path):
    too_big = "A" * (MAX_INLINE_IMAGE_BYTES + 4)
    for policy in _policies(tmp_path):
        for image in (too_big, "data:image/png;base64," + too_big):
            with pytest.raises(ValueError, match=f"over the {MAX_INLINE_IMAGE_BYTES}-byte limit"):
                to_data_url(image, policy)
            with pytest.raises(ValueError, match="-byte limit"):
                policy.check(image)


def test_a_decompression_bomb_is_refused_on_its_header():
    side = 8192  # 67 Mpx in a ~10 KB PNG (1 bit per pixel, one colour)
    assert side * side > MAX_IMAGE_PIXELS
    buf = io.BytesIO()
    Image.new("1", (side, side)).save(buf, format="PNG")
    b64 = base64.b64encode(buf.getvalue()).decode()
    assert len(b64) < 100_000
    for call in (to_pil, to_data_url):
        with pytest.raises(ValueError, match="pixel limit"):
            call(b64)


def test_a_long_name_that_is_not_base64_still_gets_its_own_message(tmp_path):
    name = "x" * 300 + ".png"  # a component over 255 bytes: ENAMETOOLONG, not a crash
    with pytest.raises(ValueError, match="neither a file"):
        ImagePolicy().classify(name)
    with pytest.raises(ValueError, match="outside the allowed image root"):
        ImagePolicy(root=str(tmp_path)).classify("/" + name)


def test_the_server_sends_a_100_kb_inline_image_to_its_judge(tmp_path, chat_server):
    from fastapi.testclient import TestClient

    from groundrl.serve.factory import build_app

    chat_server.responder = lambda msgs, body: "<answer>1</answer>"
    b64 = _noise_png(side=360, fmt="JPEG")  # sent as JPEG, as it came (was: re-encoded as PNG)
    assert len(b64) > 100_000
    judge = {"backend": "openai", "model": "m", "url": chat_server.base_url, "retries": 0}
    sample = {
        "completion": "<rubric>r</rubric><eval>e</eval><answer>1</answer>",
        "preferred": 1,
        "query": "q",
        "response_1": "a",
        "response_2": "b",
        "image": b64,
    }
    for spec in (judge, {**judge, "image_root": str(tmp_path)}):
        chat_server.requests.clear()
        with TestClient(build_app({"recipe": "proxy_grm", "judge": spec})) as c:
            row = c.post("/score", json={"samples": [sample]}).json()["results"][0]
        assert row["parts"]["proxy"] == 1.0, row["reasons"]
        sent = [
            p["image_url"]["url"]
            for m in chat_server.requests[0]["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
            if p.get("type") == "image_url"
        ]
        assert sent == ["data:image/jpeg;base64," + b64]
