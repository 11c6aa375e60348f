"""The presets that ship with the package (issue 35 item 6), found by name so a user who
installed the wheel needs no checkout:

* ``configs/`` — train configs (``cpu-tiny/``, ``papers/``, ``gpu/``), accelerate launch
  configs (``accelerate/``) and the small ``data/`` files the cpu-tiny presets train on;
* ``launch/`` — the verl and OpenRLHF launch scripts (``groundrl examples``).

A preset's name is its path under ``configs/`` with or without ``.yaml``; a leading
``configs/`` is allowed, so the repository paths the docs show name the packaged file too.
An existing file always wins over a preset of the same name [ours].

>>> find_config("papers/eqa_rm").relative_to(configs_dir()).as_posix()
'papers/eqa_rm.yaml'
>>> find_config("papers/no_such_preset") is None
True
"""

from __future__ import annotations

import difflib
from importlib import resources
from pathlib import Path, PurePosixPath

#: train-config folders under configs/ (``accelerate/`` holds launch configs, ``data/`` data)
TRAIN_GROUPS = ("cpu-tiny", "papers", "gpu")


def configs_dir() -> Path:
    return Path(str(resources.files("groundrl") / "configs"))


def launch_dir() -> Path:
    return Path(str(resources.files("groundrl") / "launch"))


def preset_names(groups: tuple[str, ...] = TRAIN_GROUPS) -> list[str]:
    """``group/name`` of every packaged YAML in ``groups``, sorted."""
    root = configs_dir()
    return sorted(f"{g}/{p.stem}" for g in groups for p in (root / g).glob("*.yaml"))


def _preset_path(name: str) -> Path | None:
    """The packaged file a name means; names that climb out of configs/ mean nothing."""
    rel = PurePosixPath(name.replace("\\", "/"))
    if rel.parts[:1] == ("configs",):
        rel = PurePosixPath(*rel.parts[1:]) if len(rel.parts) > 1 else PurePosixPath(".")
    if rel.is_absolute() or ".." in rel.parts or not rel.name:
        return None
    if rel.suffix not in (".yaml", ".yml"):
        rel = rel.with_name(rel.name + ".yaml")
    path = configs_dir() / rel
    return path if path.is_file() else None


def find_config(value: str | Path) -> Path | None:
    """``value`` itself when it is a file, else the packaged preset it names, else None."""
    given = Path(value).expanduser()
    if given.is_file():
        return given
    return _preset_path(str(value))


def not_found(value: str | Path, groups: tuple[str, ...] = TRAIN_GROUPS) -> str:
    """Why ``value`` names nothing, with the nearest preset names."""
    names = preset_names(groups)
    key = str(value).removeprefix("configs/").removesuffix(".yaml")
    near = difflib.get_close_matches(key, names, n=3, cutoff=0.5)
    hint = f"; did you mean {' or '.join(near)}?" if near else ""
    return (
        f"config not found: {value} is not a file and not a packaged preset{hint} "
        "(`groundrl train --list-configs` lists the presets)"
    )


def is_packaged(path: str | Path) -> bool:
    """``path`` is one of the package's own preset files (through any link)."""
    return Path(path).resolve().is_relative_to(configs_dir().resolve())


def summary(path: Path) -> str:
    """The first comment line of a preset: what it runs."""
    try:
        with path.open(encoding="utf-8") as f:
            first = f.readline()
    except (OSError, UnicodeDecodeError):
        return ""
    return first[1:].strip() if first.startswith("#") else ""


def launch_scripts() -> dict[str, list[str]]:
    """``{trainer: [names]}`` of the packaged launch material: each ``launch/`` folder's
    scripts (``common`` left out: every script of a trainer sources it) and the
    ``accelerate`` configs."""
    root = launch_dir()
    out = {
        d.name: sorted(p.stem for p in d.glob("*.sh") if p.stem != "common")
        for d in (sorted(root.iterdir()) if root.is_dir() else [])
        if d.is_dir()
    }
    out["accelerate"] = [n.split("/", 1)[1] for n in preset_names(("accelerate",))]
    return out


def launch_files(trainer: str, name: str) -> list[Path]:
    """What ``trainer``'s ``name`` needs in one folder: the script, its own other files
    (``household_multiturn.yaml``) and ``common.sh``; for ``accelerate`` the one config.
    Raises ValueError naming what exists."""
    known = launch_scripts()
    if trainer not in known:
        raise ValueError(f"no launch scripts for {trainer!r}; there are: {', '.join(known)}")
    if name not in known[trainer]:
        raise ValueError(f"no {trainer} {name!r}; there are: {', '.join(known[trainer])}")
    if trainer == "accelerate":
        return [configs_dir() / "accelerate" / f"{name}.yaml"]
    folder = launch_dir() / trainer
    own = sorted(p for p in folder.glob(f"{name}.*") if p.is_file())
    return [*own, folder / "common.sh"]
