"""Every Python example of docs/architecture.md runs as written (issue 23 item 7).

Each block runs in its own interpreter from the repository root, so one example's
registrations (a recipe, a stage kind, a vocabulary) cannot make another pass.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def _examples() -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    out = []
    for m in BLOCK.finditer(text):
        heading = [h for h in re.findall(r"^### (.+)$", text[: m.start()], re.M)][-1]
        out.append((heading.split(":")[0], m.group(1)))
    return out


def test_every_extension_point_has_an_example():
    titles = [t for t, _ in _examples()]
    assert len(titles) == 6 and len(set(titles)) == 6, titles


@pytest.mark.parametrize("title,code", _examples(), ids=[t for t, _ in _examples()])
def test_example_runs(title, code, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TMPDIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"{title}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
