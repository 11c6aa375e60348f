"""Run in .venv-cluster: `groundrl score --ray` on a small file; print its output rows."""

import json
import subprocess
import sys
import tempfile
from pathlib import Path

rows = [
    {
        "id": i,
        "completion": "<critique>c</critique><score>7</score>" if i % 2 == 0 else "<score>2</score>",
        "gt_score": 7,
    }
    for i in range(int(sys.argv[1]))
]
rows.insert(3, "not json")
with tempfile.TemporaryDirectory() as tmp:
    data, out = Path(tmp, "in.jsonl"), Path(tmp, "out.jsonl")
    data.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    cmd = [sys.executable, "-m", "groundrl", "score", "eqa_rm", str(data), "-o", str(out), "-q", "--ray"]
    r = subprocess.run(
        cmd, capture_output=True, text=True, env={"RAY_USAGE_STATS_ENABLED": "0", **__import__("os").environ}
    )
    got = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
print(json.dumps({"rc": r.returncode, "stderr": r.stderr[-2000:], "rows": got}))
