"""One plugin pattern (issue 23 item 3): an installed package adds a stage kind and an action
vocabulary through entry points (`groundrl.stages`, `groundrl.vocabularies`) and the CLI runs
them. The package is real: a dist-info folder with entry_points.txt on PYTHONPATH, read by
importlib.metadata in a fresh `python -m groundrl` process, exactly as after `pip install`."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]

STAGES = """
from pathlib import Path

from groundrl.train.stage_kinds import StageKind


def parse_echo(raw):
    raw = dict(raw or {})
    if set(raw) - {"times"}:
        raise ValueError(f"echo: unknown key(s) {sorted(set(raw) - {'times'})}; allowed: times")
    return {"times": int(raw.get("times", 1))}


def run(recipe, st, out, prev_data, **_):
    out.mkdir(parents=True, exist_ok=True)
    lines = Path(st.data).read_text().splitlines() * parse_echo(st.blocks.get("echo"))["times"]
    (out / "echo.jsonl").write_text("\\n".join(lines) + "\\n")
    return {"data": str(out / "echo.jsonl"), "notes": {"echoed": len(lines), "recipe": recipe}}


ECHO = StageKind("echo", "gr_plugin.stages:run", blocks={"echo": "gr_plugin.stages:parse_echo"})
"""

VOCAB = '''
from groundrl.sim.vocab import Intent, Vocabulary


class Bang(Vocabulary):
    """Every skill as "!verb name" (put as "!put")."""

    name = "bang"
    detect_order = 5

    def detect(self, step):
        return isinstance(step, str) and step.startswith("!")

    def parse(self, step):
        parts = str(step).lstrip("!").split(None, 1)
        if not parts:
            return Intent(str(step), None, error="empty bang step")
        return Intent(step, parts[0], parts[1] if len(parts) > 1 else None)

    def render(self, skill, env, name, action_ids):
        return "!put" if skill.verb == "put" else f"!{skill.verb} {name}"


VOCAB = Bang()
'''


def _install(site: Path) -> None:
    pkg = site / "gr_plugin"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "stages.py").write_text(STAGES)
    (pkg / "vocab.py").write_text(VOCAB)
    info = site / "gr_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gr-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [groundrl.stages]
            echo = gr_plugin.stages:ECHO

            [groundrl.vocabularies]
            bang = gr_plugin.vocab:VOCAB
            """
        )
    )


def _groundrl(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"}
    return subprocess.run(
        [sys.executable, "-m", "groundrl", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_plugin_package_adds_a_stage_kind_and_a_vocabulary(tmp_path):
    site = tmp_path / "site"
    _install(site)
    data = tmp_path / "d.jsonl"
    data.write_text('{"a": 1}\n{"a": 2}\n')
    cfg = {
        "recipe": "eqa_rm",
        "output_dir": str(tmp_path / "run"),
        "stages": [{"name": "twice", "kind": "echo", "data": str(data), "echo": {"times": 2}}],
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    r = _groundrl(site, "train", "--config", str(tmp_path / "c.yaml"), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[twice] echo:" in r.stdout and "'echoed': 4" in r.stdout
    assert (tmp_path / "run" / "twice" / "echo.jsonl").read_text().count("\n") == 4
    assert "- echoed: 4" in (tmp_path / "run" / "report.md").read_text()
    # the plugin's own block is validated at load, before anything runs
    cfg["stages"][0]["echo"] = {"tims": 2}
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(cfg))
    bad = _groundrl(site, "train", "--config", str(tmp_path / "bad.yaml"), cwd=tmp_path)
    assert bad.returncode == 2 and "echo: unknown key(s) ['tims']" in bad.stderr

    tasks = tmp_path / "tasks.jsonl"
    made = _groundrl(site, "sim", "tasks", "-o", str(tasks), "--n", "4", "--seed", "0", cwd=tmp_path)
    assert made.returncode == 0, made.stdout + made.stderr
    ev = _groundrl(
        site,
        "sim",
        "eval",
        str(tasks),
        "--policy",
        "expert",
        "--expert-vocab",
        "bang",
        "-o",
        "ev",
        cwd=tmp_path,
    )
    assert ev.returncode == 0, ev.stdout + ev.stderr
    results = [json.loads(x) for x in (tmp_path / "ev" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 4 and {r["vocab"] for r in results} == {"bang"}
    actions = [h["action"] for r in results for h in r["history"]]
    assert actions and all(a.startswith("!") for a in actions)  # every step went through the plugin's parser
    assert json.loads((tmp_path / "ev" / "metrics.json").read_text())["success_rate"] == 1.0
