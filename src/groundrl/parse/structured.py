"""JSON objects and Python-literal values from model output.

Python literals go through :func:`ast.literal_eval` only, **never** ``eval``: the
published EmbodiedBrain reward code calls ``eval`` on model output, which lets a
completion run arbitrary code inside the trainer.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from typing import Any

from groundrl.parse.result import Parsed, fail

# literal_eval builds an AST first, at about 0.5 µs a character: cap the input so a
# hostile completion cannot spend seconds (or the recursion limit) in the parser. [ours:
# 32,768 characters is ~8k tokens, four times a 200-action plan; at 100,000 a 100 KB
# tuple list took 0.05 s per call and three calls per completion (issue 30)]
MAX_LITERAL_CHARS = 32_768
# Lenient JSON scans candidate "{" positions; bound the attempts on "{{{{{…".
MAX_JSON_CANDIDATES = 64

# (Nested) lists of plain quoted strings — what gold plans and <actions> lists are — are
# read by json.loads after swapping the quotes: on this token set (brackets, commas,
# spaces, strings with no quote, backslash, control character or surrogate inside) a
# text JSON accepts means the same list to ast.literal_eval, at a tenth of the cost.
# Anything else (trailing commas, numbers, tuples, escapes) goes to ast.literal_eval.
_PLAIN = r"[^'\"\\\x00-\x1f\x7f\ud800-\udfff]*"
_STR_LIST_RE = re.compile(rf"\[(?:[\[\], ]|'{_PLAIN}'|\"{_PLAIN}\")*")
# Blanks possessive: the content scan (.*?) runs to the text's end when no ``` closes, and
# with backtracking blanks it re-ran once per blank given back ('```json' + spaces was
# quadratic, issue 41). A blank given back could only move into a content that needs the
# same closing ```, so where the possessive try fails every other does: same matches.
_FENCE_RE = re.compile(r"```[ \t]*+(?:json|JSON)?[ \t]*+\r?\n?(.*?)```", re.DOTALL)
# Both are CPython's json internals, absent from typeshed (hence the two ignores).
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # what json.loads runs, same defaults
_JSON_WS = json.decoder.WHITESPACE.match  # type: ignore[attr-defined]  # json.loads' whitespace skip


def _loads(text: str) -> Parsed:
    try:
        return Parsed(json.loads(text))
    except RecursionError:
        return fail("JSON nested too deeply")
    except (ValueError, TypeError) as e:
        return fail(f"invalid JSON: {str(e)[:80]}")


def scan_object_detail(stripped: str) -> tuple[dict[str, Any] | None, str | None]:
    """``json.loads(stripped)`` when that is a JSON object, with the reason when it is
    not; never raises. The fast path of :func:`parse_json_object`.

    ``json.loads`` without its Python layers: the same C scanner from position 0, and
    the whole text (already ``str.strip()``-ped, so no JSON whitespace at either end)
    must be consumed. Returns ``(object, None)``; ``(None, error)`` with the error
    :func:`parse_json_object` gives for this text (``json.loads``'s own message, built
    from the scanner's exception as ``json.loads`` builds it, so a failed text is
    scanned once, not twice); or ``(None, None)`` when the text does not start with
    ``{`` (the caller asks ``json.loads``).
    """
    if stripped[:1] != "{":
        return None, None
    try:
        value, end = _SCAN(stripped, 0)
    except StopIteration as e:  # a nested value that cannot start: json.loads says so
        return None, _invalid(json.JSONDecodeError("Expecting value", stripped, e.value))
    except RecursionError:
        return None, "JSON nested too deeply"
    except ValueError as e:
        return None, _invalid(e)
    if end != len(stripped):
        end = _JSON_WS(stripped, end).end()  # json.loads skips JSON whitespace first
        return None, _invalid(json.JSONDecodeError("Extra data", stripped, end))
    return value, None  # starts with "{": the scanner's value is a dict


def _invalid(e: Exception) -> str:
    return f"invalid JSON: {str(e)[:80]}"


def parse_json_object(text: Any, lenient: bool = False) -> Parsed:
    """Parse a completion that must be one JSON object.

    Strict (default): ``json.loads(text.strip())`` must give a ``dict``.
    Lenient: if strict fails, also accept exactly one fenced code block
    (```` ```json … ``` ```` or a bare ```` ``` ````) holding an object, and
    otherwise the first ``{…}`` in surrounding prose that decodes as an object.
    """
    if not isinstance(text, str):
        return fail(f"completion is {type(text).__name__}, not text")
    stripped = text.strip()
    if not stripped:
        return fail("empty completion")
    return parse_stripped_object(stripped, lenient, *scan_object_detail(stripped))


def parse_stripped_object(
    stripped: str, lenient: bool, obj: dict[str, Any] | None, error: str | None
) -> Parsed:
    """The rest of :func:`parse_json_object` after :func:`scan_object_detail` of the
    stripped, non-empty text gave ``(obj, error)``."""
    if obj is not None:
        return Parsed(obj)
    if error is None:  # not an object's "{": what is it?
        try:
            value = json.loads(stripped)
        except RecursionError:
            error = "JSON nested too deeply"
        except (ValueError, TypeError) as e:
            error = _invalid(e)
        else:
            if isinstance(value, dict):
                return Parsed(value)
            if value is not None:
                return fail(f"JSON is a {type(value).__name__}, not an object")
            error = ""  # "null": no value, as in _loads
    if not lenient:
        return fail(error + " (strict mode: the whole completion must be one JSON object)")
    fences = _FENCE_RE.findall(stripped)
    if len(fences) > 1:
        return fail(f"{len(fences)} fenced blocks; expected one")
    if len(fences) == 1:
        inner = _loads(fences[0].strip())
        if inner.ok and isinstance(inner.value, dict):
            return inner
        return fail("fenced block is not a JSON object" + (f": {inner.error}" if inner.error else ""))
    decoder = json.JSONDecoder()
    pos = stripped.find("{")
    tries = 0
    while pos != -1 and tries < MAX_JSON_CANDIDATES:
        tries += 1
        try:
            obj, _ = decoder.raw_decode(stripped, pos)
        except RecursionError:
            return fail("JSON nested too deeply")
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return Parsed(obj)
        pos = stripped.find("{", pos + 1)
    return fail("no JSON object found")


def parse_literal(text: Any, collapse_whitespace: bool = False) -> Parsed:
    """``ast.literal_eval`` of ``text`` (stripped), total: any failure is a reason.

    ``collapse_whitespace`` first replaces every run of whitespace by one space (the
    EmbodiedBrain reward does this before parsing an ``<actions>`` list, so a list
    broken over lines still parses). Longer than :data:`MAX_LITERAL_CHARS` after that, or
    four times as long before it, is a reason, not a parse.
    """
    if isinstance(text, (list, tuple, dict)):
        return Parsed(text)
    if not isinstance(text, str):
        return fail(f"value is {type(text).__name__}, not text")
    if len(text) > 4 * MAX_LITERAL_CHARS:  # even padded with whitespace: refuse before collapsing
        return fail(f"literal longer than {MAX_LITERAL_CHARS} characters")
    # " ".join(split()) is re.sub(r"\s+", " ", text).strip() (str.split and the regex \s
    # agree on whitespace; tests/test_speed_equivalence.py), several times faster
    s = " ".join(text.split()) if collapse_whitespace else text.strip()
    if not s:
        return fail("empty literal")
    if len(s) > MAX_LITERAL_CHARS:
        return fail(f"literal longer than {MAX_LITERAL_CHARS} characters")
    if s[0] == "[" and _STR_LIST_RE.fullmatch(s):
        try:
            return Parsed(json.loads(s.replace("'", '"')))
        except (ValueError, RecursionError):
            pass  # e.g. a trailing comma: Python's rules decide
    try:
        with warnings.catch_warnings():  # model output's "\d" must not print warnings
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            return Parsed(ast.literal_eval(s))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError) as e:
        return fail(f"not a Python literal: {type(e).__name__}")
    except Exception as e:  # literal_eval can raise odd errors on odd input; stay total
        return fail(f"not a Python literal: {type(e).__name__}")


def parse_literal_list(text: Any, collapse_whitespace: bool = True) -> Parsed:
    """A Python-literal (or JSON) list, e.g. ``[['Pick', 'Apple'], ['Place', 'Apple', 'Table']]``."""
    r = parse_literal(text, collapse_whitespace=collapse_whitespace)
    if not r.ok:
        return r
    if isinstance(r.value, tuple):
        return Parsed(list(r.value))
    if not isinstance(r.value, list):
        return fail(f"literal is a {type(r.value).__name__}, not a list")
    return r
