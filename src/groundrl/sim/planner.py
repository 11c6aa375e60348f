"""Expert planner: breadth-first search over high-level skills on the simulator's own
transition function, so a plan it returns is valid by construction and shortest among
plans over the *relevant* objects.

Relevance (a sound pruning for ALFRED goals): the goal's object, movable receptacle and
target types; the tools a goal state needs (knives to slice, SinkBasin + Faucet to
clean, Microwave to heat, Fridge to cool, the lamp to look); and any container holding
one of those. Skills are type-level (``find Apple``, ``put`` into the receptacle at
hand), exactly what the action vocabularies can express, so rendering a plan into any
vocabulary replays the same states. Pruned as useless for ALFRED goals: ``toggle_off``;
``close`` except a Fridge / Microwave holding the goal object in cool / heat tasks;
``toggle_on`` except the Faucet over the goal object (clean), the Microwave holding it
(heat) and the goal lamp (look); picking up a knife once the object is sliced.
"""

from __future__ import annotations

import heapq
import itertools

from groundrl.sim.catalog import KNIVES, base_type, props
from groundrl.sim.goals import Goal, satisfied
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env, Scene

_TOOLS = {
    "pick_clean_then_place_in_recep": ("SinkBasin", "Faucet"),
    "pick_heat_then_place_in_recep": ("Microwave",),
    "pick_cool_then_place_in_recep": ("Fridge",),
}


def relevant_types(goal: Goal, env: Env) -> set[str]:
    types = {goal.obj, goal.obj + "Sliced", goal.recep}
    if goal.mrecep:
        types.add(goal.mrecep)
    types.update(_TOOLS.get(goal.task_type, ()))
    if goal.sliced:
        types.update(k for k in KNIVES if env.ids_of_type(k))
    # containers of relevant objects (to open them or to go where the object is)
    for i in list(env.order):
        if env.type_of[i] in types:
            p = env.parent.get(i)
            while p is not None:
                types.add(env.type_of[p])
                p = env.parent.get(p)
    return {t for t in types if env.ids_of_type(t) or t.endswith("Sliced")}


def _key(env: Env, rel_ids: tuple[str, ...]) -> tuple:
    # Which instance "find X" visits next is left out of the state: merging states that
    # differ only there keeps the search small when a type has several instances (plans
    # stay valid — every step is executed — but may then be longer than the optimum).
    return (
        env.at,
        env.held,
        tuple(env.parent[i] for i in rel_ids),
        tuple(env.type_of[i] for i in rel_ids),
        frozenset(env.opened),
        frozenset(env.on),
        frozenset(env.clean),
        frozenset(env.hot),
        frozenset(env.cool),
    )


def _goal_objs(env: Env, goal: Goal) -> list[str]:
    return [i for i in env.order if base_type(env.type_of[i]) == goal.obj]


def _candidates(env: Env, types: set[str], goal: Goal, macros: bool = False) -> list[Skill]:
    """Skills worth trying here (see the module docstring for what is pruned and why)."""
    at_type = env.type_of[env.at] if env.at else None
    out = [
        Skill("find", t)
        for t in sorted(types)
        if env.ids_of_type(t)
        and not (t == at_type and len(env.ids_of_type(t)) == 1)
        and not (env.held and env.type_of[env.held] == t and len(env.ids_of_type(t)) == 1)
    ]
    agent_spot = env.spot(env.at)
    here = (
        [i for i in env.order if env.type_of[i] in types and (i == env.held or env.spot(i) == agent_spot)]
        if env.at
        else []
    )
    objs = set(_goal_objs(env, goal))
    need_slice = goal.sliced and sum(o in env.sliced for o in objs) < (
        2 if goal.task_type == "pick_two_obj_and_place" else 1
    )
    containers = {a for o in objs for a in env._ancestors(o)}
    if env.held is None:
        for t in sorted({env.type_of[i] for i in here if props(env.type_of[i])["pickupable"]}):
            if base_type(t) in KNIVES and base_type(t) != goal.obj and not need_slice:
                continue
            out.append(Skill("pickup", t))
    else:
        out.append(Skill("put"))
        if need_slice and base_type(env.type_of[env.held]) in KNIVES:
            for t in sorted(
                {
                    env.type_of[i]
                    for i in here
                    if i in objs and i not in env.sliced and props(env.type_of[i])["sliceable"]
                }
            ):
                out.append(Skill("slice", t))
    if macros:
        # macro skills at their station; no open/close/toggle: the vocabulary has none
        if env.held in objs:
            station = env.type_of[env.spot(env.at)] if env.at else None
            verb = {"SinkBasin": "clean", "Microwave": "heat", "Fridge": "cool"}.get(station or "")
            if verb and goal.task_type == f"pick_{verb}_then_place_in_recep":
                out.append(Skill(verb, env.type_of[env.held]))
        if goal.task_type == "look_at_obj_in_light":
            out.extend(
                Skill("toggle_on", env.type_of[i])
                for i in here
                if env.type_of[i] == goal.recep and i not in env.on
            )
        return list(dict.fromkeys(out))
    for i in here:
        t = env.type_of[i]
        p = props(t)
        inside = i in containers
        if p["openable"]:
            if i not in env.opened:
                out.append(Skill("open", t))
            elif (t == "Fridge" and goal.task_type == "pick_cool_then_place_in_recep" and inside) or (
                t == "Microwave" and goal.task_type == "pick_heat_then_place_in_recep" and inside
            ):
                out.append(Skill("close", t))
        if p["toggleable"] and i not in env.on:
            useful = (
                (
                    t == "Faucet"
                    and goal.task_type == "pick_clean_then_place_in_recep"
                    and env.parent.get(i) in containers
                )
                or (t == "Microwave" and goal.task_type == "pick_heat_then_place_in_recep" and inside)
                or (goal.task_type == "look_at_obj_in_light" and t == goal.recep)
            )
            if useful:
                out.append(Skill("toggle_on", t))
    return list(dict.fromkeys(out))


