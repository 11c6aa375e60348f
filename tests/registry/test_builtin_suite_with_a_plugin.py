"""The suite's checks of our own recipes stay green with a recipe plugin installed
(issue 39 item 8): docs/recipes.md invites users to install plugins, and the keyword
plugin here has no examples, which the built-in checks need. Before, these modules
iterated ``recipe_names()`` and four of them failed to collect."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# the modules that parametrize over the built-in recipes
BUILTIN_MODULES = [
    "registry/test_check_recipe.py",
    "serve/test_serve_protocols.py",
    "test_fuzz_surfaces.py",
    "test_rewards_total.py",
    "train/test_grpo_recipes.py",
]


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, cwd=TESTS.parent, timeout=600)


def test_builtin_checks_pass_with_a_plugin_installed(keyword_installed, tmp_path):
    seen = subprocess.run(
        [sys.executable, "-c", "from groundrl.recipes import recipe_names; print(recipe_names())"],
        capture_output=True,
        text=True,
    )
    assert "keyword_match" in seen.stdout, seen.stderr  # the child processes see the plugin
    r = _pytest(tmp_path / "collect", "--collect-only", *(str(TESTS / m) for m in BUILTIN_MODULES))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "keyword_match" not in r.stdout
    # and the one that checks every built-in end to end really passes (about 10 s)
    r = _pytest(tmp_path / "run", str(TESTS / "registry/test_check_recipe.py"), "-k", "every_builtin")
    assert r.returncode == 0 and "5 passed" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
