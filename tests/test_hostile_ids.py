"""Issue 16 R2/S2: a lone surrogate in an id (legal JSON, not encodable as UTF-8) is
echoed escaped; `groundrl score` writes every line and the server answers 200."""

import json

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from groundrl.cli.main import app
from groundrl.serve.app import create_app

LINES = b'{"id": "\\ud800", "completion": "<score>7</score>", "gt_score": 5}\n{"id": 2, "completion": "x", "gt_score": 5}\n'


def test_score_cli_writes_every_line(tmp_path):
    data = tmp_path / "in.jsonl"
    data.write_bytes(LINES)
    out = tmp_path / "out.jsonl"
    r = CliRunner().invoke(app, ["score", "eqa_rm", str(data), "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in rows] == ["\ud800", 2]
    assert rows[0]["parts"]["accuracy"] == 0.96  # 1 - (2/10)^2


def test_server_echoes_the_id_escaped():
    body = b'{"samples": [' + b", ".join(LINES.strip().split(b"\n")) + b"]}"
    with TestClient(create_app("eqa_rm")) as c:
        r = c.post("/score", content=body, headers={"content-type": "application/json"})
        assert r.status_code == 200 and b"\\ud800" in r.content
        assert [x["id"] for x in r.json()["results"]] == ["\ud800", 2]
        assert c.get("/nowhere").status_code == 404
