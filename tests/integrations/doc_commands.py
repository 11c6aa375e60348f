"""The OpenRLHF and verl commands written in README.md and docs/*.md, for the tests that
run them through the real parsers (test_real_cluster_packages_doc_commands.py)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)
_SHELL = ("bash", "sh", "console", "")
_SPAN = re.compile(r"`([^`\n]+)`")
_FLAG = re.compile(r"--[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+)*")


def _commands(text: str) -> list[str]:
    """Shell commands of the fenced blocks: continuation lines joined, a quoted argument
    that spans lines kept whole, comment lines dropped."""
    out = []
    for lang, block in _BLOCK.findall(text):
        if lang not in _SHELL:
            continue
        pending = ""
        for line in re.sub(r"\\\n\s*", " ", block).splitlines():
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            pending = f"{pending}\n{line}" if pending else line
            try:
                shlex.split(pending, comments=True)
            except ValueError:  # an open quote: the command goes on
                continue
            out.append(pending.strip())
            pending = ""
    return out


def _words(cmd: str) -> list[str]:
    return shlex.split(cmd, comments=True)


def _no_substitutions(cmd: str) -> str:
    """Each ``$(…)`` (nested parentheses allowed) replaced by a file path."""
    while "$(" in cmd:
        i = cmd.index("$(")
        depth, j = 0, i + 1
        for j in range(i + 1, len(cmd)):
            depth += {"(": 1, ")": -1}.get(cmd[j], 0)
            if depth == 0:
                break
        cmd = cmd[:i] + "/path/to/file.py" + cmd[j + 1 :]
    return cmd


def openrlhf_commands() -> dict[str, list[str]]:
    """``{where: argv}`` of every ``… -m openrlhf.cli.train_ppo_ray ARGS`` command;
    ``$(…)`` substitutions become a file path and ``$VAR`` a word."""
    found = {}
    for path in DOCS:
        for i, cmd in enumerate(_commands(path.read_text(encoding="utf-8"))):
            if "openrlhf.cli.train_ppo_ray" not in cmd:
                continue
            cmd = _no_substitutions(cmd)
            cmd = re.sub(r"\$\{?\w+\}?", "x", cmd)
            words = _words(cmd)
            start = words.index("openrlhf.cli.train_ppo_ray") + 1
            found[f"{path.name}#{i}"] = words[start:]
    return found


def openrlhf_flags() -> dict[str, list[str]]:
    """``{flag: [where, …]}``: every ``--flag`` in inline code that starts with the flag,
    in a paragraph (or table row) that names OpenRLHF, or anywhere in an OpenRLHF doc
    outside its fenced blocks (the fenced commands are parsed whole)."""
    flags: dict[str, list[str]] = {}
    for path in DOCS:
        text = _BLOCK.sub("", path.read_text(encoding="utf-8"))
        whole_doc = "openrlhf" in path.name
        for n, para in enumerate(re.split(r"\n\s*\n", text)):
            if not whole_doc and "OpenRLHF" not in para:
                continue
            for span in _SPAN.findall(para):
                if span.startswith("--") and "*" not in span:
                    for flag in _FLAG.findall(span.split("=")[0]):
                        flags.setdefault(flag, []).append(f"{path.name} paragraph {n}")
    return flags


def example_script_calls(kind: str) -> list[tuple[str, dict[str, str], list[str]]]:
    """``(script, env, args)`` of every command in the docs that runs
    ``examples/<kind>/<script>.sh`` (``VAR=value`` prefixes as its environment)."""
    calls = []
    for path in DOCS:
        for cmd in _commands(path.read_text(encoding="utf-8")):
            words = _words(cmd)
            for k, w in enumerate(words):
                if w.startswith(f"examples/{kind}/") and w.endswith(".sh"):
                    env = dict(x.split("=", 1) for x in words[:k] if "=" in x and not x.startswith("-"))
                    calls.append((w, env, words[k + 1 :]))
    return calls


def verl_override_keys() -> list[str]:
    """The Hydra keys of the override tables (first cell a dotted key in backticks)."""
    keys = []
    for path in DOCS:
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"\|\s*`((?:actor_rollout_ref|data|algorithm|trainer|reward)\.[\w.]+)`\s*\|", line)
            if m:
                keys.append(m.group(1))
    return keys


def groundrl_flags() -> set[str]:
    """Every option of groundrl's own CLI (docs name them beside OpenRLHF's)."""
    import typer

    from groundrl.cli.main import app

    out: set[str] = set()

    def walk(cmd) -> None:
        for p in getattr(cmd, "params", []):
            out.update(
                o for o in getattr(p, "opts", []) + getattr(p, "secondary_opts", []) if o.startswith("--")
            )
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    return out