def _nav_lower_bound(env: Env, goal: Goal, objs: list[str]) -> int:
    """Finds the final placement still needs: reaching an object's spot (unless there or
    holding it) and then a target receptacle's spot (unless the object is already at
    one). Each is a distinct ``find`` step, so the bound stays admissible."""
    here = env.spot(env.at) if env.at else None
    targets = {env.spot(r) for r in env.ids_of_type(goal.recep)}
    if env.held in objs:
        return 0 if here in targets else 1
    best = 2
    for o in objs:
        so = env.spot(o)
        best = min(best, (0 if so == here else 1) + (0 if so in targets else 1))
    return best


def _h(env: Env, goal: Goal) -> int:
    """Admissible lower bound on the steps left: distinct steps every completion needs."""
    from groundrl.sim.goals import conditions

    conds = conditions(goal, env)
    if all(conds):
        return 0
    objs = _goal_objs(env, goal)
    h = 0
    if goal.task_type == "look_at_obj_in_light":
        return (0 if conds[0] else 1) + (0 if conds[1] else 1)
    placed_ok = conds[-2] if goal.sliced else conds[-1]
    if not placed_ok:
        h += 1 if env.held in objs else 2  # (pickup +) put
        if goal.mrecep is None and goal.task_type != "pick_two_obj_and_place":
            h += _nav_lower_bound(env, goal, objs)
    state = {
        "pick_clean_then_place_in_recep": env.clean,
        "pick_heat_then_place_in_recep": env.hot,
        "pick_cool_then_place_in_recep": env.cool,
    }.get(goal.task_type)
    if state is not None and not any(o in state for o in objs):
        h += 1  # a toggle or a close
    if goal.sliced and not any(o in env.sliced for o in objs):
        h += 1 + (0 if env.held and base_type(env.type_of[env.held]) in KNIVES else 1)
    return h


def expert_plan(
    task_or_goal,
    scene: Scene | None = None,
    max_nodes: int = 200_000,
    max_depth: int = 40,
    macros: bool = False,
) -> list[Skill] | None:
    """A shortest valid plan (list of type-level skills), or ``None`` if none exists
    within ``max_depth`` steps / ``max_nodes`` expanded states. A* with an admissible
    heuristic (:func:`_h`), so the first plan found is shortest in the searched space.

    ``macros=True`` plans for vocabularies with clean/heat/cool macros and no
    open/close (Reinforced Reasoning's): the world then opens containers on put/pick up.
    """
    goal = task_or_goal.goal if scene is None else task_or_goal
    scene = task_or_goal.scene if scene is None else scene
    root = Env(scene, max_steps=10**6, max_invalid=10**6, auto_open=macros)
    if satisfied(goal, root):
        return []
    types = relevant_types(goal, root)
    rel_ids = tuple(
        i for i in root.order if root.type_of[i] in types or base_type(root.type_of[i]) == goal.obj
    )
    counter = itertools.count()
    frontier: list[tuple[int, int, int, Env, tuple[Skill, ...]]] = [
        (_h(root, goal), 0, next(counter), root, ())
    ]
    best = {_key(root, rel_ids): 0}
    nodes = 0
    while frontier:
        _, g, _, env, plan = heapq.heappop(frontier)
        if satisfied(goal, env):
            return list(plan)
        if g >= max_depth:
            continue
        nodes += 1
        if nodes > max_nodes:
            return None
        for skill in _candidates(env, types, goal, macros):
            nxt = env.copy()
            if not nxt.step(skill).ok:
                continue
            k = _key(nxt, rel_ids)
            if best.get(k, 1 << 30) <= g + 1:
                continue
            best[k] = g + 1
            heapq.heappush(frontier, (g + 1 + _h(nxt, goal), g + 1, next(counter), nxt, (*plan, skill)))
    return None
