"""`groundrl recipes` at 80 columns (issue 39 item 6): the table fits and splits no word
(its four columns used to fold words such as `<response><plans><actions>`)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.recipes import builtin_recipe_names, get_recipe


def test_the_table_fits_80_columns_with_every_word_whole():
    r = CliRunner().invoke(app, ["recipes"], env={"COLUMNS": "80"}, terminal_width=80)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert max(map(len, lines)) <= 80
    text = "\n".join(lines)
    for name in builtin_recipe_names():
        d = get_recipe(name).describe()
        words = [d["paper"], d["summary"], *d["required"], *d["optional"]]
        for o in d["options"]:
            words += [o["name"], o["type"], o["help"]]
            words += [] if o["default"] is None else [json.dumps(o["default"])]  # None shows as —
        for word in " ".join(words).split():
            assert word in text, f"{name}: {word!r} split or missing"
