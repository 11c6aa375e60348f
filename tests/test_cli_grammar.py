"""Issue 29 item 4: one flag grammar. Every help page at 80 columns shows every flag name
whole and no markup; group listings agree; -o comes with --output; the commands that draw
take --seed; arguments are named in capitals."""

from __future__ import annotations

import re

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from groundrl.cli.main import app

runner = CliRunner()
ROOT = get_command(app)


def _walk(cmd, path=()):
    yield path, cmd
    for name, sub in getattr(cmd, "commands", {}).items():
        yield from _walk(sub, (*path, name))


COMMANDS = list(_walk(ROOT))
LEAVES = [(p, c) for p, c in COMMANDS if not hasattr(c, "commands")]


def _is_arg(param) -> bool:
    return type(param).__name__.endswith("Argument")


def _help(path) -> str:
    r = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"}, terminal_width=80)
    assert r.exit_code == 0, (path, r.output)
    return r.output


LOWER_CASE_LEFT: set[str] = set()  # every argument name is upper case now


@pytest.mark.parametrize("path, cmd", COMMANDS, ids=[" ".join(p) or "groundrl" for p, _ in COMMANDS])
def test_help_at_80_columns_shows_every_flag_whole_and_no_markup(path, cmd):
    text = _help(path)
    assert max(map(len, text.splitlines())) <= 80
    words = set(re.findall(r"--?[\w-]+", text))
    for param in cmd.params:
        if not _is_arg(param):
            for flag in (*param.opts, *param.secondary_opts):
                assert flag in words, f"{' '.join(path)}: {flag} not shown whole"
    assert "\\[" not in text and "[/" not in text and "[bold" not in text
    usage = text.splitlines()[0]
    if " ".join(path) in LOWER_CASE_LEFT:
        return
    assert not re.search(r"\{[a-z_]+\}", usage), f"lower-case argument name in {usage!r}"


def test_group_listings_agree_with_the_groups():
    root = _help(())
    for name, group in ROOT.commands.items():
        assert re.search(rf"^  {re.escape(name)}\s", root, re.M), name
        subs = getattr(group, "commands", None)
        if not subs:
            continue
        listing = _help((name,)).split("Commands:", 1)[1]
        assert {
            line.split()[0]
            for line in listing.splitlines()
            if line.startswith("  ") and not line.startswith("   ")
        } == set(subs)
        # the group's line in `groundrl --help` names none of its commands, or all of them
        short = group.get_short_help_str(200)
        named = {s for s in subs if re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", short)}
        assert named in (set(), set(subs)), (name, short)


def test_output_is_dash_o_or_double_dash_output_everywhere():
    for path, cmd in LEAVES:
        for param in cmd.params:
            if not _is_arg(param) and ("-o" in param.opts or "--output" in param.opts):
                assert {"-o", "--output"} <= set(param.opts), path


DRAWING = [
    "demo", "demo rm", "train", "sft", "sim tasks", "sim eval", "sim compare", "curate consensus",
    "curate mask-difficulty", "curate rr-sft", "curate proxy-distill", "curate proxy-cold-start",
    "bench score-rm", "bench pairwise-rm", "bench judge-reliability", "bench build-eqa",
]  # fmt: skip


def test_commands_that_draw_take_a_seed():
    # COMMANDS, not LEAVES: `groundrl demo` is a group that runs the planner demo itself
    have = {" ".join(p) for p, c in COMMANDS if any("--seed" in getattr(x, "opts", ()) for x in c.params)}
    assert set(DRAWING) <= have, sorted(set(DRAWING) - have)
