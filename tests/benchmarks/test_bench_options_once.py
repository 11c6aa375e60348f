"""Options two benchmarks share are declared once in cli/bench.py (issue 40 item 2):
score-rm and pairwise-rm show the same --max-judge-failures and --scalar-rm-device,
pairwise-rm and judge-reliability the same --format."""

import re
from pathlib import Path

import typer
from typer.testing import CliRunner

from groundrl.cli import bench

SOURCE = Path(bench.__file__).read_text(encoding="utf-8")


def _params(command: str) -> dict:
    group = typer.main.get_command(bench.app)
    return {p.name: p for p in group.commands[command].params}  # type: ignore[attr-defined]


def test_shared_bench_options_are_one_declaration():
    shared = {
        "max_judge_failures": ("score-rm", "pairwise-rm"),
        "scalar_rm_device": ("score-rm", "pairwise-rm"),
        "fmt": ("pairwise-rm", "judge-reliability"),
    }
    for name, commands in shared.items():
        seen = [_params(c)[name] for c in commands]
        assert len({(p.help, p.default, tuple(p.opts)) for p in seen}) == 1, name
        assert seen[0].help  # a --help that explains
    for flag in ("--max-judge-failures", "--scalar-rm-device", '"--format"'):
        assert len(re.findall(re.escape(flag) + r'"?,', SOURCE)) == 1, flag


def test_the_shared_bound_still_applies(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("{}\n", encoding="utf-8")
    r = CliRunner().invoke(
        bench.app, ["pairwise-rm", str(items), "-o", str(tmp_path / "o"), "--max-judge-failures", "2"]
    )
    assert r.exit_code == 2 and "max-judge-failures" in r.output
