"""JSON Lines in and out, with one error format.

Every JSONL file groundrl reads goes through :func:`iter_lines` (tolerant: each line
with its value or its problem) or :func:`iter_jsonl` / :func:`read_jsonl` (strict: the
first bad line raises :class:`JsonlError`). A bad line is always described the same
way: ``<file>:<line>: <what is wrong>; <what to do>``, 1-based line numbers.

Lines end at ``\\n`` only (``str.splitlines`` would also split inside a record at a
raw U+2028 that ``json.dumps(ensure_ascii=False)`` writes), blank lines are skipped,
and the file is read as it goes, so memory does not grow with it (issue 26). A line
that is not UTF-8 is a bad line like one that is not JSON. The repo writes no
compressed JSONL anywhere, so ``.gz`` is not read specially [ours: brief of issue 23].

Outputs (issue 42): :func:`check_output` refuses an ``-o`` that is one of the command's
inputs (the same path, a symlink or a hard link to it) before anything is written;
:func:`atomic_output` writes a file under a temporary name and renames it into place, so
a run cut short (disk full, an exception, Ctrl-C) leaves the old file or none, never a
partial one that looks complete; :func:`disk_full_message` is the one line the CLI
prints for ENOSPC. :func:`load_yaml` parses YAML safely with aliases bounded.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, NamedTuple

FIX = "write one JSON object per line"  # what to do about a bad line, unless the caller knows better


class JsonlError(ValueError):
    """A bad line of a JSONL file; ``str()`` is ``<file>:<line>: <problem>; <fix>``."""

    def __init__(self, path: str | Path, line: int, problem: str, fix: str = FIX) -> None:
        self.path, self.line, self.problem, self.fix = str(path), line, problem, fix
        super().__init__(f"{path}:{line}: {problem}; {fix}")


class Line(NamedTuple):
    """One non-blank line: its 1-based ``number``, its ``value`` (``None`` when bad),
    ``problem`` (``""`` when good) and ``text`` as read, without its newline."""

    number: int
    value: Any
    problem: str
    text: str

    @property
    def message(self) -> str:
        """``line <n>: <problem>``: the problem as an error field of an output row."""
        return f"line {self.number}: {self.problem}"


def parse_line(text: str | bytes, *, objects: bool = True) -> tuple[Any, str]:
    """``(value, "")`` or ``(None, problem)`` for one line; never raises. With
    ``objects`` (the default) a value that is not a JSON object is a problem.

    >>> parse_line('{"id": 1}')
    ({'id': 1}, '')
    >>> parse_line("[1]")
    (None, 'a JSON list, expected an object')
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            return None, f"not UTF-8 text (byte {text[e.start]:#04x} at column {e.start + 1})"
    try:
        value = json.loads(text)
    except ValueError as e:
        return None, f"not JSON ({e})"
    except RecursionError:  # json's scanner recurses per nesting level: a hostile line
        return None, "not JSON (nested too deeply to read)"
    if objects and not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, expected an object"
    return value, ""


def _raw_lines(source: str | Path | Iterable[bytes] | Iterable[str]) -> Iterator[bytes | str]:
    if isinstance(source, (str, Path)):
        with Path(source).open("rb") as f:
            yield from f
    else:
        yield from source


def iter_lines(
    source: str | Path | Iterable[bytes] | Iterable[str], *, objects: bool = True, start: int = 1
) -> Iterator[Line]:
    """Every non-blank line of a file (or of an iterable of lines, numbered from
    ``start``) as a :class:`Line`; bad lines are yielded with their problem, not raised."""
    for number, raw in enumerate(_raw_lines(source), start=start):
        if not raw.strip():
            continue
        value, problem = parse_line(raw, objects=objects)
        text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
        yield Line(number, value, problem, text.removesuffix("\n"))


def iter_jsonl(
    path: str | Path, *, objects: bool = True, limit: int | None = None, fix: str = FIX
) -> Iterator[Any]:
    """The values of a JSONL file, at most ``limit``; the first bad line raises
    :class:`JsonlError` (``fix`` is its advice)."""
    if limit is not None and limit <= 0:
        return
    for n, line in enumerate(iter_lines(path, objects=objects), start=1):
        if line.problem:
            raise JsonlError(path, line.number, line.problem, fix)
        yield line.value
        if n == limit:
            return


def read_jsonl(
    path: str | Path, *, objects: bool = True, limit: int | None = None, fix: str = FIX
) -> list[Any]:
    """:func:`iter_jsonl` as a list."""
    return list(iter_jsonl(path, objects=objects, limit=limit, fix=fix))


def rename_fields(record: Mapping[str, Any], fields: Mapping[str, str]) -> tuple[dict[str, Any], str]:
    """``--field OURS=THEIRS`` (score, curate, serve) on one record: ``(record with each
    OURS set from its THEIRS, the first THEIRS it lacks or "")``; an OURS whose THEIRS is
    absent is removed, never read from the record's own OURS [ours, issue 39].

    >>> rename_fields({"output": "yes", "id": 3}, {"completion": "output"})
    ({'output': 'yes', 'id': 3, 'completion': 'yes'}, '')
    >>> rename_fields({"completion": "no", "id": 3}, {"completion": "output"})
    ({'id': 3}, 'output')
    """
    missing = next((theirs for theirs in fields.values() if theirs not in record), "")
    out = {k: v for k, v in record.items() if k not in fields or fields[k] in record}
    out.update({o: record[t] for o, t in fields.items() if t in record})
    return out, missing


