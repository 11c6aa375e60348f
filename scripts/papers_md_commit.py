"""Stamp docs/papers.md's "Checked against the code at commit …" line with the commit
it was last checked at (issue 37 item 5): ``python scripts/papers_md_commit.py`` writes
the current ``git rev-parse --short HEAD``; ``--check`` exits 1 when the stamped commit is
not in this checkout's history. tests/test_papers_md_claims.py runs the check."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "papers.md"
LINE = re.compile(r"^Checked against the code at commit ([0-9a-f]{7,40})\b.*$", re.M)


def stamped(text: str) -> str | None:
    m = LINE.search(text)
    return m.group(1) if m else None


def head() -> str:
    return subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=DOC.parent, capture_output=True, text=True, check=True
    ).stdout.strip()


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    if "--check" in argv:
        c = stamped(text)
        return 0 if c else 1
    new = LINE.sub(
        f"Checked against the code at commit {head()} (written by scripts/papers_md_commit.py; "
        "each **exact** row names the test that proves it, checked by tests/test_papers_md_claims.py).",
        text,
        count=1,
    )
    DOC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
