"""groundrl.registry.Registry, the one shape behind every pluggable kind (issue 40 item 4):
plain call and decorator registration, the shared rules, did-you-mean look-ups, built-ins
listed apart from plugins, lazy built-ins, and entry points of a real dist-info on
sys.path loaded with one failure policy (a broken plugin is a warning, never a raise)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import pytest

from groundrl.registry import Registry

GROUP = "groundrl.test_registry_class"


@dataclass(frozen=True)
class Widget:
    name: str


def _widgets(**kw) -> Registry[Widget]:
    return Registry("widget", name_of=lambda w: w.name, log=logging.getLogger("groundrl.test_rc"), **kw)


def test_plain_call_and_decorator_forms_register_the_same_way():
    makers: Registry[object] = Registry("maker")
    makers.builtin("zero", int)

    @makers.register("one")
    class One:
        pass

    assert makers.register("two", float) is float and makers.get("one") is One
    assert makers.names() == ["zero", "one", "two"] and makers.builtin_names() == ["zero"]
    with pytest.raises(TypeError, match="register a maker with its name"):
        makers.register(str)
    widgets = _widgets()
    w = Widget("a")
    assert widgets.register(w) is w and widgets.register("a", w) is w  # same item: no-op
    with pytest.raises(ValueError, match="widget 'b' is registered as 'a': the names must match"):
        widgets.register("b", w)


def test_rules_and_errors_are_the_shared_ones():
    widgets = _widgets()
    widgets.builtin(Widget("core"))
    first, second = Widget("x"), Widget("x")
    widgets.register(first)
    with pytest.raises(ValueError, match="already registered; pass replace=True"):
        widgets.register(second)
    assert widgets.register(second, replace=True) is second and widgets.get("x") is second
    with pytest.raises(ValueError, match="'core' is a built-in widget; give yours another name"):
        widgets.register(Widget("core"), replace=True)
    with pytest.raises(ValueError, match="'core' is a built-in widget; it cannot be unregistered"):
        widgets.unregister("core")
    widgets.unregister("x")
    assert "x" not in widgets and widgets.names() == ["core"]


def test_an_unknown_name_suggests_the_closest_and_lists_all():
    class Unknown(ValueError):
        pass

    widgets = _widgets(error=Unknown)
    for n in ("alpha", "beta"):
        widgets.register(Widget(n))
    with pytest.raises(Unknown) as e:
        widgets.get("alpah")
    assert str(e.value) == "unknown widget 'alpah' (did you mean 'alpha'?); choose one of alpha, beta"
    with pytest.raises(Unknown, match="unknown widget 3; choose one of alpha, beta"):
        widgets.get(3)  # type: ignore[arg-type]


def test_items_registered_through_the_public_call_can_become_the_builtins():
    widgets = _widgets()
    widgets.register(Widget("core"))
    widgets.mark_builtins()
    widgets.register(Widget("extra"))
    assert widgets.builtin_names() == ["core"] and widgets.names() == ["core", "extra"]
    with pytest.raises(ValueError, match="'core' is a built-in widget; it cannot be unregistered"):
        widgets.unregister("core")


def test_a_lazy_builtin_is_imported_on_first_get():
    reg: Registry[object] = Registry("thing")
    reg.builtin_lazy("dumps", "json:dumps")
    import json

    assert reg.names() == ["dumps"] and reg.is_builtin("dumps") and reg.get("dumps") is json.dumps
    with pytest.raises(ValueError, match="'dumps' is a built-in thing"):
        reg.register("dumps", print)
    assert reg.register("dumps", json.dumps) is json.dumps  # the built-in itself: a no-op


def test_plugins_load_one_way_and_a_broken_one_warns_and_is_skipped(tmp_path, monkeypatch, caplog):
    (tmp_path / "rc_ok.py").write_text("W = {'name': 'good'}\n")
    info = tmp_path / "rc_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rc-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[{GROUP}]\ngood = rc_ok:W\nmissing = no_such_module_rc:W\ncore = rc_ok:W\nbadtype = json:dumps\n"
    )

    def from_plugin(name: str, obj: object) -> Widget:  # a plugin names a spec dict
        if not isinstance(obj, dict):
            raise TypeError(f"gave {type(obj).__name__}, expected a dict")
        return Widget(**obj)

    widgets = _widgets(group=GROUP, from_plugin=from_plugin)
    widgets.builtin(Widget("core"))
    assert widgets.names() == ["core"]  # nothing installed yet
    monkeypatch.syspath_prepend(str(tmp_path))  # "pip install": sys.path changed, read again
    with caplog.at_level(logging.WARNING, logger="groundrl.test_rc"):
        assert widgets.names() == ["core", "good"]
    warned = sorted(r.getMessage() for r in caplog.records)
    assert len(warned) == 2, warned  # 'core' is a known name: never loaded over the built-in
    assert warned[0] == "widget plugin badtype failed to load: gave function, expected a dict"
    assert warned[1].startswith("widget plugin missing failed to load: No module named 'no_such_module_rc'")
    assert widgets.builtin_names() == ["core"]
    widgets.unregister("good")
    assert widgets.get("good").name == "good"  # a miss reads the entry points again


def test_item_type_refuses_a_plugin_object_of_another_type_and_passes_a_module():
    import types

    reg = _widgets(item_type=Widget)
    reg._accept_plugin("mod", types.ModuleType("plugin_mod"))  # registered its own on import
    assert reg.names() == []
    reg._accept_plugin("good", Widget("good"))
    assert reg.names() == ["good"]
    with pytest.raises(TypeError, match=r"^it gave int, expected a groundrl Widget$"):
        reg._accept_plugin("bad", 3)
