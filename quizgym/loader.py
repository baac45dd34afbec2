"""YAML banks and packs in, a :class:`~quizgym.model.Bank` (or :class:`~quizgym.model.Pack`) out, or
every problem at once in one :class:`~quizgym.errors.BankError`."""

from __future__ import annotations

import difflib
import re
import typing
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from quizgym.errors import BankError, Finding, QuizgymError
from quizgym.model import (
    QUESTION_TYPES,
    Bank,
    Choice,
    DecimalDisplay,
    Defaults,
    FunctionSpec,
    Mistake,
    MistakeRule,
    Pack,
    Part,
    RubricCriterion,
    SourceMap,
    StrictModel,
    UnitPenalty,
    loc_key,
)
from quizgym.resources import read_bank_file
from quizgym.resources import resolve_bank as resolve_bank  # its home was here
from quizgym.resources import resolve_pack as resolve_pack
from quizgym.resources import shortest as shortest

Loc = tuple[str | int, ...]
# Every field name of the bank format, for "did you mean …?" after an unknown field.
_MODELS: tuple[type[StrictModel], ...] = (
    *QUESTION_TYPES.values(),
    Bank,
    Choice,
    Part,
    Mistake,
    RubricCriterion,
    Defaults,
    Pack,
    FunctionSpec,
    MistakeRule,
    UnitPenalty,
    DecimalDisplay,
)
_FIELD_NAMES = sorted({name for cls in _MODELS for name in cls.model_fields})
_BANK_SHAPE = "a bank is a mapping with bank, title and questions"


def _models_in(annotation: Any) -> set[type[StrictModel]]:
    """The bank-format models a field's type holds (``list[Mistake]`` → Mistake)."""
    if isinstance(annotation, type) and issubclass(annotation, StrictModel):
        return {annotation}
    found: set[type[StrictModel]] = set()
    for arg in typing.get_args(annotation):
        found |= _models_in(arg)
    return found


def _fields_at(loc: Loc) -> list[str]:
    """The field names of the model at ``loc`` (a pydantic error's location, without the
    field), for a hint; [] when the location cannot be followed."""
    models: set[type[StrictModel]] = {Bank}
    for part in loc:
        if isinstance(part, int):
            continue  # a list's item
        tagged: set[type[StrictModel]] = {m for m in models if QUESTION_TYPES.get(part) is m}
        if tagged:  # a question's type, as pydantic names the branch of the union
            models = tagged
            continue
        inner = set().union(
            *(_models_in(m.model_fields[part].annotation) for m in models if part in m.model_fields)
        )
        if inner:
            models = inner
        elif not any(part in m.model_fields for m in models):
            continue  # a mapping's key (a parameter's name): its values keep the models
        else:
            return []  # a field of plain values holds no model
    return sorted({name for m in models for name in m.model_fields})


MAX_YAML_DEPTH = 64
"""Deepest nesting of mappings and lists a bank may have (the bank format needs about 8)."""
MAX_ALIAS_NODES = 100_000
"""Most nodes that aliases may repeat: a bank's own nodes are bounded by its size, but nested
aliases multiply (nine aliases of nine aliases … of a string: a 600-byte "billion laughs")."""

_TOO_DEEP = f"nested more than {MAX_YAML_DEPTH} levels deep; a bank needs only a few"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"

_UNION_HINTS = {
    "tolerance": "tolerance must be auto, {rel: R}, {abs: A}, {sigfigs: N} or {decimals: N}",
    "params": "a parameter is a number, {choices: [...]} or {min: A, max: B, step: S}",
}


def load_bank(name: str | Path) -> Bank:
    """Load and validate one bank, named by path or bundled name.

    The YAML is composed into nodes first so that each field keeps its line and column; duplicate
    mapping keys are errors (PyYAML would silently keep the last one, losing an author's text).
    Pydantic errors are rendered one per field, ``path:line:col: field: message``. A bank either
    loads completely or raises :class:`~quizgym.errors.BankError`: it never half-loads.

    Raises:
        BankNotFoundError: the bank does not exist.
        QuizgymError: the file cannot be read.
        BankError: the bank has errors (all of them, each with its line).
    """
    path, raw = read_bank_file(name)
    return parse_bank(raw, path=str(path))