def json_text(obj: Any, **kw: Any) -> str:
    """JSON text that encodes to UTF-8 whatever the input held: non-ASCII characters stay
    readable, but a lone surrogate (``"\\ud800"``, legal in JSON, not in UTF-8) makes the
    whole text ASCII-escaped instead of failing the write."""
    text = json.dumps(obj, ensure_ascii=False, **kw)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(obj, ensure_ascii=True, **kw)
    return text


def json_line(obj: Any, *, ensure_ascii: bool = False, **kw: Any) -> str:
    """One JSONL line, newline included: :func:`json_text` by default, plain
    ``json.dumps`` with ``ensure_ascii=True`` (for files that were always ASCII).
    ``kw`` goes to ``json.dumps`` (``default=str``, ``sort_keys``…)."""
    return (json.dumps(obj, **kw) if ensure_ascii else json_text(obj, **kw)) + "\n"


def write_rows(f: IO[str], rows: Iterable[Any], **kw: Any) -> int:
    """Write each row as one JSON line (:func:`json_line`) to an open text file;
    returns how many."""
    n = 0
    for row in rows:
        f.write(json_line(row, **kw))
        n += 1
    return n


def write_jsonl(path: str | Path, rows: Iterable[Any], *, append: bool = False, **kw: Any) -> int:
    """Write (or with ``append``, add) rows as JSON lines to ``path``, creating its
    folder; returns how many."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a" if append else "w", encoding="utf-8") as f:
        return write_rows(f, rows, **kw)


# -- outputs that never destroy their input -------------------------------------------------


class SameFileError(ValueError):
    """An output path that is one of the command's inputs."""


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)  # same inode: the path itself, a symlink or a hard link
    except OSError:  # one of them does not exist (yet): compare where the names lead
        return a.resolve() == b.resolve()


def check_output(output: str | Path | None, *inputs: str | Path | None, flag: str = "-o") -> None:
    """Raise :class:`SameFileError` when ``output`` is one of ``inputs`` (the same path, a
    symlink or a hard link to it): opening it for writing would empty the input before it
    is read. ``None`` (standard output / input) and ``-`` are never the same file.

    >>> check_output("a.jsonl", "b.jsonl")
    >>> check_output("x/../a.jsonl", "a.jsonl")
    Traceback (most recent call last):
    ...
    groundrl.io.SameFileError: -o x/../a.jsonl is the input a.jsonl (or a link to it): writing it would destroy the input; give another file
    """
    if output is None or str(output) == "-":
        return
    for src in inputs:
        if src is None or str(src) == "-":
            continue
        if _same_file(Path(output), Path(src)):
            raise SameFileError(
                f"{flag} {output} is the input {src} (or a link to it): writing it would destroy "
                "the input; give another file"
            )


@contextlib.contextmanager
def atomic_output(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """An open file that becomes ``path`` only when the ``with`` block ends without an
    exception: it is written as ``.<name>.<pid>.tmp`` beside ``path`` (same file system,
    so the rename is atomic) and removed on failure, leaving ``path`` as it was."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        with tmp.open(mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def disk_full_message(e: BaseException) -> str | None:
    """The one-line message for a write that failed because the disk or quota is full;
    ``None`` for any other error."""
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f" writing {e.filename}" if e.filename else ""
        return f"no space left on the device{where}; free some space or write elsewhere"
    return None


# -- YAML with aliases bounded ----------------------------------------------------------------

MAX_YAML_NODES = 100_000  # [ours]: configs here have < 1,000 nodes; a billion-laughs file has 10⁹


class YamlTooLarge(ValueError):
    """A YAML document whose aliases expand past :data:`MAX_YAML_NODES` nodes, or refer to themselves."""


def _children(node: Any) -> list[Any]:
    value = node.value
    if not isinstance(value, list):  # a scalar
        return []
    return [c for item in value for c in (item if isinstance(item, tuple) else (item,))]


def _expanded_nodes(root: Any, limit: int) -> int:
    """How many nodes the document has with every alias expanded (a node reached through k
    aliases counts k times, capped at ``limit + 1``), in time linear in the composed graph:
    a shared node is visited once. A node met again while its own subtree is open is an
    alias to an ancestor: a recursive document, refused."""
    sizes: dict[int, int] = {}  # id → expanded size; -1 while its subtree is open
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            sizes[key] = min(limit + 1, 1 + sum(sizes[id(c)] for c in _children(node)))
            continue
        if sizes.get(key) == -1:
            raise YamlTooLarge("an alias refers to a node that contains it (a recursive document)")
        if key in sizes:
            continue
        sizes[key] = -1
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node))
    return sizes[id(root)]


def load_yaml(text: str, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """``yaml.safe_load(text)`` (no Python tags), refusing with :class:`YamlTooLarge` a
    document whose aliases would expand past ``max_nodes`` nodes (billion laughs: a few
    hundred bytes naming 10⁹ strings) or that refers to itself, before any value is built.
    ``yaml.YAMLError`` still means invalid YAML."""
    # lazy: PyYAML loads only when a YAML file is read
    import yaml

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        n = _expanded_nodes(node, max_nodes)
        if n > max_nodes:
            raise YamlTooLarge(
                f"its aliases expand to more than {max_nodes:,} values; write the repeated parts out "
                "or use fewer aliases"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()
