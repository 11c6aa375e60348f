"""Every skill's preconditions and effects, on hand-built scenes."""

import json

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


def test_slicing_makes_slices_where_the_object_was():
    env = kitchen()
    run(env, ("find", "Knife"), ("pickup", "Knife"), ("find", "Apple"), ("slice", "Apple"))
    slices = env.ids_of_type("AppleSliced")
    assert slices == ["Apple_1", "Apple_1_Slice_2", "Apple_1_Slice_3"]
    assert all(env.parent[s] == "CounterTop_1" for s in slices) and set(slices) <= env.sliced
    assert env.scene.objects[6].type == "Apple"  # the scene (start state) is untouched
    assert env.attrs("Apple_1_Slice_2") == env.attrs("Apple_1")
    # a copy made before slicing keeps its own object list
    env2 = kitchen()
    run(env2, ("find", "Knife"), ("pickup", "Knife"), ("find", "Apple"))
    c = env2.copy()
    run(env2, ("slice", "Apple"))
    assert len(c.order) == 10 and len(env2.order) == 12


def test_slicing_keeps_states_and_fails_in_closed_containers():
    env = kitchen()
    run(env, ("find", "Apple"), ("pickup", "Apple"), ("find", "Microwave"), ("open", "Microwave"), ("put",))
    run(env, ("close", "Microwave"), ("toggle_on", "Microwave"), ("find", "Knife"), ("pickup", "Knife"))
    run(env, ("find", "Microwave"))
    r = env.step(Skill("slice", "Apple"))
    assert not r.ok and "inside the closed Microwave" in r.feedback
    run(env, ("open", "Microwave"), ("slice", "Apple"))
    assert {"Apple_1", "Apple_1_Slice_2", "Apple_1_Slice_3"} <= env.hot


def test_no_putting_into_a_container_inside_a_closed_one():
    objs = [
        Obj("Cabinet_1", "Cabinet"),
        Obj("CounterTop_1", "CounterTop"),
        Obj("Pot_1", "Pot", "Cabinet_1"),
        Obj("Apple_1", "Apple", "CounterTop_1"),
    ]
    env = Env(Scene("kitchen", objs))
    run(env, ("find", "Apple"), ("pickup", "Apple"), ("find", "Pot"))
    r = env.step(Skill("put"))
    assert not r.ok and r.feedback == "Last action is invalid. The Pot is inside the closed Cabinet."
    assert run(env, ("open", "Cabinet"), ("put",))[-1].ok and env.parent["Apple_1"] == "Pot_1"


def test_put_into_a_bowl_in_a_running_sink_cleans():
    objs = [
        Obj("SinkBasin_1", "SinkBasin"),
        Obj("Faucet_1", "Faucet", "SinkBasin_1"),
        Obj("CounterTop_1", "CounterTop"),
        Obj("Bowl_1", "Bowl", "SinkBasin_1"),
        Obj("Apple_1", "Apple", "CounterTop_1"),
    ]
    env = Env(Scene("kitchen", objs))
    run(env, ("find", "Faucet"), ("toggle_on", "Faucet"), ("find", "Apple"), ("pickup", "Apple"))
    run(env, ("find", "Bowl"), ("put",))
    assert env.parent["Apple_1"] == "Bowl_1" and "Apple_1" in env.clean


def test_clean_macro_needs_a_faucet_at_the_sink():
    objs = [
        Obj("SinkBasin_1", "SinkBasin"),
        Obj("CounterTop_1", "CounterTop"),
        Obj("Mug_1", "Mug", "CounterTop_1"),
    ]
    env = Env(Scene("kitchen", objs))
    run(env, ("find", "Mug"), ("pickup", "Mug"), ("find", "SinkBasin"))
    r = env.step(Skill("clean"))
    assert not r.ok and "SinkBasin with a Faucet" in r.feedback


def test_put_down_goes_where_the_last_find_was():
    env = kitchen()
    # finding a plain object makes its receptacle the place to put things
    run(env, ("find", "Mug"), ("pickup", "Mug"), ("find", "Knife"), ("put",))
    assert env.parent["Mug_1"] == "DiningTable_1"
    r = kitchen().step(Skill("put"))
    assert r.feedback == "Last action is invalid. You are not holding anything."


def test_find_skips_the_held_instance():
    env = kitchen()
    run(env, ("find", "Apple"), ("pickup", "Apple"))
    assert env.held == "Apple_1"
    run(env, ("find", "Apple"))
    assert env.at == "Apple_2"
    assert "in your hand" in env.step(Skill("find", "Apple_1")).feedback


def test_auto_open_for_vocabularies_without_open():
    env = kitchen(auto_open=True)
    run(env, ("find", "Apple"), ("pickup", "Apple"), ("find", "Fridge"), ("put",))
    assert env.parent["Apple_1"] == "Fridge_1" and "Fridge_1" in env.opened


def test_bad_inputs_are_invalid_steps_never_exceptions():
    env = kitchen()
    for bad in [Skill("find", ["Apple"]), "find a Apple", 42, Skill(None), Skill("put", {"x": 1})]:
        r = env.step(bad)
        assert not r.ok and r.feedback.startswith("Last action is invalid.")
    assert env.invalid_steps == 5 and env.steps == 5
    assert "There is no Spaceship here." in env.step(Skill("pickup", "Spaceship")).feedback
    assert "cannot be opened" in run(env, ("find", "Apple"), ("open", "Apple"))[-1].feedback


def test_state_json_round_trip_and_observation():
    env = kitchen()
    run(
        env, ("find", "Knife"), ("pickup", "Knife"), ("find", "Apple"), ("slice", "Apple"), ("find", "Fridge")
    )
    d = json.loads(json.dumps(env.state_json()))
    back = Env(env.scene).load_state(d)
    assert back.state_json() == env.state_json()
    assert back.observation() == env.observation()
    obs = env.observation()
    assert "Fridge (closed)" in obs and "Apple_2" not in obs and "Apple in the Fridge" not in obs
    assert "AppleSliced on the CounterTop" in obs and "You are holding the Knife." in obs
