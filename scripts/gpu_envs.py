"""The three GPU environments, one per trainer path, as pinned constraint files (issue 35 item 1).

    python scripts/gpu_envs.py lock  [trl|verl|openrlhf ...]   # resolve and write envs/gpu-NAME.txt
    python scripts/gpu_envs.py check [trl|verl|openrlhf ...]   # do they still resolve? (exit 1 if not)
    python scripts/gpu_envs.py install NAME                    # into this interpreter (a GPU machine)

Each environment is groundrl's extras plus one trainer at the version groundrl supports,
resolved by pip against the trainer's *own* declared dependencies (``pip install
--dry-run --report``: package metadata only, nothing is built or downloaded beyond it):

* ``trl``      — ``groundrl[train,serve,sim]`` + ``trl[vllm]`` ≥ 1.16 + torch 2.13.0
  (the torch of the CPU machines; TRL 1.16's ``[vllm]`` extra admits vLLM 0.22–0.31);
* ``verl``     — ``groundrl[serve,sim]`` + ``verl[vllm]==0.9.1`` (verl pins its vLLM, torch
  and transformers);
* ``openrlhf`` — ``groundrl[serve,sim]`` + ``openrlhf[vllm]==0.11.2`` (it pins transformers,
  Ray, DeepSpeed, flash-attn and vLLM). flash-attn's and DeepSpeed's ``setup.py`` import
  torch to report their metadata, so this one resolves without build isolation beside the
  running interpreter's torch: run the script with ``.venv/bin/python`` (CUDA builds are
  skipped: ``FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE``, ``DS_BUILD_OPS=0``).

A lock file pins every resolved distribution (``name==version``; a local ``+cpu`` tag is
dropped, so on a CUDA machine PyPI's CUDA build of that version installs). Install one on
the GPU machine, from the repository root (docs/training.md, "GPU environments")::

    python -m venv .venv-gpu && .venv-gpu/bin/pip install -c envs/gpu-verl.txt -e '.[serve,sim]' 'verl[vllm]'

``check`` resolves the same requirements under the lock file: a trainer release or a
groundrl extra that no longer fits shows up as a resolution failure, which CI reports.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENVS: dict[str, dict[str, list[str] | dict[str, str]]] = {
    "trl": {"requirements": [".[train,serve,sim]", "trl[vllm]>=1.16", "torch==2.13.0"], "env": {}},
    "verl": {"requirements": [".[serve,sim]", "verl[vllm]==0.9.1"], "env": {}},
    "openrlhf": {
        "requirements": [".[serve,sim]", "openrlhf[vllm]==0.11.2"],
        # flash-attn's and DeepSpeed's setup.py import torch: build metadata beside this
        # interpreter's torch (run the script with .venv/bin/python), CUDA build skipped
        "env": {"FLASH_ATTENTION_SKIP_CUDA_BUILD": "TRUE", "DS_BUILD_OPS": "0"},
        "pip": ["--no-build-isolation"],
    },
}


def lock_path(name: str) -> Path:
    return ROOT / "envs" / f"gpu-{name}.txt"


def _resolve(name: str, constraints: Path | None) -> tuple[int, dict[str, str], str]:
    """pip's dry-run resolution: (exit code, {name: version} without groundrl, pip's output)."""
    spec = ENVS[name]
    reqs = [str(ROOT) + r[1:] if r.startswith(".[") else r for r in spec["requirements"]]  # type: ignore[union-attr]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet"]
        cmd += [*spec.get("pip", []), "--report", str(report), *reqs]  # type: ignore[misc]
        if constraints is not None:
            cmd += ["-c", str(constraints)]
        env = {**os.environ, **spec["env"]}  # type: ignore[dict-item]
        res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        pins: dict[str, str] = {}
        if res.returncode == 0 and report.is_file():
            for item in json.loads(report.read_text())["install"]:
                meta = item["metadata"]
                name = re.sub(r"[-_.]+", "-", meta["name"]).lower()  # PEP 503: flash_attn = flash-attn
                if name != "groundrl":
                    pins[name] = re.sub(r"\+.*$", "", meta["version"])
    noise = "\n".join(
        ln for ln in (res.stdout + res.stderr).splitlines() if not ln.startswith("WARNING: Location")
    )
    return res.returncode, pins, noise


def lock(name: str) -> int:
    rc, pins, out = _resolve(name, None)
    if rc:
        print(f"{name}: pip could not resolve it:\n{out}", file=sys.stderr)
        return 1
    head = [
        f"# GPU environment '{name}' (scripts/gpu_envs.py lock {name}): every distribution pip resolved for",
        f"#   {' '.join(ENVS[name]['requirements'])}",  # type: ignore[arg-type]
        "# against the trainer's own declared dependencies (linux x86_64, Python 3.11).",
        f"# Install: pip install -c envs/gpu-{name}.txt -e '{ENVS[name]['requirements'][0]}' "  # type: ignore[index]
        + " ".join(f"'{r}'" for r in ENVS[name]["requirements"][1:]),  # type: ignore[index]
    ]
    body = [f"{k}=={v}" for k, v in sorted(pins.items())]
    lock_path(name).parent.mkdir(exist_ok=True)
    lock_path(name).write_text("\n".join(head + body) + "\n")
    key = {k: pins.get(k) for k in ("torch", "transformers", "vllm", "trl", "verl", "openrlhf", "ray")}
    print(f"{name}: {len(pins)} pins -> {lock_path(name)}  {key}")
    return 0


def check(name: str) -> int:
    path = lock_path(name)
    if not path.is_file():
        print(f"{name}: {path} missing (run: python scripts/gpu_envs.py lock {name})", file=sys.stderr)
        return 1
    rc, pins, out = _resolve(name, path)
    if rc:
        print(f"{name}: no longer resolves under {path}:\n{out}", file=sys.stderr)
        return 1
    print(f"{name}: resolves under {path} ({len(pins)} distributions)")
    return 0


def install(name: str) -> int:
    """Install environment ``name`` into this interpreter under its lock file: torch first
    (flash-attn and DeepSpeed build against it), then groundrl and the trainer."""
    spec, path = ENVS[name], lock_path(name)
    torch = next((ln for ln in path.read_text().splitlines() if ln.startswith("torch==")), "torch")
    pip = [sys.executable, "-m", "pip", "install", "-c", str(path)]
    reqs = [str(ROOT) + r[1:] if r.startswith(".[") else r for r in spec["requirements"]]  # type: ignore[union-attr]
    env = {**os.environ, **spec["env"]}  # type: ignore[dict-item]
    env.pop("FLASH_ATTENTION_SKIP_CUDA_BUILD", None)  # a real install builds the CUDA kernels
    env.pop("DS_BUILD_OPS", None)
    for cmd in ([*pip, torch], [*pip, *spec.get("pip", []), "-e", *reqs]):  # type: ignore[misc]
        if subprocess.run(cmd, env=env).returncode:
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["lock", "check", "install"])
    ap.add_argument("names", nargs="*", help=f"environments (default: all of {', '.join(ENVS)})")
    a = ap.parse_args(argv)
    names = a.names or list(ENVS)
    unknown = [n for n in names if n not in ENVS]
    if unknown:
        ap.error(f"unknown environment(s) {unknown}; choose from {list(ENVS)}")
    fn = {"lock": lock, "check": check, "install": install}[a.action]
    return max(fn(n) for n in names)


if __name__ == "__main__":
    sys.exit(main())
