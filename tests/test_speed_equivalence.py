"""The optimised hot paths of the rule rewards give the same values (and reasons) as
straightforward reference implementations written here, on random inputs.

Each reference is the plain reading of the rule (regex normalisation, ``ast.literal_eval``
of every gold, ``json.loads`` per call, a Hungarian call per label, …) — the code the
fast paths replaced — so a speed-up can never change a value.
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections import defaultdict

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linear_sum_assignment

from groundrl.parse.plans import normalize_action_name, reinforced_plan_digest
from groundrl.parse.scores import parse_pairwise_verdict
from groundrl.parse.structured import parse_json_object, parse_literal, parse_literal_list
from groundrl.rewards.perception import detection_reward
from groundrl.rewards.planning import load_action_map, reinforced_accuracy, reinforced_format
from groundrl.rewards.preference import proxy_format
from groundrl.types import Score

SETTINGS = settings(
    derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# Characters that stress normalisation and literal parsing: every kind of Unicode
# whitespace (incl. \x1c-\x1f, \x85, NBSP, line/paragraph separators), a zero-width
# space (not whitespace), case-folding specials (ß, İ, ſ, Kelvin sign), quotes,
# backslash, control characters and a NUL.
ODD = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2028\u2029\u202f\u3000\u200b\ufeffßİſKΣς'\"\\\x00\x01\x7f"
TEXT = st.text(alphabet=st.sampled_from(list("abcAB Cdz1_-" + ODD)), max_size=30)


# --- normalize_action_name ------------------------------------------------------


def ref_normalize(s):
    if not isinstance(s, str):
        return ""
    return re.sub(r"\s+", " ", s).strip().casefold()


@SETTINGS
@given(st.one_of(TEXT, st.text(max_size=30), st.none(), st.integers()))
def test_normalize_action_name_equals_regex_reference(s):
    assert normalize_action_name(s) == ref_normalize(s)
    assert normalize_action_name(s) == ref_normalize(s)  # again: from the cache


def test_normalize_action_name_every_unicode_whitespace():
    # str.split() and the regex \s must agree on every code point
    for cp in range(0x3100):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF:
            continue
        s = f"a{ch}{ch}b{ch}"
        assert normalize_action_name(s) == ref_normalize(s), hex(cp)


# --- literal lists (gold plans, <actions>) ------------------------------------------

STRINGS = st.text(
    alphabet=st.sampled_from(list("ab xyZ,[]'\"\\#é苹") + ["\x00", "\x1f", "\ud800"]), max_size=8
)
NESTED = st.recursive(STRINGS, lambda inner: st.lists(inner, max_size=4), max_leaves=12)


def render(value, style):
    """A Python-literal rendering of nested lists of strings: repr, JSON, or hand-spaced."""
    if style == 0:
        return repr(value)
    if style == 1:
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, str):
        return "'" + value + "'"  # may be invalid on purpose (quotes / backslashes inside)
    sep = [",", ", ", " , ", ",  "][len(value) % 4]
    tail = "," if len(value) % 3 == 1 else ""
    return "[" + sep.join(render(v, style) for v in value) + tail + "]"


def ref_literal(s, collapse):
    if collapse:
        s = re.sub(r"\s+", " ", s)
    s = s.strip()
    if not s or len(s) > 100_000:
        return None
    try:
        return ast.literal_eval(s)
    except Exception:
        return None


@SETTINGS
@given(NESTED, st.integers(0, 2), st.booleans())
def test_parse_literal_equals_literal_eval(value, style, collapse):
    text = render(value, style)
    got = parse_literal(text, collapse_whitespace=collapse)
    want = ref_literal(text, collapse)
    assert got.value == want
    assert type(got.value) is type(want)
    if want is not None and isinstance(want, list):
        assert parse_literal_list(text, collapse_whitespace=collapse).value == want


@SETTINGS
@given(st.text(alphabet=st.sampled_from(list("[]'\", a\\\x00 ")), max_size=40))
def test_parse_literal_equals_literal_eval_on_token_soup(text):
    assert parse_literal(text).value == ref_literal(text, False)


# --- JSON objects ---------------------------------------------------------------------


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=10,
)


@SETTINGS
@given(JSON_VALUES, st.sampled_from(["", " ", "\n", "\ufeff", " x", "}", "\x0c"]), st.integers(0, 3))
def test_parse_json_object_equals_json_loads(value, pad, cut):
    text = json.dumps(value)
    text = (pad + text + pad) if cut == 0 else (text[:-cut] if cut < 3 else text + pad)
    stripped = text.strip()
    try:
        want = json.loads(stripped) if stripped else None
    except (ValueError, RecursionError):
        want = None
    got = parse_json_object(text)
    assert got.value == (want if isinstance(want, dict) else None)


def ref_strict_error(text):
    """parse_json_object's strict error, read off json.loads itself (the form before
    the scanner's exception was turned into the message directly)."""
    stripped = text.strip()
    if not stripped:
        return "empty completion"
    try:
        value = json.loads(stripped)
    except RecursionError:
        error = "JSON nested too deeply"
    except ValueError as e:
        error = f"invalid JSON: {str(e)[:80]}"
    else:
        if isinstance(value, dict):
            return ""
        if value is not None:
            return f"JSON is a {type(value).__name__}, not an object"
        error = ""
    return error + " (strict mode: the whole completion must be one JSON object)"


