"""Issue 29 item 5: with only the ``train`` extra installed, ``groundrl demo`` names the
extra to install instead of ending in ``ModuleNotFoundError: gymnasium``."""

from __future__ import annotations

import importlib.util

from typer.testing import CliRunner

from groundrl.cli.main import app


def test_demo_without_the_sim_extra_says_which_extra(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "gymnasium" else real(name, *a)
    )
    r = CliRunner().invoke(app, ["demo", "-o", str(tmp_path / "demo")])
    assert r.exit_code == 2, r.output
    said = " ".join(r.output.split())
    assert "needs gymnasium" in said and "pip install 'groundrl[train,sim]'" in said
    assert "Traceback" not in r.output and not (tmp_path / "demo").exists()  # nothing started
