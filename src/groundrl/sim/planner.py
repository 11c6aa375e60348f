"""Expert planner: A* over high-level skills on the simulator's own transition function,
so a plan it returns is valid by construction and shortest among plans over the
*relevant* objects.

Relevance: the goal's object (and its slices), target, movable receptacle and lamp; the
tools a goal needs (knives to slice; SinkBasin + Faucet to clean, Microwave to heat,
Fridge to cool); and every container that holds one of those at the start. The search
runs on the start state restricted to those objects (plus what the agent holds, stands
at, or last found); type-level skills on relevant types behave there exactly as in the
full scene, and the plan is replayed on the full scene before it is returned.

Skills are type-level (``find Apple``, ``put`` into the receptacle most recently found),
exactly what the action vocabularies express, so rendering a plan into any vocabulary
replays the same states. Pruned because no shortest plan needs them: ``toggle_off``;
``close`` except a Fridge / Microwave holding the goal object in a cool / heat task;
``toggle_on`` except the Faucet over, or the Microwave holding, the goal object (clean /
heat) and the goal lamp (look); picking up a knife unless something must be sliced.

The state key is the whole restricted state (where the agent stands, what it last found,
every parent and flag), and the heuristic
(:func:`_h`) is an admissible lower bound, so the first plan A* pops is a shortest one.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any

from groundrl.sim.catalog import KNIVES, base_type, props
from groundrl.sim.goals import Goal, allowed, conditions, goal_objs, satisfied
from groundrl.sim.skills import Skill
from groundrl.sim.world import Env, Scene

_INF = 1 << 20


def _precursor(env: Env, goal: Goal, oid: str) -> bool:
    """``oid`` is the goal object or a slice of it (sliced or not yet)."""
    if base_type(env.type_of[oid]) != goal.obj:
        return False
    if goal.obj_id is not None and not (oid == goal.obj_id or oid.startswith(goal.obj_id + "_Slice_")):
        return False
    ok = allowed(goal, env)[0]
    return ok is None or oid.split("_Slice_")[0] in ok


def _described(goal: Goal, env: Env) -> dict[str, frozenset[str]]:
    """Types whose instances the goal restricts → the allowed ids (the planner finds
    those by id: "find a Cabinet_2")."""
    o, r, m = allowed(goal, env)
    if goal.obj_id is not None:
        o = frozenset({goal.obj_id}) if o is None else o & {goal.obj_id}
    out: dict[str, frozenset[str]] = {}
    for t, ok in ((goal.obj, o), (goal.recep, r), (goal.mrecep, m)):
        if t and ok is not None:
            out[t] = ok if t not in out else out[t] & ok
    return out


def relevant_types(goal: Goal, env: Env) -> set[str]:
    """Types the search may act on (see the module docstring)."""
    types = {goal.obj, goal.obj + "Sliced", goal.recep}
    if goal.mrecep:
        types.add(goal.mrecep)
    types.update(goal.type.fixtures)  # the station (and its faucet)
    if goal.sliced:
        types.update(KNIVES)
    for i in env.order:  # containers of relevant objects: to open them, or to go there
        if env.type_of[i] in types:
            types.update(env.type_of[a] for a in env.ancestors(i))
    present = {env.type_of[i] for i in env.order}
    return {t for t in types if t in present or t == goal.obj + "Sliced"}


def _restrict(env: Env, types: set[str]) -> Env:
    """A copy of ``env`` holding only objects of ``types`` and what the agent holds,
    stands at or last found (with their containers)."""
    keep = {i for i in env.order if env.type_of[i] in types}
    keep.update(x for x in (env.held, env.at, env.last_recep) if x is not None)
    for i in list(keep):
        keep.update(env.ancestors(i))
    e = env.copy()
    e.order = [i for i in env.order if i in keep]
    e.type_of = {i: env.type_of[i] for i in e.order}
    e.parent = {i: env.parent[i] for i in e.order}
    for name in ("opened", "on", "sliced", "clean", "hot", "cool"):
        setattr(e, name, getattr(env, name) & keep)
    return e


def _key(env: Env) -> tuple:
    return (
        env.at,
        env.held,
        env.last_recep,
        tuple(env.parent[i] for i in env.order),
        frozenset(env.opened),
        frozenset(env.on),
        frozenset(env.sliced),
        frozenset(env.clean),
        frozenset(env.hot),
        frozenset(env.cool),
    )


# ---------------------------------------------------------------------------
# candidate skills
# ---------------------------------------------------------------------------


def _candidates(env: Env, types: set[str], goal: Goal, macros: bool) -> list[Skill]:
    """Skills worth trying here (the module docstring says what is pruned and why)."""
    described = _described(goal, env)
    out = [
        Skill("find", t)
        for t in sorted({env.type_of[i] for i in env.order if i != env.held} & types)
        if t not in described
    ]
    for t, ok in described.items():
        out.extend(Skill("find", i) for i in env.order if i in ok and i != env.held and env.type_of[i] == t)
    if env.at is None:
        return out
    here_spot = env.spot(env.at)
    here = [i for i in env.order if env.type_of[i] in types and i != env.held and env.spot(i) == here_spot]
    pre = [i for i in env.order if _precursor(env, goal, i)]
    need_slice = goal.sliced and not goal_objs(env, goal)
    holding_knife = env.held is not None and base_type(env.type_of[env.held]) in KNIVES
    if env.held is None:
        for t in sorted({env.type_of[i] for i in here if props(env.type_of[i])["pickupable"]}):
            if base_type(t) in KNIVES and base_type(t) != goal.obj and not need_slice:
                continue
            out.append(Skill("pickup", t))
    else:
        out.append(Skill("put"))
        if need_slice and holding_knife:
            for t in sorted({env.type_of[i] for i in here if i in pre and i not in env.sliced}):
                out.append(Skill("slice", t))
    spec = goal.type
    holders = {a for o in pre for a in env.ancestors(o)}
    if macros:  # clean/heat/cool macros at their station; the world opens containers itself
        if env.held in pre and spec.macro and spec.station and env._station(spec.station) is not None:
            out.append(Skill(spec.macro, env.type_of[env.held]))
        if spec.lamp:
            out.extend(
                Skill("toggle_on", env.type_of[i])
                for i in here
                if env.type_of[i] == goal.recep and i not in env.on
            )
        return list(dict.fromkeys(out))
    for i in here:
        t = env.type_of[i]
        p = props(t)
        if p["openable"]:
            if i not in env.opened:
                out.append(Skill("open", t))
            elif i in holders and t == spec.station:  # closing the fridge / microwave acts on it
                out.append(Skill("close", t))
        if (
            p["toggleable"]
            and i not in env.on
            and (
                (t == spec.switch and (env.parent.get(i) if spec.switch_on_parent else i) in holders)
                or (spec.lamp and t == goal.recep)
            )
        ):
            out.append(Skill("toggle_on", t))
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------------------
# admissible heuristic
# ---------------------------------------------------------------------------


class _Ctx:
    """Per-search constants for the heuristic."""

    __slots__ = ("goal", "macros", "station")

    def __init__(self, goal: Goal, macros: bool) -> None:
        self.goal, self.macros = goal, macros
        self.station = goal.type.station


def _spots(env: Env, t: str | None, exclude_held: bool = True, ok: frozenset[str] | None = None) -> frozenset:
    if t is None:
        return frozenset()
    return frozenset(
        env.spot(i)
        for i in env.ids_of_type(t)
        if not (exclude_held and i == env.held) and (ok is None or i in ok)
    )


def _recep_spots(env: Env, goal: Goal) -> frozenset:
    return _spots(env, goal.recep, ok=allowed(goal, env)[1])


def _finds(cur: Any, pre: list[frozenset], final: frozenset | None) -> int:
    """Lower bound on ``find`` steps: pairwise-disjoint spot sets the agent must enter
    (none holding its current spot) need one find each; a final spot set disjoint from
    them all needs one more afterwards (or one, if nothing else needs a find)."""
    packed: list[frozenset] = []
    for s in sorted((s for s in pre if s and cur not in s), key=len):
        if all(s.isdisjoint(p) for p in packed):
            packed.append(s)
    n = len(packed)
    if final:
        if not packed:
            n += 0 if cur in final else 1
        elif all(final.isdisjoint(p) for p in packed):
            n += 1
    return n


class _Tally:
    """What :func:`_cost` counts for one choice of object: picks, puts, appliance
    actions, the spot sets the agent must enter (``pre``) and end at (``final``), the
    containers to open and the receptacle types that may need opening, and the held
    objects whose put is already counted."""

    def __init__(self, o: str, o_held: bool, o_spot: frozenset) -> None:
        self.o, self.o_held, self.o_spot = o, o_held, o_spot
        self.picks = self.puts = self.acts = 0
        self.pre: list[frozenset] = []
        self.final: frozenset | None = None
        self.opens: set[str] = set()
        self.open_types: set[str] = set()
        self.accounted: set[str] = set()
        self.first_pick_o = False

    def pick_o(self) -> None:
        """Pick the object up, unless it is already held."""
        if not self.o_held:
            self.picks += 1
            self.first_pick_o = True
            self.pre.append(self.o_spot)

    def put_o(self) -> None:
        self.puts += 1
        self.accounted.add(self.o)

    def open_around(self, env: Env, ctx: _Ctx, x: str) -> None:
        """The closed container around ``x`` must be opened (macros open it themselves)."""
        c = env.enclosing_closed(x)
        if c is not None and not ctx.macros:
            self.opens.add(c)

    def place_o(self, env: Env, goal: Goal) -> None:
        """The object picked and put in the target receptacle."""
        self.pick_o()
        self.put_o()
        self.final = _recep_spots(env, goal)
        self.open_types.add(goal.recep)


def _cost(env: Env, ctx: _Ctx, o: str, m: str | None) -> int:
    """Lower bound on the steps left if ``o`` (and movable receptacle ``m``) is used."""
    goal, spec = ctx.goal, ctx.goal.type
    held = env.held
    need_slice = goal.sliced and o not in env.sliced
    if need_slice and held == o:
        return 3  # put it down, pick up a knife, slice
    o_held = held == o
    parent = env.parent.get(o)
    ptype = env.type_of[parent] if parent is not None else None
    t = _Tally(o, o_held, frozenset() if o_held else frozenset({env.spot(o)}))
    if spec.lamp:
        t.pick_o()
        if not any(i in env.on for i in env.ids_of_type(goal.recep)):
            t.acts += 1
        t.final = _recep_spots(env, goal)
    elif spec.state:
        _state_steps(env, ctx, t, ptype)
    elif spec.movable_recep:
        _movable_steps(env, ctx, t, m)
    elif ptype != goal.recep:  # the object placed in the target, nothing more
        t.place_o(env, goal)
    slices = _slice_and_hand_steps(env, ctx, t, need_slice)
    if t.first_pick_o and not need_slice and not ctx.macros:
        c = env.enclosing_closed(o)
        if c is not None:
            t.opens.add(c)
    cur = env.spot(env.at) if env.at is not None else None
    return slices + t.picks + t.puts + t.acts + _n_open(env, ctx, t) + _finds(cur, t.pre, t.final)


def _state_steps(env: Env, ctx: _Ctx, t: _Tally, ptype: str | None) -> None:
    """Clean / heat / cool: the station's steps (a macro, or put in, switch or close it),
    then the object moved on to the target unless the station is the target."""
    goal, spec, o = ctx.goal, ctx.goal.type, t.o
    flag = getattr(env, spec.state or "")  # env.clean / env.hot / env.cool
    station = ctx.station or ""
    if o in flag:
        if ptype != goal.recep:
            t.place_o(env, goal)
        return
    if ctx.macros:
        t.pick_o()
        t.acts += 1
        t.pre.append(_spots(env, station))
        t.put_o()
        t.final = _recep_spots(env, goal)
        return
    in_station = any(env.type_of[a] == station for a in env.ancestors(o))
    if not in_station:
        t.pick_o()
        t.put_o()
        t.open_types.add(station)
    box = next((a for a in env.ancestors(o) if env.type_of[a] == station), None)
    if station == "SinkBasin":  # a running faucet cleans what is put in the sink
        t.acts += 0 if any(i in env.on for i in env.ids_of_type("Faucet")) else 1
    elif station == "Microwave":  # close it (unless closed with the object in), turn it on
        t.acts += 1 if box is not None and box not in env.opened else 2
    else:  # Fridge: close it with the object inside (open it first if it is closed)
        t.acts += 1
        if box is not None and box not in env.opened:
            t.opens.add(box)
    if goal.recep != station:
        t.picks += 1
        t.puts += 1
        t.final = _recep_spots(env, goal)
        t.open_types.add(goal.recep)
        t.pre.append(_spots(env, station) if not in_station else t.o_spot)
    else:
        t.final = _spots(env, station)


def _movable_steps(env: Env, ctx: _Ctx, t: _Tally, m: str | None) -> None:
    """The object into the movable receptacle ``m``, then ``m`` into the target."""
    goal, held = ctx.goal, env.held
    o_in_m = m is not None and env.parent.get(t.o) == m
    m_parent = env.parent.get(m) if m is not None else None
    m_in_r = m_parent is not None and env.type_of[m_parent] == goal.recep
    m_held = held == m
    if not o_in_m:
        t.pick_o()
        t.put_o()
        if m is not None and not m_held:
            t.pre.append(frozenset({env.spot(m)}))
            t.open_around(env, ctx, m)
        t.final = _recep_spots(env, goal)
    if not m_in_r and m is not None:
        if not m_held:
            t.picks += 1
            t.pre.append(frozenset({env.spot(m)}))
            t.open_around(env, ctx, m)
        t.puts += 1
        t.accounted.add(m)
        t.final = _recep_spots(env, goal)
        t.open_types.add(goal.recep)


def _slice_and_hand_steps(env: Env, ctx: _Ctx, t: _Tally, need_slice: bool) -> int:
    """Slicing (a knife fetched, the hand freed for it) and freeing the hand before the
    first pick; returns the slice steps (the picks and puts go in ``t``)."""
    held = env.held
    if not need_slice:
        if t.picks > 0 and held is not None and held not in t.accounted:
            t.puts += 1  # free the hand
        return 0
    if t.picks > 0:
        t.puts += 1  # put the knife down before picking up the slice (or the receptacle)
    if not (held is not None and base_type(env.type_of[held]) in KNIVES):
        t.picks += 1
        t.pre.append(frozenset(env.spot(k) for kt in KNIVES for k in env.ids_of_type(kt)))
        if held is not None and held not in t.accounted:
            t.puts += 1  # free the hand for the knife
    t.pre.append(t.o_spot)
    t.open_around(env, ctx, t.o)
    return 1


def _n_open(env: Env, ctx: _Ctx, t: _Tally) -> int:
    """Opens: the closed containers found on the way, and one per receptacle type to
    put into whose instances are all closed (macros open them themselves)."""
    if ctx.macros:
        return 0
    n = len(t.opens)
    have = {env.type_of[c] for c in t.opens}
    for rt in t.open_types:
        if rt in have or not props(rt)["openable"]:
            continue
        if all(i not in env.opened for i in env.ids_of_type(rt)):
            n += 1
    return n


def _cost_two(env: Env, ctx: _Ctx) -> int:
    goal = ctx.goal
    held = env.held
    knife_held = held is not None and base_type(env.type_of[held]) in KNIVES
    cur = env.spot(env.at) if env.at is not None else None
    objs = goal_objs(env, goal)
    if goal.sliced and not objs:  # slice first: a knife, the slicing (lower bound only)
        pre = [frozenset(env.spot(i) for i in env.order if _precursor(env, goal, i) and i != held)]
        n = 1
        if not knife_held:
            n += 1
            pre.append(frozenset(env.spot(k) for t in KNIVES for k in env.ids_of_type(t)))
            if held is not None:
                n += 1
        return n + _finds(cur, pre, None)
    per: dict[str, int] = {}
    rok = allowed(goal, env)[1]
    for o in objs:
        p = env.parent.get(o)
        if p is not None and env.type_of[p] == goal.recep and (rok is None or p in rok):
            per[p] = per.get(p, 0) + 1
    r = 2 - min(2, max(per.values(), default=0))
    if r == 0:
        return 0
    held_good = held in objs
    picks = r - (1 if held_good else 0)
    n = picks + r + (1 if picks > 0 and held is not None and not held_good else 0)
    if (
        not ctx.macros
        and props(goal.recep)["openable"]
        and all(i not in env.opened for i in env.ids_of_type(goal.recep))
    ):
        n += 1
    final = _recep_spots(env, goal)
    return n + (0 if cur in final else 1)


def _h(env: Env, ctx: _Ctx) -> int:
    if all(conditions(ctx.goal, env)):
        return 0
    goal = ctx.goal
    if goal.type.n_objects == 2:
        return _cost_two(env, ctx)
    pre = [i for i in env.order if _precursor(env, goal, i)]
    if goal.sliced:
        # a sliced goal uses a slice, or a whole object that will be sliced
        pre = [i for i in pre if i in env.sliced or props(env.type_of[i])["sliceable"]]
    if not pre:
        return _INF
    ms: list[str | None] = [None]
    if goal.type.movable_recep:
        mok = allowed(goal, env)[2]
        ms = [i for i in env.order if env.type_of[i] == goal.mrecep and (mok is None or i in mok)]
        if not ms:
            return _INF
    return min(_cost(env, ctx, o, m) for o in pre for m in ms)


# ---------------------------------------------------------------------------
# search
# ---------------------------------------------------------------------------


def _start(state: Scene | Env, macros: bool) -> Env:
    if isinstance(state, Env):
        e = state.copy()
        e.steps = e.invalid_steps = 0
        e.done = False
        e.max_steps = e.max_invalid = 10**9
        e.goal = None
        e.auto_open = macros or state.auto_open
        return e
    return Env(state, max_steps=10**9, max_invalid=10**9, auto_open=macros)


def _search(root: Env, goal: Goal, types: set[str], macros: bool, max_nodes: int, max_depth: int):
    ctx = _Ctx(goal, macros)
    counter = itertools.count()
    h0 = _h(root, ctx)
    if h0 >= _INF:
        return None
    frontier: list[tuple[int, int, int, Env, tuple[Skill, ...]]] = [(h0, 0, next(counter), root, ())]
    best = {_key(root): 0}
    nodes = 0
    while frontier:
        _, neg_g, _, env, plan = heapq.heappop(frontier)
        g = -neg_g
        if best.get(_key(env), _INF) < g:
            continue  # a shorter way here was found after this entry was queued
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
            k = _key(nxt)
            if best.get(k, _INF) <= g + 1:
                continue
            h = _h(nxt, ctx)
            if h >= _INF:
                continue
            best[k] = g + 1
            # ties on f: deeper first (reaches a goal sooner; still optimal)
            heapq.heappush(frontier, (g + 1 + h, -(g + 1), next(counter), nxt, (*plan, skill)))
    return None


def _replays(start: Env, goal: Goal, plan: list[Skill]) -> bool:
    env = start.copy()
    return all(env.step(s).ok for s in plan) and satisfied(goal, env)


def expert_plan(
    task_or_goal: Any,
    scene: Scene | Env | None = None,
    max_nodes: int = 200_000,
    max_depth: int = 40,
    macros: bool = False,
) -> list[Skill] | None:
    """A shortest valid plan (list of type-level skills) from the task's start state,
    or ``None`` if there is none within ``max_depth`` steps / ``max_nodes`` expanded
    states.

    ``task_or_goal``: a :class:`~groundrl.sim.tasks.Task` (its scene is the start) or a
    :class:`~groundrl.sim.goals.Goal` with ``scene``; ``scene`` may also be a live
    :class:`~groundrl.sim.world.Env` to plan from mid-episode (it is not changed).
    ``macros=True`` plans for vocabularies with clean / heat / cool macros and no
    open / close (Reinforced Reasoning's): the world then opens containers on put /
    pick up.
    """
    goal = task_or_goal if isinstance(task_or_goal, Goal) else task_or_goal.goal
    state = scene if scene is not None else task_or_goal.scene
    full = _start(state, macros)
    if satisfied(goal, full):
        return []
    types = relevant_types(goal, full)
    plan = _search(_restrict(full, types), goal, types, macros, max_nodes, max_depth)
    if plan is not None and not _replays(full, goal, plan):  # pragma: no cover - a restriction bug
        plan = _search(full, goal, types, macros, max_nodes, max_depth)
    return plan