JSON_SOUP = st.lists(
    st.sampled_from([*'{}[]:,"\\ \n\tax1-.e\u00e9', "true", "null", '"k"']), max_size=25
).map("".join)


@SETTINGS
@given(
    st.one_of(
        JSON_SOUP,
        JSON_SOUP.map(lambda t: "{" + t),
        st.builds(
            lambda v, cut, tail: json.dumps(v)[: len(json.dumps(v)) - cut] + tail,
            JSON_VALUES,
            st.integers(0, 3),
            st.sampled_from(["", " x", "\n}", "  {}", "]"]),
        ),
    )
)
def test_parse_json_object_error_equals_json_loads_message(text):
    """A failed scan's reason is built from the scanner's exception (one scan, not a
    second json.loads): it must read exactly as json.loads's own message."""
    got = parse_json_object(text)
    assert got.error == ref_strict_error(text)
    assert reinforced_plan_digest(text).error == (got.error or None)


def test_parse_json_object_error_hand_cases():
    # hand-written: json.loads's words and positions
    assert parse_json_object('{"a": 1} x').error.startswith(
        "invalid JSON: Extra data: line 1 column 10 (char 9)"
    )
    assert parse_json_object('{"a": }').error.startswith(
        "invalid JSON: Expecting value: line 1 column 7 (char 6)"
    )
    assert parse_json_object('{"a": 1,\n "b" 2}').error.startswith(
        "invalid JSON: Expecting ':' delimiter: line 2 column 6 (char 14)"
    )
    assert parse_json_object("[" * 100_000).error.startswith(("JSON nested too deeply", "invalid JSON"))


# --- Reinforced Reasoning format / accuracy -------------------------------------------

KEYS = ("reasoning_and_reflection", "visual_state_description", "language_plan", "executable_plan")
NAMES = [
    "goto fridge",
    "Goto  Fridge",
    " open\tfridge ",
    "OPEN FRIDGE",
    "pick up the Apple",
    "",
    "   ",
    "ß Straße",
]
STEP = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "action_id": st.one_of(st.integers(-1, 6), st.booleans(), st.sampled_from(["1", "x"]), st.none()),
            "action_name": st.one_of(st.sampled_from(NAMES), TEXT, st.integers(0, 3), st.none()),
        },
    ),
    st.integers(),
    st.just("goto fridge"),
    st.lists(st.integers(), max_size=2),
)
PLAN = st.one_of(st.lists(STEP, max_size=8), st.just("goto fridge"), st.none(), st.just({}))


@st.composite
def completions(draw):
    keys = draw(st.lists(st.sampled_from(KEYS[:3]), unique=True))
    obj = {k: "x" for k in keys}
    plan = draw(PLAN)
    if plan is not None:
        obj["executable_plan"] = plan
    text = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    form = draw(st.integers(0, 5))
    if form == 1:
        text = f"```json\n{text}\n```"
    elif form == 2:
        text = text[: draw(st.integers(0, len(text)))]
    elif form == 3:
        text = f"Plan: {text} done"
    elif form == 4:
        text = "  \n" + text + "\n "
    return text


