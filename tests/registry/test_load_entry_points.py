"""registry.load_entry_points, the one loop behind the judge-backend, stage-kind and
vocabulary plugin groups: each entry point of a real dist-info on sys.path (read by
importlib.metadata as after ``pip install``) reaches ``accept``; one that fails to import,
or that ``accept`` refuses, is a warning naming it and the others still load."""

from __future__ import annotations

import logging

from groundrl.registry import load_entry_points

GROUP = "groundrl.test_load_entry_points"


def _install(site, entries: str) -> None:
    info = site / "lep_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lep-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{GROUP}]\n{entries}")


def test_good_plugins_reach_accept_and_broken_ones_are_warnings(tmp_path, monkeypatch, caplog):
    _install(
        tmp_path,
        "good = json:dumps\nmissing = no_such_module_lep:thing\nrefused = json:loads\nalso_good = json:JSONDecoder\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: dict[str, object] = {}

    def accept(name: str, obj: object) -> None:
        if name == "refused":
            raise ValueError("a taken name")
        seen[name] = obj

    log = logging.getLogger("groundrl.test_lep")
    with caplog.at_level(logging.WARNING, logger="groundrl.test_lep"):
        load_entry_points(GROUP, "widget", accept, log)

    import json

    assert seen == {"good": json.dumps, "also_good": json.JSONDecoder}
    warned = sorted(r.getMessage() for r in caplog.records)
    assert len(warned) == 2
    assert warned[0].startswith("widget plugin missing failed to load: No module named 'no_such_module_lep'")
    assert warned[1] == "widget plugin refused failed to load: a taken name"


def test_a_group_nobody_fills_calls_nothing(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    load_entry_points(
        GROUP + ".empty", "widget", lambda *_: (_ for _ in ()).throw(AssertionError), logging.getLogger("x")
    )