def parse_bank(raw: bytes | str, *, path: str = "<bank>") -> Bank:
    """Validate bank text. See :func:`load_bank`.

    Raises:
        BankError: every problem found, each as a located finding.
    """
    text = _decode(raw, path)
    data, positions, findings = _compose(text, path)
    if findings and data is None:
        raise BankError(findings)
    if data is None:
        raise BankError([_at(path, 1, 1, f"empty bank: {_BANK_SHAPE}")])
    if not isinstance(data, dict):
        kind = "list" if isinstance(data, list) else type(data).__name__
        line, col = positions[""]
        raise BankError([_at(path, line, col, f"the top level is a {kind}; {_BANK_SHAPE}")])
    source = SourceMap(path=path, positions=positions)
    findings.extend(_duplicate_ids(data, source))
    try:
        bank = Bank.model_validate(data)
    except ValidationError as exc:
        findings.extend(_render_validation(exc, data, source))
        raise BankError(_sorted(findings)) from None
    bank._source = source
    if findings:
        raise BankError(_sorted(findings))
    return bank


def load_pack(name: str, *, bank_path: str = "") -> Pack:
    """Load and validate a pack (see :func:`resolve_pack`).

    Raises:
        QuizgymError: no such pack, or it cannot be read.
        BankError: the pack has errors (all of them, each with its line in the pack's file).
    """
    path = resolve_pack(name, bank_path=bank_path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise QuizgymError(f"{path}: cannot read: {exc.strerror}") from exc
    return parse_pack(raw, path=str(shortest(path)))


def parse_pack(raw: bytes | str, *, path: str = "<pack>") -> Pack:
    """Validate pack text, reporting every problem as a located finding.

    Raises:
        BankError: the problems found.
    """
    text = _decode(raw, path)
    data, positions, findings = _compose(text, path)
    if findings:
        raise BankError(findings)
    if not isinstance(data, dict):
        line, col = positions.get("", (1, 1))
        raise BankError([_at(path, line, col, "a pack is a mapping with pack and title")])
    source = SourceMap(path=path, positions=positions)
    try:
        pack = Pack.model_validate(data)
    except ValidationError as exc:
        raise BankError(_sorted(_render_validation(exc, data, source))) from None
    pack._source = source
    return pack


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.line, f.col))


# --- YAML ---------------------------------------------------------------------------------------


def _at(path: str, line: int, col: int, message: str) -> Finding:
    return Finding(path=path, line=line, col=col, message=message)