def ref_format(completion, action_map, lenient):
    r = parse_json_object(completion, lenient=lenient)  # the parser itself is checked above
    if not r.ok:
        return Score("format", 0.0, r.error)
    obj = r.value
    keys = 0.125 if all(k in obj for k in KEYS) else 0.0
    plan = obj.get("executable_plan")
    reasons = [] if keys else ["missing key(s): " + ", ".join(k for k in KEYS if k not in obj)]
    if not isinstance(plan, list) or not plan:
        reasons.append(
            "executable_plan is empty" if isinstance(plan, list) else "executable_plan is not a list"
        )
        return Score("format", keys, "; ".join(reasons))
    n = len(plan)

    def valid(s):
        a = s.get("action_id") if isinstance(s, dict) else None
        return (
            isinstance(s, dict)
            and isinstance(a, int)
            and not isinstance(a, bool)
            and isinstance(s.get("action_name"), str)
        )

    good = [s for s in plan if valid(s)]
    if action_map is None:
        reasons.append("no action map: map term 0")
        map_term = 0.0
    else:
        matched = 0
        for s in good:
            name = action_map.get(s["action_id"])
            if name is None:
                name = action_map.get(str(s["action_id"]))
            if ref_normalize(name) == ref_normalize(s["action_name"]) != "":
                matched += 1
        map_term = 0.25 * matched / n
        if matched < n:
            reasons.append(f"{matched}/{n} steps match the action map")
    if len(good) < n:
        reasons.append(f"{len(good)}/{n} steps valid")
    return Score("format", keys + 0.125 * len(good) / n + map_term, "; ".join(reasons))


def ref_accuracy(completion, gold, lenient):
    r = parse_json_object(completion, lenient=lenient)  # the completion first, as released
    if not r.ok:
        return Score("accuracy", 0.0, r.error)
    if isinstance(gold, str):
        gold = ref_literal(gold, True)
    if isinstance(gold, tuple):
        gold = list(gold)
    if not isinstance(gold, list):
        return Score("accuracy", 0.0, "gold is not a list of action names")
    names = [ref_normalize(g) if isinstance(g, str) else "\x00" for g in gold]
    if not names:
        return Score("accuracy", 0.0, "empty gold plan")
    plan = r.value.get("executable_plan")
    if not isinstance(plan, list):
        return Score("accuracy", 0.0, "executable_plan is not a list")
    c = 0
    for step, g in zip(plan, names, strict=False):
        name = step.get("action_name") if isinstance(step, dict) else None
        if not isinstance(name, str) or ref_normalize(name) != g:
            break
        c += 1
    t = len(names)
    v = c * (c + 1) / (t * (t + 1))
    reason = "" if c == t else f"prefix {c}/{t}"
    if c == t and len(plan) > t > 1:
        reason = f"whole gold plan matched ({t}/{t}); the {len(plan) - t} step(s) after it are not scored (prefix accuracy)"
    if t == 1 and len(plan) > 1:
        v -= 0.25
        reason = (reason + "; " if reason else "") + f"single-step gold, {len(plan)} steps predicted: -0.25"
    return Score("accuracy", v, reason)


MAPS = st.one_of(
    st.none(),
    st.dictionaries(st.integers(-1, 6), st.sampled_from(NAMES), max_size=6),
    # the read-only ActionMap matches by its precomputed (id, name) pairs
    st.dictionaries(st.integers(-1, 6), st.sampled_from(NAMES), max_size=6).map(load_action_map),
    st.dictionaries(
        st.sampled_from(["0", "1", "2", "5"]), st.one_of(st.sampled_from(NAMES), st.integers()), max_size=4
    ),
)
GOLDS = st.one_of(
    st.lists(st.one_of(st.sampled_from(NAMES), st.integers()), max_size=5),
    st.lists(st.sampled_from(NAMES), max_size=5).map(repr),
    st.lists(st.sampled_from(NAMES), max_size=5).map(lambda g: json.dumps(g)),
    st.sampled_from(["", "[", "not a list", "('goto fridge',)", "['a',]", "[1, 2]"]),
    TEXT,
)


