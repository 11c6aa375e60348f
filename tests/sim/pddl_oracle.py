"""Cross-checking the engine against a standard planning interpreter.

:func:`export` writes a task as a PDDL domain + problem over *instances* and turns an
executed plan into instance-level PDDL actions (the instances our engine resolved at
each step); ``unified-planning``'s sequential plan validator then replays it. Agreement
on valid plans (and on rejecting invalid ones) checks that our transition function
matches a standard reading of the same preconditions and effects.

Covered: find, pick up, put, open, close, turn on, and the look-at-in-light goal, with
spots as in the engine (a top-level receptacle is its own spot; every other object sits
at its top-level receptacle). Side effects (clean/heat/cool) and slicing are not in the
PDDL model: tasks that need them are not exported.

A test oracle, so it lives beside its test (``test_pddl.py``) and its two dependencies
(``unified-planning``, ``up-pyperplan``) are in the ``dev`` extra, not the package's.
"""

from __future__ import annotations

from groundrl.sim.catalog import props
from groundrl.sim.goals import Goal
from groundrl.sim.skills import Skill
from groundrl.sim.task_types import BUILTIN
from groundrl.sim.world import Env, Scene

#: the built-in task types whose goals export (each type's ``pddl``)
SUPPORTED = frozenset(t.name for t in BUILTIN if t.pddl)

DOMAIN = """(define (domain household)
  (:requirements :strips :typing :negative-preconditions)
  (:types obj)
  (:predicates (in ?o - obj ?r - obj) (agentat ?r - obj) (holding ?o - obj) (handempty)
               (pickupable ?o - obj) (receptacle ?r - obj) (openable ?r - obj) (opened ?r - obj)
               (toplevel ?r - obj) (toggleable ?o - obj) (ison ?o - obj) (started))
  (:action find
    :parameters (?r - obj ?prev - obj)
    :precondition (and (toplevel ?r) (agentat ?prev))
    :effect (and (not (agentat ?prev)) (agentat ?r)))
  (:action findfirst
    :parameters (?r - obj)
    :precondition (and (toplevel ?r) (not (started)))
    :effect (and (agentat ?r) (started)))
  (:action pickup
    :parameters (?o - obj ?r - obj)
    :precondition (and (handempty) (agentat ?r) (in ?o ?r) (pickupable ?o) (or (not (openable ?r)) (opened ?r)))
    :effect (and (not (in ?o ?r)) (holding ?o) (not (handempty))))
  (:action put
    :parameters (?o - obj ?r - obj)
    :precondition (and (holding ?o) (agentat ?r) (receptacle ?r) (or (not (openable ?r)) (opened ?r)))
    :effect (and (in ?o ?r) (not (holding ?o)) (handempty)))
  (:action open
    :parameters (?r - obj)
    :precondition (and (agentat ?r) (openable ?r) (not (opened ?r)))
    :effect (opened ?r))
  (:action close
    :parameters (?r - obj)
    :precondition (and (agentat ?r) (opened ?r))
    :effect (not (opened ?r)))
  (:action toggleon
    :parameters (?o - obj ?r - obj)
    :precondition (and (agentat ?r) (or (= ?o ?r) (in ?o ?r)) (toggleable ?o) (not (ison ?o)))
    :effect (ison ?o)))
"""


#: The name a step gets for an object that is not there (no instance of the type it
#: names, an empty hand): not one of the problem's objects, so the plan is rejected.
NOTHING = "nothing"


def _name(oid: str | None) -> str:
    return NOTHING if oid is None else oid.lower().replace("_", "-")


def supported(goal: Goal) -> bool:
    return goal.type.pddl and not goal.sliced


