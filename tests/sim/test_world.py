"""Every skill's preconditions and effects, on hand-built scenes."""

from groundrl.sim.skills import Skill
from groundrl.sim.world import OK, Env, Obj, Scene


def kitchen(**extra):
    objs = [
        Obj("CounterTop_1", "CounterTop"),
        Obj("DiningTable_1", "DiningTable"),
        Obj("Fridge_1", "Fridge"),
        Obj("Microwave_1", "Microwave"),
        Obj("SinkBasin_1", "SinkBasin"),
        Obj("Faucet_1", "Faucet", "SinkBasin_1"),
        Obj("Apple_1", "Apple", "CounterTop_1"),
        Obj("Knife_1", "Knife", "DiningTable_1"),
        Obj("Mug_1", "Mug", "CounterTop_1"),
        Obj("Apple_2", "Apple", "Fridge_1"),
    ]
    return Env(Scene("kitchen", objs), **extra)


def run(env, *skills):
    return [env.step(Skill(*s) if isinstance(s, tuple) else Skill(s)) for s in skills]


def test_find_pick_put_and_feedback():
    env = kitchen()
    r = run(env, ("find", "Apple"), ("pickup", "Apple"), ("find", "DiningTable"), ("put",))
    assert all(x.ok and x.feedback == OK for x in r)
    assert env.parent["Apple_1"] == "DiningTable_1" and env.held is None and env.steps == 4


def test_find_cycles_through_instances():
    env = kitchen()
    run(env, ("find", "Apple"))
    assert env.at == "Apple_1"
    run(env, ("find", "Apple"))
    assert env.at == "Apple_2"
    run(env, ("find", "Apple"))
    assert env.at == "Apple_1"


def test_pickup_failures():
    env = kitchen()
    assert "not near" in env.step(Skill("pickup", "Apple_1")).feedback
    run(env, ("find", "Apple"), ("pickup", "Apple"))
    r = env.step(Skill("pickup", "Mug"))
    assert not r.ok and "already holding" in r.feedback
    env2 = kitchen()
    run(env2, ("find", "Fridge"))
    r = env2.step(Skill("pickup", "Apple"))
    assert not r.ok and "inside the closed Fridge" in r.feedback
    assert "cannot be picked up" in env2.step(Skill("pickup", "Fridge")).feedback
    assert env2.invalid_steps == 2


def test_put_into_closed_fridge_is_invalid_then_ok_after_open():
    env = kitchen()
    run(env, ("find", "Mug"), ("pickup", "Mug"), ("find", "Fridge"))
    r = env.step(Skill("put"))
    assert not r.ok and "closed" in r.feedback
    run(env, ("open", "Fridge"))
    assert env.step(Skill("put")).ok and env.parent["Mug_1"] == "Fridge_1"
    run(env, ("close", "Fridge"))
    assert "Mug_1" in env.cool and "Apple_2" in env.cool  # closing the fridge cools what is inside


def test_slice_needs_a_knife_and_renames():
    env = kitchen()
    run(env, ("find", "Apple"))
    r = env.step(Skill("slice", "Apple"))
    assert not r.ok and "knife" in r.feedback
    # a second "find a Apple" would go to the next instance (in the fridge): go to the counter
    run(env, ("find", "Knife"), ("pickup", "Knife"), ("find", "CounterTop"))
    assert env.step(Skill("slice", "Apple")).ok
    assert env.type_of["Apple_1"] == "AppleSliced" and "Apple_1" in env.sliced
    assert "already sliced" in env.step(Skill("slice", "Apple_1")).feedback


def test_microwave_heats_only_when_closed_and_on():
    env = kitchen()
    run(env, ("find", "Mug"), ("pickup", "Mug"), ("find", "Microwave"), ("open", "Microwave"), ("put",))
    r = env.step(Skill("toggle_on", "Microwave"))
    assert not r.ok and "close it first" in r.feedback
    run(env, ("close", "Microwave"), ("toggle_on", "Microwave"))
    assert "Mug_1" in env.hot
    run(env, ("open", "Microwave"))
    assert "Microwave_1" not in env.on  # opening stops it


def test_sink_and_faucet_clean_as_side_effect_both_orders():
    env = kitchen()
    run(env, ("find", "Mug"), ("pickup", "Mug"), ("find", "SinkBasin"), ("put",), ("toggle_on", "Faucet"))
    assert "Mug_1" in env.clean
    env2 = kitchen()
    run(
        env2,
        ("find", "Faucet"),
        ("toggle_on", "Faucet"),
        ("find", "Apple"),
        ("pickup", "Apple"),
        ("find", "SinkBasin"),
        ("put",),
    )
    assert "Apple_1" in env2.clean


def test_macros_need_the_station_and_the_object_in_hand():
    env = kitchen()
    run(env, ("find", "Apple"), ("pickup", "Apple"))
    r = env.step(Skill("heat"))
    assert not r.ok and "Microwave" in r.feedback
    run(env, ("find", "Microwave"))
    assert env.step(Skill("heat")).ok and "Apple_1" in env.hot
    assert "hold" in env.step(Skill("cool", "Mug")).feedback


def test_episode_limits_and_unknown_actions():
    env = kitchen(max_steps=30, max_invalid=3)
    for _ in range(3):
        r = env.step(None, why_unparsed="gibberish")
    assert r.done and env.invalid_steps == 3 and "gibberish" in r.feedback
    assert not env.step(Skill("find", "Apple")).ok
    env = kitchen(max_steps=2)
    assert run(env, ("find", "Apple"), ("find", "Mug"))[-1].done
    assert "Unknown skill" in kitchen().step(Skill("dance", "Apple")).feedback


def test_copy_is_independent():
    env = kitchen()
    run(env, ("find", "Apple"))
    c = env.copy()
    run(c, ("pickup", "Apple"))
    assert env.held is None and c.held == "Apple_1"


def test_scene_json_round_trip():
    env = kitchen()
    s2 = Scene.from_json(env.scene.to_json())
    assert s2.to_json() == env.scene.to_json()