@SETTINGS
@given(completions(), MAPS, GOLDS, st.booleans())
def test_reinforced_rewards_equal_reference(completion, action_map, gold, lenient):
    for _ in range(2):  # cold, then from the digest / gold caches
        assert reinforced_format(completion, action_map, lenient=lenient) == ref_format(
            completion, action_map, lenient
        )
        assert reinforced_accuracy(completion, gold, lenient=lenient) == ref_accuracy(
            completion, gold, lenient
        )


def test_digest_cache_is_bounded_and_clearable():
    from groundrl.parse.plans import _DIGESTS, _DIGESTS_MAX

    reinforced_plan_digest.cache_clear()
    texts = [json.dumps({"executable_plan": [], "i": i}) for i in range(5 * _DIGESTS_MAX)]
    for t in texts:
        reinforced_plan_digest(t)
    assert sum(len(g) for g in _DIGESTS[0]) <= 2 * _DIGESTS_MAX
    # the most recent _DIGESTS_MAX are always kept
    assert all(t in _DIGESTS[0][0] or t in _DIGESTS[0][1] for t in texts[-_DIGESTS_MAX:])
    reinforced_plan_digest.cache_clear()
    assert not any(_DIGESTS[0]) and not any(_DIGESTS[1])


# --- Score construction ---------------------------------------------------------------


@SETTINGS
@given(
    st.one_of(st.none(), st.floats(), st.integers(-(10**6), 10**6), st.booleans(), st.just(np.float32(0.5))),
    st.text(max_size=5),
)
def test_score_equals_reference(value, reason):
    s = Score("p", value, reason)
    if value is None:
        assert s.value is None and s.reason == reason
        return
    v = float(value)
    if math.isfinite(v):
        assert s.value == v and type(s.value) is float and s.reason == reason
    else:
        assert s.value == 0.0
        assert s.reason == (reason + "; " if reason else "") + f"non-finite value {v!r} replaced by 0"


# --- Proxy-GRM verdict and format ---------------------------------------------------------

TAGGY = st.lists(
    st.sampled_from(
        [
            "<answer>",
            "</answer>",
            "<ANSWER x=1>",
            "</ answer >",
            "< answer>",
            "1",
            "2",
            "3",
            "a",
            " ",
            "\n",
            "<rubric>",
            "</rubric>",
            "<rubric_item>",
            "<rubric id=1>",
            "<eval>",
            "</eval>",
            "<think>",
            "</think>",
            "<summary>",
            "</summary>",
            "<",
            ">",
            "/",
        ]
    ),  # fmt: skip
    max_size=14,
).map("".join)


def ref_verdict(text):
    if not isinstance(text, str):
        return None
    m = re.search(r"<\s*answer(?:\s[^<>]*)?>(.*?)</\s*answer\s*>", text, re.IGNORECASE | re.DOTALL)
    chars = re.sub(r"[^0-9A-Za-z]+", "", m.group(1).strip() if m else text)
    has1, has2 = "1" in chars, "2" in chars
    return None if has1 == has2 else (1 if has1 else 2)


def ref_proxy_format(completion):
    # the released verify_format: the rubric layout counts the prefix "<rubric"
    s = completion.replace("\n", "")
    for a, b, c in (("rubric", "eval", "answer"), ("think", "summary", "answer")):
        first = "<rubric" if a == "rubric" else f"<{a}>"
        if (
            re.fullmatch(rf"<{a}>.*?</{a}><{b}>.*?</{b}><{c}>.*?</{c}>", s, re.DOTALL)
            and s.count(first) == s.count(f"<{b}>") == s.count(f"<{c}>") == 1
        ):
            return 1.0
    return 0.0


@SETTINGS
@given(st.one_of(TAGGY, st.none(), st.integers()))
def test_pairwise_verdict_equals_reference(text):
    assert parse_pairwise_verdict(text).value == ref_verdict(text)


@SETTINGS
@given(TAGGY)
def test_proxy_format_equals_reference(text):
    assert proxy_format(text).value == ref_proxy_format(text)


# --- detection ------------------------------------------------------------------------------

COORD = st.one_of(st.integers(0, 60), st.floats(0, 60, allow_nan=False), st.just("7"), st.booleans())
BOX = st.fixed_dictionaries(
    {
        "bbox_2d": st.lists(COORD, min_size=3, max_size=5),
        "label": st.sampled_from(["mug", "Mug ", "cup", None]),
    }
)