def export_problem(scene: Scene, goal_atoms: list[str]) -> str:
    env = Env(scene)
    objs = " ".join(_name(i) for i in env.order)
    init = ["(handempty)"]
    for i in env.order:
        t = env.type_of[i]
        p = props(t)
        if env.parent[i] is None:
            init.append(f"(toplevel {_name(i)})")
        else:
            init.append(f"(in {_name(i)} {_name(env.spot(i))})")
        for flag, pred in (
            ("pickupable", "pickupable"),
            ("receptacle", "receptacle"),
            ("openable", "openable"),
            ("toggleable", "toggleable"),
        ):
            if p[flag]:
                init.append(f"({pred} {_name(i)})")
        if i in scene.opened:
            init.append(f"(opened {_name(i)})")
        if i in scene.on:
            init.append(f"(ison {_name(i)})")
    return f"""(define (problem task) (:domain household)
  (:objects {objs} - obj)
  (:init {" ".join(init)})
  (:goal (and {" ".join(goal_atoms)})))
"""


def nested_ok(scene: Scene) -> bool:
    """The PDDL model flattens containment to spots: only scenes where every object
    sits directly in/on a top-level receptacle are exported."""
    byid = {o.id: o for o in scene.objects}
    return all(o.parent is None or byid[o.parent].parent is None for o in scene.objects)


def translate(scene: Scene, skills: list[Skill]) -> tuple[list[str], Env]:
    """Run type-level skills in the engine, recording the instances each step used, as
    PDDL actions; returns them and the final engine state (invalid steps included as
    the PDDL action a naive reading would give, so the validator can reject them)."""
    env = Env(scene, max_steps=10**6, max_invalid=10**6)
    out = []
    for s in skills:
        before_at = env.spot(env.at) if env.at else None
        held = env.held
        target = env._resolve(s.target) if s.target else None
        res = env.step(s)
        if s.verb == "find":
            r = env.spot(env.at) if res.ok else (env.spot(target) if target else None)
            out.append(
                f"(findfirst {_name(r)})" if before_at is None else f"(find {_name(r)} {_name(before_at)})"
            )
        elif s.verb == "pickup":
            o = env.held if res.ok else target
            out.append(f"(pickup {_name(o)} {_name(before_at or o)})")
        elif s.verb == "put":
            r = env.parent.get(held) if res.ok and held else (target or env.last_recep)
            r = env.spot(r) if r else r
            out.append(f"(put {_name(held)} {_name(r)})")
        elif s.verb in ("open", "close"):
            out.append(f"({s.verb} {_name(target)})")
        elif s.verb == "toggle_on":
            out.append(f"(toggleon {_name(target)} {_name(before_at or target)})")
    return out, env


def goal_atoms(goal: Goal, env: Env) -> list[str]:
    """The instance-level facts our engine reached that satisfy the goal."""
    atoms = []
    objs = [i for i in env.order if env.type_of[i] == goal.obj]
    if goal.type.lamp:
        atoms.append(f"(holding {_name(env.held)})" if env.held else "(holding nothing-held)")
        lamps = [i for i in env.ids_of_type(goal.recep) if i in env.on]
        atoms.append(f"(ison {_name(lamps[0])})" if lamps else "(ison no-lamp)")
        return atoms
    for o in objs:
        p = env.parent.get(o)
        if p is not None and env.type_of[p] == goal.recep:
            atoms.append(f"(in {_name(o)} {_name(p)})")
    return atoms or ["(handempty)", "(not (handempty))"]


def validate(scene: Scene, goal: Goal, skills: list[Skill]) -> tuple[bool, str]:
    """``(valid, reason)`` from unified-planning's sequential plan validator."""
    # lazy: unified-planning is in the dev extra (test_pddl skips without it)
    from unified_planning.exceptions import UPValueError
    from unified_planning.io import PDDLReader
    from unified_planning.shortcuts import PlanValidator, get_environment

    get_environment().credits_stream = None
    actions, env = translate(scene, skills)
    reader = PDDLReader()
    problem = reader.parse_problem_string(DOMAIN, export_problem(scene, goal_atoms(goal, env)))
    try:
        plan = reader.parse_plan_string(problem, "\n".join(actions))
    except UPValueError as e:  # a step names an object the scene lacks (NOTHING)
        return False, str(e)
    with PlanValidator(problem_kind=problem.kind, plan_kind=plan.kind) as v:
        res = v.validate(problem, plan)
    return res.status.name == "VALID", str(res.reason) if hasattr(res, "reason") else res.status.name