def _decode(raw: bytes | str, path: str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        byte = raw[exc.start]
        raise BankError(
            [
                _at(
                    path,
                    line,
                    col,
                    f"not UTF-8 text: byte 0x{byte:02x} cannot be decoded; save the file as UTF-8",
                )
            ]
        ) from None


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """SafeLoader with YAML 1.2 booleans.

    libyaml's parser (``CSafeLoader``, in PyYAML's wheels) composes the nodes, with the same line
    and column marks, several times faster than the pure-Python one, for the bank every command
    reads at start-up. Scalars are still constructed and
    resolved in Python, so the YAML 1.2 booleans below apply to both.
    """


# YAML 1.1 reads yes/no/on/off as booleans, so `feedback: yes` or a choice `text: No` would become
# a bool. Banks are prose: like YAML 1.2, only true/false (any case) are booleans here.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


class _PyLoader(yaml.SafeLoader):
    """PyYAML's pure-Python parser, for the messages of a bank that is not valid YAML."""


def _compose(text: str, path: str) -> tuple[Any, dict[str, tuple[int, int]], list[Finding]]:
    tab = re.search(r"^( *)\t", text, flags=re.MULTILINE)
    if tab:
        line = text.count("\n", 0, tab.start()) + 1
        col = len(tab.group(1)) + 1
        return None, {}, [_at(path, line, col, "tab character in indentation; indent with spaces")]
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
    except yaml.YAMLError as exc:
        if "maximum nesting depth" in str(exc):
            # libyaml stops at 1,000 levels; the pure-Python parser would recurse that deep.
            mark = getattr(exc, "problem_mark", None)
            where = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
            return None, {}, [_too_deep(text, path, where)]
        # libyaml's messages say less ("found undefined alias" without its name): the
        # pure-Python parser, slower but run only on a broken bank, says where and what.
        return None, {}, [_yaml_error(text, path)]
    finally:
        loader.dispose()
    if root is None:
        return None, {}, []
    positions: dict[str, tuple[int, int]] = {}
    findings: list[Finding] = []
    # Aliases compose to shared nodes, and building copies them: count the nodes built again
    # through an alias (bounding the expansion), and the nodes open above each one (a node that
    # contains itself is recursive YAML, which has no finite copy).
    seen: set[int] = set()
    open_nodes: set[int] = set()
    repeats = 0

    def build(node: yaml.Node, loc: Loc, depth: int) -> Any:
        nonlocal repeats
        if id(node) in open_nodes:
            raise _RefusedError(_alias_finding(text, path, node, recursive=True))
        if id(node) in seen:
            repeats += 1
            if repeats > MAX_ALIAS_NODES:
                raise _RefusedError(_alias_finding(text, path, node, recursive=False))
        seen.add(id(node))
        if depth > MAX_YAML_DEPTH:
            where = _dotted(loc[:3]) + ("…" if len(loc) > 3 else "")
            raise _RefusedError(_mark(path, node, f"{where}: {_TOO_DEEP}"))
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            expected = _MAP_TAG if isinstance(node, yaml.MappingNode) else _SEQ_TAG
            if node.tag != expected:
                raise _RefusedError(_mark(path, node, f"{_dotted(loc)}: {_tag_refusal(node.tag)}"))
            open_nodes.add(id(node))
            try:
                if isinstance(node, yaml.MappingNode):
                    return build_mapping(node, loc, depth)
                return [build_item(item, loc, k, depth) for k, item in enumerate(node.value)]
            finally:
                open_nodes.discard(id(node))
        try:
            return loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            if exc.problem and "could not determine a constructor" in exc.problem:
                message = f"{_dotted(loc)}: {_tag_refusal(node.tag)}"
                raise _RefusedError(_mark(path, node, message)) from None
            raise _RefusedError(
                _mark(path, node, f"{_dotted(loc)}: {exc.problem or exc}")
            ) from None
        except ValueError:  # an integer of more digits than Python converts (4,300)
            digits = len(str(node.value))
            message = f"{_dotted(loc)}: a number of {digits:,} digits; write a shorter number"
            raise _RefusedError(_mark(path, node, message)) from None

    def build_item(item: yaml.Node, loc: Loc, index: int, depth: int) -> Any:
        mark = item.start_mark
        positions[loc_key((*loc, index))] = (mark.line + 1, mark.column + 1)
        return build(item, (*loc, index), depth + 1)

    def build_mapping(node: yaml.MappingNode, loc: Loc, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        first_seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            key = build(key_node, (*loc, "<key>"), depth + 1)
            if not isinstance(key, str | int | float | bool) or key is None:
                findings.append(
                    _mark(path, key_node, f"{_dotted(loc)}: mapping keys must be plain text")
                )
                continue
            mark = key_node.start_mark
            if key in first_seen:
                findings.append(
                    _mark(
                        path,
                        key_node,
                        f"{_dotted((*loc, str(key)))}: duplicate key {key!r} "
                        f"(first at line {first_seen[key]}); YAML would keep only the last",
                    )
                )
                continue
            first_seen[key] = mark.line + 1
            field = key if isinstance(key, str | int) else str(key)
            positions[loc_key((*loc, field))] = (mark.line + 1, mark.column + 1)
            result[key] = build(value_node, (*loc, field), depth + 1)
        return result

    try:
        data = build(root, (), 0)
    except _RefusedError as refused:
        return None, {}, [refused.finding]
    # A top level that is not a mapping is refused where it starts (after comments, a
    # document marker); a mapping's missing fields are placed at the top of the file.
    start = root.start_mark if not isinstance(data, dict) else None
    positions[""] = (start.line + 1, start.column + 1) if start is not None else (1, 1)
    return data, positions, findings


class _RefusedError(Exception):
    """A bank that cannot be built at all (an alias bomb, recursive YAML, a code tag)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding


def _tag_refusal(tag: str) -> str:
    shown = tag.replace("tag:yaml.org,2002:", "!!")
    if shown == "!!merge":
        return "merge keys (<<) are not supported; write the fields out"
    if shown.startswith("!!python/"):
        return (
            f"the tag {shown} is refused: a bank is plain data, and quizgym never runs code or "
            "builds Python objects from it"
        )
    return f"the tag {shown} is not allowed; a bank uses plain text, numbers, lists and mappings"


def _alias_finding(text: str, path: str, node: yaml.Node, *, recursive: bool) -> Finding:
    """The finding for an alias that cannot be expanded, at that alias when it can be found.

    Only the composed node is known when the problem is found (an alias is a shared node), so
    the events are read again, on this rare path, to find the alias that refers to its own
    ancestor or that takes the expansion past :data:`MAX_ALIAS_NODES`.
    """
    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = []  # per open collection: its anchor, nodes so far
    total = 0
    try:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                name = event.anchor
                mark = event.start_mark
                assert mark is not None  # libyaml marks every event
                if any(anchor == name for anchor, _ in stack):
                    return _at(
                        path,
                        mark.line + 1,
                        mark.column + 1,
                        f"alias *{name} refers to a node that contains it (recursive YAML); "
                        "a bank cannot contain itself",
                    )
                size = sizes.get(name or "", 1)
                total += size
                if stack:
                    stack[-1] = (stack[-1][0], stack[-1][1] + size)
                if not recursive and total > MAX_ALIAS_NODES:
                    return _at(path, mark.line + 1, mark.column + 1, _bomb(name))
            elif isinstance(event, yaml.CollectionStartEvent):
                stack.append((event.anchor, 1))
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, size = stack.pop()
                if anchor is not None:
                    sizes[anchor] = size
                if stack:
                    stack[-1] = (stack[-1][0], stack[-1][1] + size)
            elif isinstance(event, yaml.ScalarEvent):
                if event.anchor is not None:
                    sizes[event.anchor] = 1
                if stack:
                    stack[-1] = (stack[-1][0], stack[-1][1] + 1)
    except yaml.YAMLError:
        pass
    if recursive:
        message = "this node contains itself through an alias (recursive YAML)"
        return _mark(path, node, message)
    return _mark(path, node, _bomb(None))


def _bomb(name: str | None) -> str:
    alias = f"alias *{name}" if name else "aliases"
    return (
        f"{alias} would repeat more than {MAX_ALIAS_NODES:,} values (nested aliases multiply: "
        "an alias bomb?); write the values out, or alias less deeply"
    )


def _yaml_error(text: str, path: str) -> Finding:
    """The finding for text that is not valid YAML, from PyYAML's pure-Python parser."""
    try:
        loader = _PyLoader(text)
        try:
            loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        return _at(path, line, col, f"YAML syntax error: {problem}")
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        col = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return _at(path, line, col, f"character U+{code:04X} is not allowed in YAML text")
    except yaml.YAMLError as exc:
        return _at(path, 1, 1, f"YAML error: {exc}")
    except RecursionError:
        return _too_deep(text, path)
    return _at(path, 1, 1, "YAML error: libyaml cannot read this file")


def _too_deep(text: str, path: str, where: tuple[int, int] = (1, 1)) -> Finding:
    """Where brackets first nest deeper than :data:`MAX_YAML_DEPTH` (quotes aside), else
    ``where`` (the parser's own mark, for nesting by indentation)."""
    depth, quote = 0, ""
    line, col = where
    for offset, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > MAX_YAML_DEPTH:
                line = text.count("\n", 0, offset) + 1
                col = offset - (text.rfind("\n", 0, offset) + 1) + 1
                break
        elif ch in "]}":
            depth -= 1
    return _at(path, line, col, _TOO_DEEP)


def _mark(path: str, node: yaml.Node, message: str) -> Finding:
    return _at(path, node.start_mark.line + 1, node.start_mark.column + 1, message)


# --- validation errors --------------------------------------------------------------------------


def _dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if part == "<key>":  # the key of a mapping entry, located at the entry itself
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "bank"


def _data_loc(loc: Loc, data: Any, kind: str = "") -> tuple[Loc, Loc | None]:
    """Keep the parts of a Pydantic loc that index into the data.

    A part that is not in the data is either the missing field itself (the last part of a
    ``missing`` error) or the name of a union member, which the author never wrote. Returns the
    kept loc and, when a union was crossed, the loc of the union's own field (its anchor).
    """
    kept: list[str | int] = []
    anchor: Loc | None = None
    node = data
    for position, part in enumerate(loc):
        in_dict = isinstance(node, dict) and part in node
        in_list = isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        if in_dict or in_list:
            kept.append(part)
            node = node[part]
        elif isinstance(node, dict) and part in QUESTION_TYPES and node.get("type") == part:
            continue  # the tag of the question union: not a data key
        elif position == len(loc) - 1 and kind == "missing" and isinstance(part, str):
            kept.append(part)
        elif anchor is None:
            anchor = tuple(kept)
    return tuple(kept), anchor


def _render_validation(
    exc: ValidationError, data: dict[str, Any], source: SourceMap
) -> list[Finding]:
    groups: dict[Loc, list[tuple[Loc, ErrorDetails]]] = {}
    order: list[Loc] = []
    for error in exc.errors(include_url=False):
        loc, union = _data_loc(tuple(error["loc"]), data, error["type"])
        # Errors from the branches of one union collapse onto the union's own field.
        anchor = loc if union is None else union
        if anchor not in groups:
            groups[anchor] = []
            order.append(anchor)
        groups[anchor].append((loc, error))
    findings = []
    for anchor in order:
        members = groups[anchor]
        loc, error = _pick(members)
        hint = _union_hint(anchor)
        if len(members) > 1 and hint and not _is_clear(members):
            loc, message = anchor, f"{_dotted(anchor)}: {hint}"
        else:
            message = _message(error, loc, data)
            if error["type"] in {"union_tag_invalid", "union_tag_not_found"}:
                loc = (*loc, "type")
        findings.append(_locate(source, loc, data, message))
    return findings


def _union_hint(anchor: Loc) -> str | None:
    if not anchor:
        return None
    if len(anchor) >= 2 and anchor[-2] == "params":
        return _UNION_HINTS["params"]
    return _UNION_HINTS.get(str(anchor[-1]))


def _is_clear(members: list[tuple[Loc, ErrorDetails]]) -> bool:
    """Whether one union branch plainly matched (its only error is inside a value)."""
    return _pick(members)[1]["type"] not in {
        "missing",
        "extra_forbidden",
        "literal_error",
        "model_type",
    }


def _pick(members: list[tuple[Loc, ErrorDetails]]) -> tuple[Loc, ErrorDetails]:
    """Choose the most telling error among a union's branches."""
    shape = {"missing", "extra_forbidden", "literal_error", "model_type", "float_type", "dict_type"}
    for loc, error in members:
        if error["type"] not in shape:
            return loc, error
    return members[0]


def _message(error: ErrorDetails, loc: Loc, data: Any) -> str:
    kind = error["type"]
    field = _dotted(loc)
    if kind == "missing":
        return f"{field}: missing required field"
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else "?"
        known = _fields_at(loc[:-1]) or _FIELD_NAMES  # the fields where it was written
        close = difflib.get_close_matches(name, [n for n in known if n != name], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{field}: unknown field {name!r}{hint}"
    if kind in {"union_tag_invalid", "union_tag_not_found"}:
        expected = ", ".join(QUESTION_TYPES)
        got = error.get("ctx", {}).get("tag")
        what = f"unknown question type {got!r}" if got else "missing type"
        return f"{field}.type: {what} (expected one of {expected})"
    if (
        kind == "string_pattern_mismatch"
        and loc
        and loc[-1] in {"id", "bank"}
        or (kind == "string_pattern_mismatch" and len(loc) >= 2 and loc[-2] == "tags")
    ):
        return (
            f"{field}: {error['input']!r} is not a slug (lowercase letters, digits, single hyphens)"
        )
    if kind == "string_pattern_mismatch":
        return f"{field}: {error['input']!r} is not a name (lowercase letters, digits, underscore)"
    message = str(error["msg"])
    if message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    else:
        message = message[:1].lower() + message[1:]
    return f"{field}: {message}"


def _locate(source: SourceMap, loc: Loc, data: Any, message: str) -> Finding:
    line, col = source.find(loc)
    return _at(source.path, line, col, _with_id(loc, data, message))


def _with_id(loc: Loc, data: Any, message: str) -> str:
    """Name the question by id as well as by index, when it has one."""
    if len(loc) >= 2 and loc[0] == "questions" and isinstance(loc[1], int):
        questions = data.get("questions")
        if isinstance(questions, list) and loc[1] < len(questions):
            qid = questions[loc[1]].get("id") if isinstance(questions[loc[1]], dict) else None
            prefix = f"questions[{loc[1]}]"
            if isinstance(qid, str) and message.startswith(prefix):
                return f"{prefix} ({qid}){message[len(prefix) :]}"
    return message


def _duplicate_ids(data: dict[str, Any], source: SourceMap) -> Iterable[Finding]:
    """Question ids must be unique: progress and grades key on them."""
    questions = data.get("questions")
    if not isinstance(questions, list):
        return
    first: dict[str, int] = {}
    for index, question in enumerate(questions):
        qid = question.get("id") if isinstance(question, dict) else None
        if not isinstance(qid, str):
            continue
        line, col = source.positions.get(loc_key(("questions", index, "id")), (1, 1))
        if qid in first:
            message = f"questions[{index}].id: duplicate id {qid!r} (first at line {first[qid]})"
            yield _at(source.path, line, col, message)
        else:
            first[qid] = line