def ref_box(b):
    if not isinstance(b, (list, tuple)) or len(b) != 4:
        return None
    if any(isinstance(c, bool) or not isinstance(c, (int, float)) for c in b):
        return None
    v = [float(c) for c in b]
    return tuple(v) if all(math.isfinite(c) for c in v) else None


def ref_area(b):
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def ref_iou(a, b):
    if a[2] <= a[0] or a[3] <= a[1] or b[2] <= b[0] or b[3] <= b[1]:
        return 0.0
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    return iw * ih / (ref_area(a) + ref_area(b) - iw * ih)


def ref_detection(pred, gold):
    """Python lists of box dicts only: every box validated per use, a Hungarian call per label."""

    def read(items):
        out, bad = [], 0
        for it in items:
            b = ref_box(it["bbox_2d"])
            if b is None:
                bad += 1
            else:
                lab = it["label"]
                out.append((None if lab is None else " ".join(str(lab).casefold().split()), b))
        return out, bad

    gboxes, gbad = read(gold)
    pboxes, pbad = read(pred)
    if not gboxes:
        return None if gbad else (1.0 if not pboxes and not pbad else 0.0)
    den = sum(ref_area(b) for _, b in gboxes)
    if den <= 0:
        return None
    n_pred = len(pboxes) + pbad
    if n_pred == 0:
        return 0.0
    use = any(lab is not None for lab, _ in gboxes)
    by_g, by_p = defaultdict(list), defaultdict(list)
    for lab, b in gboxes:
        by_g[lab if use else None].append(b)
    for lab, b in pboxes:
        by_p[lab if use else None].append(b)
    num = 0.0
    for lab, gs in by_g.items():
        ps = by_p.get(lab)
        if ps:
            w = np.array([[ref_area(g) * ref_iou(g, p) for p in ps] for g in gs])
            r, c = linear_sum_assignment(w, maximize=True)
            num += float(w[r, c].sum())
    return num / den * min(1.0, len(gboxes) / n_pred)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(BOX, min_size=1, max_size=4), st.lists(BOX, max_size=4))
def test_detection_equals_reference(gold, pred):
    # boxes from x1, y1 plus a size so most are proper boxes
    def fix(items):
        out = []
        for it in items:
            b = list(it["bbox_2d"])
            if len(b) == 4 and all(type(c) in (int, float) for c in b):
                b = [b[0], b[1], b[0] + b[2], b[1] + b[3]]
            out.append({"bbox_2d": b, "label": it["label"]})
        return out

    gold, pred = fix(gold), fix(pred)
    want = ref_detection(pred, gold)
    got = detection_reward(pred, gold).value
    assert got == want
    if all(it["label"] is not None for it in gold + pred):
        # the same through text (the gold-string cache) — values only, JSON keeps floats
        assert detection_reward(json.dumps(pred), json.dumps(gold)).value == want


# --- EmbodiedBrain planning P/R/F1 --------------------------------------------------------

VERBS = [
    "Pick",
    "pick up",
    "Grasp",
    "Place",
    "put",
    "Navigate",
    "find",
    "Open",
    "OPEN ",
    "Wash",
    "rinse",
    "Cut",
]
OBJECTS = ["Apple", "the apple", "an Apple", "a  Mug", "the a apple", "Fridge", "mug", "apples"]
ITEM = st.one_of(
    st.lists(st.sampled_from(OBJECTS), max_size=2).flatmap(
        lambda objs: st.sampled_from(VERBS).map(lambda v: [v, *objs])
    ),
    st.sampled_from([["Pick", 1], [], "Pick Apple", [None, "x"], ("Open", "Fridge")]),
)


def ref_items(text):
    def as_list(s):
        v = ref_literal(s, True)
        v = list(v) if isinstance(v, tuple) else v
        return v if isinstance(v, list) else None

    m = re.search(r"<\s*actions(?:\s[^<>]*)?>(.*?)</\s*actions\s*>", text, re.IGNORECASE | re.DOTALL)
    got = as_list(m.group(1)) if m else None
    return got if got is not None else as_list(text)


