"""A third-party recipe package (``keyword_recipe/``, with its own pyproject.toml and a
``groundrl.recipes`` entry point) really pip-installed into a folder on ``sys.path``, so
the registry finds it through ``importlib.metadata`` exactly as after ``pip install``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE = Path(__file__).parent / "keyword_recipe"


@pytest.fixture(scope="session")
def keyword_site(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("keyword_src") / "keyword_recipe"
    shutil.copytree(SOURCE, src)  # pip builds in the source folder: keep the repo clean
    site = tmp_path_factory.mktemp("keyword_site")
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
    r = subprocess.run([*cmd, "--target", str(site), str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"pip install of the test recipe package failed:\n{r.stderr}")
    assert (site / "keyword_recipe-0.1.0.dist-info" / "entry_points.txt").is_file()
    return site


@pytest.fixture
def keyword_installed(keyword_site, monkeypatch):
    """The package importable and its entry point visible, in this process and in
    subprocesses (PYTHONPATH); forgotten again after the test."""
    from groundrl.recipes import unregister

    monkeypatch.syspath_prepend(str(keyword_site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(keyword_site), os.environ.get("PYTHONPATH", "")]))
    yield keyword_site
    unregister("keyword_match")
    sys.modules.pop("keyword_recipe", None)
