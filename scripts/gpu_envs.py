"""The three GPU environments, one per trainer path, as pinned constraint files (issue 35 item 1).

    python scripts/gpu_envs.py lock  [trl|verl|openrlhf ...]   # resolve and write envs/gpu-NAME.txt
    python scripts/gpu_envs.py check [trl|verl|openrlhf ...]   # do they still resolve? (exit 1 if not)
    python scripts/gpu_envs.py install NAME                    # into this interpreter (a GPU machine)

Each environment is groundrl's extras plus one trainer at the version groundrl supports,
resolved by uv for the GPU machines' platform (``uv pip compile --python-platform
x86_64-unknown-linux-gnu --python-version 3.11``: index metadata only, whatever this machine
has installed) against the trainer's *own* declared dependencies:

* ``trl``      — ``groundrl[train,serve,sim]`` + ``trl[vllm]`` ≥ 1.16 + torch 2.13.0
  (the torch of the CPU machines; TRL 1.16's ``[vllm]`` extra admits vLLM 0.22–0.31);
* ``verl``     — ``groundrl[serve,sim]`` + ``verl[vllm]==0.9.1`` (verl pins its vLLM, torch
  and transformers);
* ``openrlhf`` — ``groundrl[serve,sim]`` + ``openrlhf[vllm]==0.11.2`` (it pins transformers,
  Ray, DeepSpeed, flash-attn and vLLM). Installing it builds flash-attn against the torch
  already there, hence ``install``'s torch-first order and ``--no-build-isolation``.

A lock file pins every resolved distribution (``name==version``; a local ``+cpu`` tag is
dropped, so on a CUDA machine PyPI's CUDA build of that version installs). Install one on
the GPU machine, from the repository root (docs/training.md, "GPU environments")::

    python -m venv .venv-gpu && .venv-gpu/bin/pip install -c envs/gpu-verl.txt -e '.[serve,sim]' 'verl[vllm]'

``check`` resolves the same requirements under the lock file: a trainer release or a
groundrl extra that no longer fits shows up as a resolution failure, which CI reports.
"""

from __future__ import annotations

import argparse
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
        # should a resolver have to build flash-attn's / DeepSpeed's metadata (their setup.py
        # imports torch), the CUDA kernels are skipped; `install` drops these two and builds
        # flash-attn against the torch it installed first (no build isolation)
        "env": {"FLASH_ATTENTION_SKIP_CUDA_BUILD": "TRUE", "DS_BUILD_OPS": "0"},
        "pip": ["--no-build-isolation"],
    },
}


def lock_path(name: str) -> Path:
    return ROOT / "envs" / f"gpu-{name}.txt"


UV_HINT = "uv is missing from this interpreter: pip install uv==0.13.9 (make setup puts it in .venv)"
# The GPU machines' platform, not this one's: resolved here, pip took the local CPU wheel of
# torch 2.13.0 (no triton / nvidia-* requirements) and wrote locks that a CUDA machine
# could not install (triton 3.9.0 beside torch 2.13.0's triton==3.7.1). uv resolves for a
# named platform from the index's metadata, whatever this machine has installed.
TARGET = ["--python-version", "3.11", "--python-platform", "x86_64-unknown-linux-gnu"]


def _requirements(name: str) -> list[str]:
    """The environment's requirement lines; groundrl itself as an editable path."""
    reqs = ENVS[name]["requirements"]
    return [f"-e {ROOT}{r[1:]}" if r.startswith(".[") else r for r in reqs]  # type: ignore[union-attr]


def _resolve(name: str, constraints: Path | None) -> tuple[int, dict[str, str], str]:
    """uv's resolution for linux x86_64 / Python 3.11: (exit code, {name: version} without
    groundrl, uv's output)."""
    spec = ENVS[name]
    with tempfile.TemporaryDirectory() as tmp:
        req_in, out = Path(tmp) / "requirements.in", Path(tmp) / "resolved.txt"
        req_in.write_text("\n".join(_requirements(name)) + "\n")
        cmd = [
            sys.executable,
            "-m",
            "uv",
            "pip",
            "compile",
            "--quiet",
            "--no-header",
            "--no-annotate",
            *TARGET,
        ]
        cmd += [str(req_in), "-o", str(out)]
        if constraints is not None:
            cmd += ["-c", str(constraints)]
        env = {**os.environ, **spec["env"]}  # type: ignore[dict-item]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, env=env)
        except FileNotFoundError as exc:  # no interpreter at all
            return 1, {}, str(exc)
        if "No module named uv" in res.stderr:
            return 1, {}, UV_HINT
        pins: dict[str, str] = {}
        if res.returncode == 0 and out.is_file():
            for line in out.read_text().splitlines():
                m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
                if m is None:
                    continue
                pkg = re.sub(r"[-_.]+", "-", m.group(1)).lower()  # PEP 503: flash_attn = flash-attn
                if pkg != "groundrl":
                    pins[pkg] = re.sub(r"\+.*$", "", m.group(2))
    return res.returncode, pins, (res.stdout + res.stderr).strip()


def lock(name: str) -> int:
    rc, pins, out = _resolve(name, None)
    if rc:
        print(f"{name}: uv could not resolve it:\n{out}", file=sys.stderr)
        return 1
    head = [
        f"# GPU environment '{name}' (scripts/gpu_envs.py lock {name}): every distribution uv resolved for",
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