def ref_canonical(items):
    from groundrl.rewards.planning import DEFAULT_VERB_SYNONYMS, LOCOMOTION_VERBS

    def obj(x):
        s = ref_normalize(x)
        for art in ("the ", "a ", "an "):
            if s.startswith(art):
                s = s[len(art) :]
        return s

    out, bad = [], 0
    for it in items if isinstance(items, list) else []:
        if not isinstance(it, (list, tuple)) or not it or not isinstance(it[0], str):
            bad += 1
            continue
        v = ref_normalize(it[0])
        v = DEFAULT_VERB_SYNONYMS.get(v, v)
        if v in LOCOMOTION_VERBS:
            continue
        if not all(isinstance(x, str) for x in it[1:]):
            bad += 1
            continue
        out.append((v, *(obj(x) for x in it[1:])))
    return out, bad


def ref_prf(pred, gold):
    g = ref_canonical(ref_items(gold))[0]
    if not g:
        return None
    p, bad = ref_canonical(ref_items(pred))
    if not p:
        return 0.0, 0.0
    m = np.array([[a == b for b in g] for a in p], dtype=bool)
    r, c = linear_sum_assignment(m.astype(np.int8), maximize=True)
    quantity = int(m[r, c].sum())
    dp = [[0] * (len(g) + 1) for _ in range(len(p) + 1)]
    for i in range(len(p)):
        for j in range(len(g)):
            dp[i + 1][j + 1] = dp[i][j] + 1 if m[i, j] else max(dp[i][j + 1], dp[i + 1][j])
    out = []
    for k in (quantity, dp[len(p)][len(g)]):
        pr, rc = k / (len(p) + bad), k / len(g)
        out.append(2 * pr * rc / (pr + rc) if pr + rc > 0 else 0.0)
    return tuple(out)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(ITEM, max_size=7), st.lists(ITEM, max_size=7), st.integers(0, 2))
def test_plan_f1_equals_reference(pred_items, gold_items, form):
    from groundrl.rewards.planning import plan_f1, plan_order_f1

    wrap = ["<response>ok</response><actions>{}</actions>", "{}", "<ACTIONS>\n{}\n</actions> trailing"][form]
    pred, gold = wrap.format(repr(pred_items)), "<actions>" + repr(gold_items) + "</actions>"
    want = ref_prf(pred, gold)
    for _ in range(2):  # cold, then from the pair / gold caches
        q, o = plan_f1(pred, gold).value, plan_order_f1(pred, gold).value
        assert (q, o) == ((None, None) if want is None else want)


# --- EmbodiedBrain plan lines (the format reward's plan-type term) ------------------------

PLAN_SOUP = st.lists(
    st.sampled_from(
        list("1.[] \n-a٣") + ["23", "Navigate", "Manipulate", "x_1", "1.[Navigate]", "3.\n[a_1]"]
    ),
    max_size=24,
).map("".join)


def ref_plan_lines(text):
    m = re.search(r"<\s*plans(?:\s[^<>]*)?>(.*?)</\s*plans\s*>", text, re.IGNORECASE | re.DOTALL)
    return re.findall(r"\d+\.\s*\[(\w+)\]", m.group(1)) if m else None  # the released pattern


@SETTINGS
@given(PLAN_SOUP, st.sampled_from(["<plans>{}</plans>", "x<PLANS >{}</plans>y", "{}", "<plans>{}"]))
def test_plan_lines_equal_released_pattern(body, wrap):
    from groundrl.parse.plans import plan_lines

    text = wrap.format(body)
    assert plan_lines(text) == ref_plan_lines(text)


def test_plan_lines_long_digit_runs_hand_cases():
    from groundrl.parse.plans import plan_lines

    for body in [
        "1" * 5000 + ".[Navigate]",
        "step1.[Navigate]x2.[Open]",
        "12" * 3000 + " 3.[Manipulate] 4. [Navigate]",
        "9" * 4000,
    ]:
        text = f"<plans>{body}</plans>"
        assert plan_lines(text) == ref_plan_lines(text)


# --- EmbodiedBrain P/R/F1 without the matrix (default matcher) -----------------------------

ACTIONS = st.lists(
    st.sampled_from([("pick", "a"), ("pick", "b"), ("place", "a", "t"), ("cut", "a")]), max_size=60
)


