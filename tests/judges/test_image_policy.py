"""Issue 16 FS2: judge image inputs follow an ImagePolicy decided before anything is
read: local paths only where allowed (under a root when set), URLs only when enabled;
a refused image fails its own request only, counted once."""

import base64
import io

import pytest
from PIL import Image

from groundrl.judges.images import ImagePolicy, to_data_url, to_pil


def _png(tmp_path, name="a.png"):
    p = tmp_path / name
    Image.new("RGB", (4, 4), (255, 0, 0)).save(p)
    return p


def _b64(color=(0, 255, 0)):
    buf = io.BytesIO()
    Image.new("RGB", (4, 4), color).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_defaults_read_local_files_but_refuse_urls(tmp_path):
    p = _png(tmp_path)
    assert to_pil(str(p)).getpixel((0, 0)) == (255, 0, 0)
    with pytest.raises(ValueError, match="remote image URLs are off"):
        to_data_url("http://169.254.169.254/latest/meta-data")
    assert to_data_url("http://x/y.png", ImagePolicy(allow_urls=True)) == "http://x/y.png"


def test_root_confines_paths(tmp_path):
    (tmp_path / "frames").mkdir()
    inside = _png(tmp_path / "frames")
    outside = _png(tmp_path, "secret.png")
    policy = ImagePolicy(root=str(tmp_path / "frames"))
    assert to_pil(str(inside), policy).size == (4, 4)
    for path in (str(outside), str(tmp_path / "frames" / ".." / "secret.png")):
        with pytest.raises(ValueError, match="outside the allowed image root"):
            to_pil(path, policy)


def test_no_local_paths_but_inline_images(tmp_path):
    policy = ImagePolicy(allow_local=False)
    with pytest.raises(ValueError, match="local image paths are not read"):
        to_pil(str(_png(tmp_path)), policy)
    assert to_pil(_b64(), policy).getpixel((0, 0)) == (0, 255, 0)
    assert to_pil("data:image/png;base64," + _b64(), policy).getpixel((0, 0)) == (0, 255, 0)


def test_server_judge_refuses_sample_paths_per_sample(tmp_path, chat_server):
    from fastapi.testclient import TestClient

    from groundrl.serve.factory import build_app

    chat_server.responder = lambda msgs, body: "<answer>1</answer>"
    judge = {"backend": "openai", "model": "m", "url": chat_server.base_url, "retries": 0}
    base = {
        "completion": "<rubric>r</rubric><eval>e</eval><answer>1</answer>",
        "preferred": 1,
        "query": "q",
        "response_1": "a",
        "response_2": "b",
    }
    samples = [
        {**base, "image": str(_png(tmp_path))},
        {**base, "image": "data:image/png;base64," + _b64()},
        {**base, "image": "http://169.254.169.254/x"},
    ]
    with TestClient(build_app({"recipe": "proxy_grm", "judge": judge})) as c:
        rows = c.post("/score", json={"samples": samples}).json()["results"]
    proxy = [(r["parts"]["proxy"], r["reasons"].get("proxy", "")) for r in rows]
    # a refused image is not the policy's doing: the proxy part is unscored (None, issue 37),
    # never a silent 0, and the reason names the refusal
    assert proxy[0][0] is None and "local image paths are not read" in proxy[0][1]
    assert proxy[1] == (1.0, "proxy picked 1")
    assert proxy[2][0] is None and "URLs are off" in proxy[2][1]
    assert len(chat_server.requests) == 1  # only the inline image reached the judge
