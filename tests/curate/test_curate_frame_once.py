"""The resumable curate commands' shared arguments (INPUT, --field, -o, --retry-errors,
--limit, -q, --restart) are declared once, as the fields of cli.curate._Frame (issue 40
item 2), and every such command shows each with that one help text."""

import dataclasses
import re
from pathlib import Path

import typer

from groundrl.cli import curate

SOURCE = Path(curate.__file__).read_text(encoding="utf-8")


def _commands() -> dict:
    group = typer.main.get_command(curate.app)
    return group.commands  # type: ignore[attr-defined]


def test_every_resumable_command_takes_the_frame_with_its_help():
    frame = {f.name: f.metadata["param"] for f in dataclasses.fields(curate._Frame)}
    assert set(frame) == {"input", "field", "output", "retry_errors", "limit", "quiet", "restart"}
    resumable = {n: c for n, c in _commands().items() if n != "rr-sft"}  # rr-sft: no resume frame
    assert len(resumable) == 10
    for name, cmd in resumable.items():
        params = {p.name: p for p in cmd.params}
        for key, info in frame.items():
            assert key in params, (name, key)
            assert getattr(params[key], "help", None) == info.help, (name, key)


def test_the_shared_arguments_are_not_redeclared_in_a_command():
    # one definition: the option objects are named once, in _Frame's fields (rr-sft,
    # which writes without resuming, reuses OUTPUT alone)
    for const in ("INPUT", "FIELD", "OUTPUT", "RETRY", "LIMIT", "QUIET", "RESTART"):
        uses = re.findall(rf"= {const}\b|_param\({const}\)", SOURCE)
        extra = ["= OUTPUT"] if const == "OUTPUT" else []
        assert uses == [f"_param({const})", *extra], const