@SETTINGS
@given(ACTIONS, ACTIONS.filter(bool))
def test_equality_scores_equal_matrix_reference(p, g):
    from groundrl.rewards.planning import _equality_scores

    m = np.array([[a == b for b in g] for a in p], dtype=bool).reshape(len(p), len(g))
    quantity = 0
    if p:
        r, c = linear_sum_assignment(m.astype(np.int8), maximize=True)
        quantity = int(m[r, c].sum())
    dp = [[0] * (len(g) + 1) for _ in range(len(p) + 1)]
    for i in range(len(p)):
        for j in range(len(g)):
            dp[i + 1][j + 1] = dp[i][j] + 1 if m[i, j] else max(dp[i][j + 1], dp[i + 1][j])
    assert _equality_scores(p, g) == (quantity, dp[len(p)][len(g)])


# --- reinforced_planning rubric: per sample the reward functions ---------------------------

RR_SAMPLES = st.lists(
    st.tuples(
        completions(),
        st.fixed_dictionaries(
            {}, optional={"gold": GOLDS, "action_map": st.sampled_from([{0: "goto fridge"}, "x"])}
        ),
    ),
    max_size=6,
)


@SETTINGS
@given(RR_SAMPLES, st.booleans())
def test_reinforced_planning_rubric_equals_reward_functions(samples, lenient):
    from groundrl.recipes import get_recipe

    amap = load_action_map({0: "goto fridge", 1: "open fridge"})
    rubric = get_recipe("reinforced_planning").rubric(action_map=amap, lenient=lenient)
    got = rubric.score_batch([c for c, _ in samples], [s for _, s in samples])
    for (c, s), v in zip(samples, got, strict=True):
        m = s.get("action_map", amap)
        fmt = (
            reinforced_format(c, load_action_map(m), lenient=lenient)
            if isinstance(m, dict)
            else Score("format", 0.0, "")
        )
        if isinstance(m, str):  # a name no action_maps option configured: refused with a reason
            assert v.parts["format"].value == 0.0 and "configured name" in v.parts["format"].reason
        else:
            assert v.parts["format"] == fmt
        acc = (
            reinforced_accuracy(c, s["gold"], lenient=lenient)
            if "gold" in s
            else Score("accuracy", 0.0, "missing field 'gold'")
        )
        assert v.parts["accuracy"] == acc
        assert v.total == v.parts["format"].value + acc.value


# --- the orjson fast path of the plan digest: json.loads's values on its edge cases ---------


def _plan(aid, name='"goto fridge"', extra=""):
    return f'{{{extra}"executable_plan": [{{"action_id": {aid}, "action_name": {name}}}]}}'


ORJSON_EDGES = [
    _plan(123456789012345678901234567890),  # json: an int (a valid step); orjson: a float
    _plan(-9223372036854775809),
    _plan(18446744073709551615),
    _plan(18446744073709551616),
    _plan("1.0"),
    _plan("1E400"),
    _plan(0, '"\\ud800"'),  # a lone surrogate escape: json only
    _plan(0, extra='"language_plan": NaN, '),
    _plan(0, extra='"language_plan": -Infinity, '),
    _plan(0, extra='"x": ' + "[" * 600 + "]" * 600 + ", "),  # deep: both decoders' limits
    _plan(0, extra='"x": ' + "[" * 1010 + "]" * 1010 + ", "),  # json: too deep; orjson: fine
    _plan(0, extra='"x": ' + "[" * 2000 + "]" * 2000 + ", "),
    '{"executable_plan": [], "executable_plan": [{"action_id": 0, "action_name": "goto fridge"}]}',
    "\ufeff" + _plan(0),
    _plan(0) + " x",
    _plan(0, '"a\\u0000b"'),
    _plan(0, '"tab\there"'),  # a raw control character: refused by both
    _plan(0, '"\ud800"'),  # a lone surrogate in the text itself
]


def test_plan_digest_fast_path_equals_json_on_edge_cases():
    amap = {0: "goto fridge", 123456789012345678901234567890: "goto fridge"}
    for text in ORJSON_EDGES:
        for lenient in (False, True):
            reinforced_plan_digest.cache_clear()
            got = reinforced_format(text, amap, lenient=lenient)
            assert got == ref_format(text, amap, lenient), text[:60]
            got = reinforced_accuracy(text, ["goto fridge"], lenient=lenient)
            assert got == ref_accuracy(text, ["goto fridge"], lenient), text[:60]
