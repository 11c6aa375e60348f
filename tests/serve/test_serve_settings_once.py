"""Every server limit is defined once, as a field of ``Limits`` (issue 40 item 2): the
``groundrl serve`` flags, the configuration keys and ``create_app``'s defaults come from
the fields, and a field added to a settings dataclass becomes a flag with its help."""

import dataclasses
import inspect

import pytest
import typer
from typer.testing import CliRunner

from groundrl.cli.dataclass_options import flag, settings_command
from groundrl.cli.main import app
from groundrl.serve import factory
from groundrl.serve.app import create_app
from groundrl.serve.limits import Limits

runner = CliRunner()


def _serve_params() -> dict:
    group = typer.main.get_command(app)
    return {p.name: p for p in group.commands["serve"].params if p.name}  # type: ignore[attr-defined]


def test_every_limit_with_help_is_a_serve_flag_with_its_default_and_help():
    params = _serve_params()
    shown = [f for f in dataclasses.fields(Limits) if f.metadata.get("help")]
    assert len(shown) >= 9  # every limit the CLI had before the fields generated it
    for f in shown:
        p = params[f.name]
        assert p.help == f.metadata["help"]
        assert p.opts == [f.metadata.get("flag", "--" + f.name.replace("_", "-"))]
        scale = f.metadata.get("scale", 1)
        want = f.metadata.get("cli_default", f.default if f.default is None else f.default / scale)
        assert p.default == want, f.name


def test_limits_are_the_configuration_keys_and_create_app_defaults():
    sig = inspect.signature(create_app).parameters
    for f in dataclasses.fields(Limits):
        assert f.name in factory.APP_KEYS
        assert sig[f.name].default == f.default, f.name


def test_serve_flags_reach_the_configuration_in_the_fields_units(monkeypatch):
    seen = {}

    def fake_build_app(config):
        seen.update(config)
        raise ValueError("stop before binding")

    monkeypatch.setattr(factory, "build_app", fake_build_app)
    args = ["serve", "--max-body-mb", "2", "--min-body-rate-kb", "8", "--max-batch", "3"]
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and "stop before binding" in r.output
    assert seen["max_body_bytes"] == 2 * 1024 * 1024 and seen["min_body_rate"] == 8 * 1024
    assert seen["max_batch"] == 3 and seen["part_timeout_s"] == 600.0  # the CLI's deadline
    runner.invoke(app, ["serve", "--part-timeout", "0"])
    assert seen["part_timeout_s"] is None  # 0: no deadline
    r = runner.invoke(app, ["serve", "--max-samples", "0"])
    assert r.exit_code == 2  # typer's bound from the field's metadata


@dataclasses.dataclass(frozen=True)
class _Knobs:
    depth: int = flag(3, "How deep to dig.", min=1)
    size_mb: float = flag(1.0, "Size in MiB.", flag="--size-kb", scale=1 / 1024)
    deadline: float | None = flag(None, "Seconds; 0: none.", cli_default=5.0, zero_is_none=True)
    loud: bool = flag(False, "Shout.")
    internal: int = 7  # no help: set from Python only

    def __post_init__(self) -> None:
        if self.depth > 100:
            raise ValueError("depth must be ≤ 100")


def _toy_app() -> typer.Typer:
    toy = typer.Typer()

    @toy.command()
    @settings_command(_Knobs, "knobs")
    def dig(name: str = typer.Argument(...), knobs: _Knobs = None) -> None:  # type: ignore[assignment]
        typer.echo(f"{name} {knobs}")

    return toy


def test_a_new_field_is_a_new_flag_with_its_help_and_default():
    toy = _toy_app()
    r = runner.invoke(toy, ["--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    for text in ("--depth", "How deep to dig.", "--size-kb", "--deadline", "--loud", "--no-loud"):
        assert text in r.output
    assert "--internal" not in r.output
    r = runner.invoke(toy, ["hole", "--depth", "4", "--size-kb", "512", "--deadline", "0", "--loud"])
    assert r.exit_code == 0, r.output
    assert "hole _Knobs(depth=4, size_mb=0.5, deadline=None, loud=True, internal=7)" in r.output
    r = runner.invoke(toy, ["hole"])
    assert "depth=3, size_mb=1.0, deadline=5.0, loud=False" in r.output
    assert runner.invoke(toy, ["hole", "--depth", "0"]).exit_code == 2  # min from the metadata
    r = runner.invoke(toy, ["hole", "--depth", "101"])  # the dataclass's own check
    assert r.exit_code == 2 and "depth must be ≤ 100" in r.output


def test_a_field_clashing_with_a_parameter_is_refused():
    with pytest.raises(TypeError, match="depth"):

        @settings_command(_Knobs, "knobs")
        def bad(depth: int = 1, knobs: _Knobs = None) -> None:  # type: ignore[assignment]
            pass
