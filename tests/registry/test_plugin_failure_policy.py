"""Entry points are loaded one way, with one failure policy, for every kind (issue 40
item 4): an installed package (a real dist-info on sys.path, read by importlib.metadata
as after ``pip install``) adds a recipe, a vocabulary, a task type (a group that did not
exist before) and a judge backend; its broken entry points — a missing module, a recipe
under another name, an object of the wrong type — are each a warning naming the plugin
and are skipped, while the built-ins and the good plugins work. Before, a broken recipe
plugin was listed by ``recipe_names()`` and raised when used."""

from __future__ import annotations

import logging
import textwrap

import pytest

from groundrl.judges.registry import get_judge_backend, judge_backend_names, unregister_judge_backend
from groundrl.recipes import UnknownRecipeError, builtin_recipe_names, get_recipe, recipe_names, unregister
from groundrl.sim.task_types import BUILTIN_NAMES, get_task_type, task_type_names, unregister_task_type
from groundrl.sim.vocab_registry import VOCABS, get_vocab, unregister_vocabulary, vocab_names

PLUGIN = """
from dataclasses import replace

from groundrl.recipes.base import Recipe
from groundrl.rubric import Part, Rubric
from groundrl.sim.task_types import BUILTIN
from groundrl.sim.vocabularies import Reinforced


def _recipe(name):
    return Recipe(name=name, paper="p", summary="s", build=lambda: Rubric([Part("x", lambda c: 1.0)]))


RECIPE = _recipe("t_pol_recipe")
MISNAMED = _recipe("t_pol_other")
VOCAB = Reinforced()
VOCAB.name = "t_pol_vocab"
TASK = replace(BUILTIN[0], name="t_pol_task")
NOT_A_TASK = 3


def judge(config):
    return config
"""

ENTRY_POINTS = """\
[groundrl.recipes]
t_pol_recipe = t_pol_plugin:RECIPE
t_pol_misnamed = t_pol_plugin:MISNAMED
t_pol_broken = t_pol_missing_module:RECIPE

[groundrl.vocabularies]
t_pol_vocab = t_pol_plugin:VOCAB
t_pol_broken_vocab = t_pol_missing_module:VOCAB

[groundrl.task_types]
t_pol_task = t_pol_plugin:TASK
t_pol_not_a_task = t_pol_plugin:NOT_A_TASK

[groundrl.judges]
t-pol-judge = t_pol_plugin:judge
t-pol-broken-judge = t_pol_missing_module:judge
"""


@pytest.fixture
def installed(tmp_path, monkeypatch):
    (tmp_path / "t_pol_plugin.py").write_text(PLUGIN)
    info = tmp_path / "t_pol_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: t-pol-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    unregister("t_pol_recipe")
    unregister_vocabulary("t_pol_vocab")
    unregister_task_type("t_pol_task")
    unregister_judge_backend("t-pol-judge")


def test_good_plugins_load_and_broken_ones_warn_for_every_kind(installed, caplog):
    with caplog.at_level(logging.WARNING, logger="groundrl"):
        assert recipe_names() == [*builtin_recipe_names(), "t_pol_recipe"]
        assert vocab_names() == (*VOCABS, "t_pol_vocab")
        assert task_type_names() == (*BUILTIN_NAMES, "t_pol_task")
        assert judge_backend_names() == ("openai", "transformers", "t-pol-judge")
    warned = sorted(r.getMessage() for r in caplog.records)
    assert [w.split(" failed to load: ")[0] for w in warned] == [
        "judge backend plugin t-pol-broken-judge",
        "recipe plugin t_pol_broken",
        "recipe plugin t_pol_misnamed",
        "task type plugin t_pol_not_a_task",
        "vocabulary plugin t_pol_broken_vocab",
    ]
    assert "No module named 't_pol_missing_module'" in warned[1]
    assert warned[2].endswith("it gives a recipe named 't_pol_other'; the names must match")
    assert warned[3].endswith("it gave int, expected a groundrl TaskType")
    assert get_recipe("t_pol_recipe").name == "t_pol_recipe"
    assert get_vocab("t_pol_vocab").name == "t_pol_vocab"
    assert get_task_type("t_pol_task").n_conditions == get_task_type(BUILTIN_NAMES[0]).n_conditions
    assert get_judge_backend("t-pol-judge")("cfg") == "cfg"
    with pytest.raises(UnknownRecipeError, match="unknown recipe 't_pol_broken'"):
        get_recipe("t_pol_broken")  # skipped: an unknown name, never the plugin's import error
    assert get_recipe("eqa_rm").name == "eqa_rm"
