"""Peak memory of `groundrl score` and `groundrl curate` against input size (issue 26
item 6): each command runs in a fresh process on generated JSONL of 5 MB and 50 MB, and
its peak RSS is printed with the ratio (≈ 1 when memory does not grow with the input).

Run: ``.venv/bin/python bench/stream_memory.py [--sizes 5 50]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

PEAK = textwrap.dedent(
    """
    import sys
    from groundrl.cli.main import main
    sys.argv = ["groundrl", *sys.argv[1:]]
    try:
        main()
    except SystemExit:
        pass
    # VmHWM: this process's own peak (ru_maxrss can carry the parent's from before exec)
    hwm = [x for x in open("/proc/self/status") if x.startswith("VmHWM")][0].split()[1]
    print("PEAK_KB", hwm, file=sys.stderr)
    """
)


def rejective(path: Path, size: int) -> None:
    row = {"gt_score": 7, "evaluations": [{"critique": "c" * 400, "score": s} for s in (6, 1, 7)]}
    n = size // (len(json.dumps(row)) + 12)
    path.write_text("".join(json.dumps({"id": i, **row}) + "\n" for i in range(n)))


def score(path: Path, size: int) -> None:
    row = {"completion": "<critique>" + "c" * 900 + "</critique><score>6</score>", "gt_score": 7}
    path.write_text("".join(json.dumps({"id": i, **row}) + "\n" for i in range(size // 950)))


def decompose(path: Path, size: int) -> None:
    row = {"instruction": "go " * 50, "actions": [f"pick up the object number {k}" for k in range(20)]}
    n = size // (len(json.dumps(row)) + 12)
    path.write_text("".join(json.dumps({"id": i, **row}) + "\n" for i in range(n)))


CASES = {
    "curate rejective": (rejective, ["curate", "rejective", "{inp}", "-o", "{out}", "--quiet"]),
    "curate decompose": (decompose, ["curate", "decompose", "{inp}", "-o", "{out}", "--quiet"]),
    "score eqa_rm (1 worker)": (score, ["score", "eqa_rm", "{inp}", "-o", "{out}", "-q"]),
}


def peak_mb(args: list[str]) -> float:
    p = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True)
    kb = [int(x.split()[1]) for x in p.stderr.splitlines() if x.startswith("PEAK_KB")]
    if not kb:
        raise RuntimeError(p.stderr[-2000:])
    return kb[0] / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=float, nargs=2, default=(5, 50), help="input sizes in MB")
    args = ap.parse_args(argv)
    print(f"{'command':<28} {'in MB':>6} {'peak MB':>8} {'in MB':>6} {'peak MB':>8} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (make, cmd) in CASES.items():
            row = []
            for mb in args.sizes:
                inp, out = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
                out.unlink(missing_ok=True)
                make(inp, int(mb * 1e6))
                real = inp.stat().st_size / 1e6
                row += [real, peak_mb([a.format(inp=inp, out=out) for a in cmd])]
            print(
                f"{name:<28} {row[0]:6.1f} {row[1]:8.0f} {row[2]:6.1f} {row[3]:8.0f} {row[3] / row[1]:6.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
