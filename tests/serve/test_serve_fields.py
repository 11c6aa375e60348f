"""`groundrl serve --field OURS=THEIRS` (issue 39 item 5): each /score sample's THEIRS is
read as OURS; a sample without it is that sample's error, naming the field and the flag."""

from __future__ import annotations

import httpx
import pytest

from groundrl.serve.app import create_app
from groundrl.serve.factory import build_app

GOOD = "<critique>c</critique><score>7</score>"  # eqa_rm: accuracy 1 - (0/10)^2 = 1, format 1


def test_score_reads_completion_from_output(tools):
    app = create_app("eqa_rm", fields={"completion": "output", "gt_score": "label"})
    with tools.Running(app) as srv:
        samples = [{"id": "a", "output": GOOD, "label": 7}, {"id": "b", "completion": GOOD, "label": 7}]
        r = httpx.post(srv.url + "/score", json={"samples": samples})
    assert r.status_code == 200, r.text
    a, b = r.json()["results"]
    assert a["id"] == "a" and a["reward"] == 2.0
    assert (
        b["error"] == "sample 2: missing field 'output' (read as 'completion' by --field completion=output)"
    )


def test_the_cli_config_carries_the_mapping_and_bad_ones_are_refused(tools):
    app = build_app({"recipe": "eqa_rm", "fields": {"completion": "output"}})
    with tools.Running(app) as srv:
        r = httpx.post(srv.url + "/score", json={"samples": [{"output": GOOD, "gt_score": 7}]})
    assert r.json()["results"][0]["reward"] == 2.0
    with pytest.raises(ValueError, match="fields must map our field names"):
        create_app("eqa_rm", fields={"completion": ""})


def test_serve_help_shows_the_flag():
    from typer.testing import CliRunner

    from groundrl.cli.main import app

    out = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    assert "--field" in out and "completion=output" in out
