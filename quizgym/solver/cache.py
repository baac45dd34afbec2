"""A compiled bank in, one file in the user cache folder out, read back by the next command whose
bank and quizgym are unchanged."""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import importlib
import importlib.util
import json
import os
import sys
import threading
import typing
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from quizgym import lazy
from quizgym.places import CACHE_ENV, OFF_ENV, cache_dir, library_stamp
from quizgym.version import __version__

# Reading a file back needs none of tempfile (and shutil, which it imports), the units' memo,
# fractions nor decimal: the drill's first prompt reads its preview from here
# (quizgym.practice.preview) before anything else is loaded. Each is imported where it is used.

if TYPE_CHECKING:
    from quizgym.model import Bank, Pack
    from quizgym.solver.compiled import Budget, CompiledBank

__all__ = [
    "CACHE_ENV",
    "FORMAT",
    "OFF_ENV",
    "Stored",
    "bank_key",
    "cache_dir",
    "decode",
    "encode",
    "library_stamp",
    "open_bank",
    "pack_digests",
    "read",
    "save",
    "write",
]

FORMAT = "quizgym-compiled/2"
"""The layout of a cache file; bump it when the layout changes."""
_LIBRARIES = (
    "sympy",
    "mpmath",
    "pydantic",
    "pydantic_core",
    "markdown_it",
    "mdit_py_plugins",
    "latex2mathml",
)
"""Libraries whose output the cache holds (key texts, validated models, what ``check`` and the
drill's preview found in the bank's text, the preview's formulas as the terminal shows them)."""
_PACKAGE = Path(__file__).resolve().parent.parent


def _stamp_files(root: Path) -> list[str]:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                info = os.stat(path)
                out.append(f"{os.path.relpath(path, root)}:{info.st_size}:{info.st_mtime_ns}")
    return out


_CODE_STAMP: list[str] = []


def _code_stamp() -> str:
    if not _CODE_STAMP:
        parts = [FORMAT, __version__, *_stamp_files(_PACKAGE)]
        parts += [library_stamp(name) for name in _LIBRARIES]
        _CODE_STAMP.append(hashlib.sha256("\n".join(parts).encode()).hexdigest())
    return _CODE_STAMP[0]


def bank_key(raw: bytes) -> str:
    """The cache key of a bank file's bytes with this quizgym (see the module docs)."""
    digest = hashlib.sha256(_code_stamp().encode())
    digest.update(b"\0")
    digest.update(raw)
    return digest.hexdigest()


def pack_digests(names: list[str], bank_path: str) -> list[list[str]] | None:
    """``[name, SHA-256 of the file's bytes]`` of each pack a bank at ``bank_path`` names; None
    when one cannot be found or read (the command then loads the packs and says why)."""
    files = _pack_files(names, bank_path)
    return None if files is None else [[name, digest] for name, digest, _ in files]


def _pack_files(names: list[str], bank_path: str) -> list[tuple[str, str, Path]] | None:
    from quizgym.errors import QuizgymError
    from quizgym.resources import resolve_pack

    out = []
    for name in names:
        try:
            path = resolve_pack(name, bank_path=bank_path)
            raw = path.read_bytes()
        except (QuizgymError, OSError):
            return None
        out.append((name, hashlib.sha256(raw).hexdigest(), path))
    return out


# --- the codec ----------------------------------------------------------------------------------


def _qualified(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def encode(value: Any) -> Any:
    """A value as JSON data (see the module docs for the types it takes).

    Raises:
        TypeError: a value of a type the cache does not store.
    """
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else {"float": repr(value)}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, frozenset | set):
        items = sorted((encode(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
        return {"frozenset" if isinstance(value, frozenset) else "set": items}
    from decimal import Decimal
    from fractions import Fraction

    if isinstance(value, Fraction):
        return {"fraction": [value.numerator, value.denominator]}
    if isinstance(value, Decimal):
        return {"decimal": str(value)}
    if isinstance(value, enum.Enum):
        return {"enum": _qualified(type(value)), "value": encode(value.value)}
    if type(value).__module__.startswith("mpmath") and hasattr(value, "_mpf_"):
        sign, man, exp, bits = value._mpf_
        return {"mpf": [sign, str(man), exp, bits]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _check_home(type(value))
        fields = {
            f.name: encode(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.metadata.get("stored", True)
        }
        return {"dataclass": _qualified(type(value)), "fields": fields}
    fields_of = getattr(type(value), "model_fields", None)
    if isinstance(fields_of, dict) and hasattr(value, "model_fields_set"):
        _check_home(type(value))
        return {
            "model": _qualified(type(value)),
            "fields": {name: encode(getattr(value, name)) for name in fields_of},
            "set": sorted(value.model_fields_set),
        }
    raise TypeError(f"the compiled-bank cache cannot store {type(value).__qualname__}: {value!r}")


def _check_home(cls: type) -> None:
    """A record can be read back: it is in the closed table :func:`decode` reads by."""
    try:
        known = _record(_qualified(cls))
    except ValueError:
        known = None
    if known is not cls:
        raise TypeError(f"the compiled-bank cache cannot store {cls}: not one of its records")


_ROOTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("quizgym.richtext.tree", ("Doc",)),  # the drill's preview: found without pydantic
    ("quizgym.model", ("Bank", "Pack")),
    ("quizgym.solver.keys", ("Key",)),
    ("quizgym.solver.mistakes", ("ResolvedMistake",)),
    ("quizgym.accept", ("Run", "Grid")),
)
"""The records the cache holds, each with the classes its fields name (:func:`_record`)."""
_RECORDS: dict[str, type] = {}
_ROOTS_DONE: list[int] = [0]
_RECORDS_LOCK = threading.Lock()  # the drill's preview and its loading thread both decode


def _record(name: str) -> type:
    """The class a file names (``module:qualname``), from a closed table: the records of
    :data:`_ROOTS` and every quizgym dataclass, model or enum their fields' types name, found
    from the code (so a new field needs no new entry), never from the file. Anything else is
    refused: a forged file can name no other class, and no module is imported because a file
    named it.

    Raises:
        ValueError: a name outside the table.
    """
    if name not in _RECORDS:
        with _RECORDS_LOCK:
            while name not in _RECORDS and _ROOTS_DONE[0] < len(_ROOTS):
                module, names = _ROOTS[_ROOTS_DONE[0]]
                found = importlib.import_module(module)
                _add_records([getattr(found, root) for root in names])
                _ROOTS_DONE[0] += 1
    cls = _RECORDS.get(name)
    if cls is None:
        raise ValueError(f"not a record the compiled-bank cache holds: {name}")
    return cls


def _add_records(todo: list[Any]) -> None:
    while todo:
        item = todo.pop()
        if not isinstance(item, type) or typing.get_origin(item) is not None:  # what it names
            todo += [arg for arg in typing.get_args(item) if arg is not None]
            continue
        name = _qualified(item)
        if not item.__module__.startswith("quizgym.") or name in _RECORDS:
            continue
        if dataclasses.is_dataclass(item):
            todo += [_field_type(item, f) for f in dataclasses.fields(item) if _kept(f)]
        elif isinstance(fields := getattr(item, "model_fields", None), dict):
            todo += [f.annotation for f in fields.values()]
        elif not issubclass(item, enum.Enum):
            continue
        _RECORDS[name] = item


def _kept(field: dataclasses.Field[Any]) -> bool:
    return bool(field.metadata.get("stored", True))


class _Libraries(Mapping[str, Any]):
    """The heavy libraries an annotation names (``mpmath.mpf``), each imported only when an
    annotation that names it is read (a module reaches them as ``lazy.mpmath``)."""

    def __getitem__(self, name: str) -> Any:
        if name not in lazy.LIBRARIES:
            raise KeyError(name)
        return getattr(lazy, name)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


_HEAVY_NAMES = _Libraries()


def _field_type(cls: type, field: dataclasses.Field[Any]) -> Any:
    """A stored field's type, its annotation read as ``typing.get_type_hints`` reads it, field
    by field: a field left out (a key's sympy form) is not evaluated, so sympy is not imported.

    Raises:
        TypeError: an annotation that names what the module does not hold at run time.
    """
    if not isinstance(field.type, str):
        return field.type
    try:  # the annotation is quizgym's own source text, evaluated as typing would
        return eval(field.type, vars(sys.modules[cls.__module__]), _HEAVY_NAMES)  # noqa: S307
    except NameError as exc:
        where = f"{_qualified(cls)}.{field.name}"
        raise TypeError(f"{where}: its type cannot be found: {exc}") from None


def decode(data: Any) -> Any:
    """The value :func:`encode` encoded.

    Only data is decoded: JSON values, the containers and numbers of :func:`encode`, and the
    compiled bank's own records, by a closed table (:func:`_record`). A record is built field
    by field without calling its class's code, so a forged file can give wrong values (which
    its digest and key make a miss) but can run nothing.

    Raises:
        ValueError, TypeError, KeyError, AttributeError, ImportError: data that is not an
            encoding (a damaged or foreign file); callers treat every one as a miss.
    """
    if data is None or isinstance(data, bool | int | float | str):
        return data
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        raise TypeError(f"not an encoded value: {type(data).__name__}")
    if "tuple" in data:
        return tuple(decode(v) for v in data["tuple"])
    if "dict" in data:
        return {decode(k): decode(v) for k, v in data["dict"]}
    if "frozenset" in data:
        return frozenset(decode(v) for v in data["frozenset"])
    if "set" in data and "model" not in data:
        return {decode(v) for v in data["set"]}
    if "float" in data:
        return float(data["float"])
    if "fraction" in data:
        from fractions import Fraction

        numerator, denominator = data["fraction"]
        return Fraction(int(numerator), int(denominator))
    if "decimal" in data:
        from decimal import Decimal

        return Decimal(data["decimal"])
    if "enum" in data:
        kind: Any = _record(data["enum"])
        value = data["value"]
        if not issubclass(kind, enum.Enum) or not isinstance(value, str | int | float):
            raise TypeError(f"not an enum's value: {data['enum']}")
        return kind(value)  # a member looked up by its value: nothing is built
    if "mpf" in data:
        sign, man, exp, bits = data["mpf"]
        with lazy.mpmath.workprec(max(int(bits), 53)):  # every bit as stored, none rounded off
            return lazy.mpmath.mpf((int(sign), int(man), int(exp), int(bits)))
    if "dataclass" in data:
        cls: type = _record(data["dataclass"])
        if not dataclasses.is_dataclass(cls):
            raise TypeError(f"not a dataclass: {data['dataclass']}")
        stored = {name: decode(v) for name, v in data["fields"].items()}
        instance = object.__new__(cls)
        for f in dataclasses.fields(cls):
            if f.name in stored:
                value = stored.pop(f.name)
            elif f.default is not dataclasses.MISSING:
                value = f.default
            elif f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            elif not f.metadata.get("stored", True):
                value = None
            else:
                raise KeyError(f"{data['dataclass']}: no {f.name}")
            object.__setattr__(instance, f.name, value)
        if stored:
            raise KeyError(f"{data['dataclass']}: unknown fields {sorted(stored)}")
        return instance
    if "model" in data:
        model: Any = _record(data["model"])
        if not isinstance(getattr(model, "model_fields", None), dict):
            raise TypeError(f"not a model: {data['model']}")
        fields = {name: decode(v) for name, v in data["fields"].items()}
        if set(fields) != set(model.model_fields):
            raise KeyError(f"{data['model']}: fields {sorted(fields)} are not the model's")
        # Validated when it was stored; model_construct builds it without pydantic's validators.
        return model.model_construct(_fields_set=set(data["set"]), **fields)
    raise TypeError(f"not an encoded value: {sorted(data)}")


# --- files ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Stored:
    """A cache file read back and verified; each part decoded when asked for."""

    key: str
    parts: dict[str, Any]

    def part(self, name: str) -> Any:
        """A part decoded (None when the file has no such part)."""
        data = self.parts.get(name)
        return None if data is None else decode(data)


def _path(folder: Path, key: str) -> Path:
    return folder / f"{key[:40]}.json"


def read(key: str, folder: Path | None = None) -> Stored | None:
    """The cache file of ``key``, verified; None when missing, stale, damaged or switched off."""
    folder = folder if folder is not None else cache_dir()
    if folder is None:
        return None
    try:
        raw = _path(folder, key).read_bytes()
        head, _, body = raw.partition(b"\n")
        magic, file_key, digest = head.decode("ascii").split(" ")
        if magic != FORMAT or file_key != key:
            return None
        if hashlib.sha256(body).hexdigest() != digest:
            return None  # truncated or damaged
        parts = json.loads(body)
        if not isinstance(parts, dict):
            return None
        return Stored(key=key, parts=parts)
    except (OSError, ValueError, UnicodeError):
        return None


def write(key: str, parts: dict[str, Any], folder: Path | None = None) -> Path | None:
    """Write the (encoded) parts as the cache file of ``key``, atomically; None when the cache is
    switched off or its folder cannot be written (the command goes on without it)."""
    folder = folder if folder is not None else cache_dir()
    if folder is None:
        return None
    body = json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode()
    head = f"{FORMAT} {key} {hashlib.sha256(body).hexdigest()}\n".encode("ascii")
    target = _path(folder, key)
    import tempfile

    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # the user's alone
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".writing-", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(head + body)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError:
        return None
    return target


# --- the compiled bank ---------------------------------------------------------------------------


def open_bank(
    name: str | Path, *, partial: bool = False, budget: Budget | None = None
) -> CompiledBank:
    """Load and compile a bank (a path or a bundled name), from the cache when it is fresh.

    What the cache holds is used as is (the bank as validated, exact keys, mistakes, memos); the
    rest is worked out on demand as with :func:`~quizgym.solver.compile_bank`. Call :func:`save`
    when the command is done, so that the next one finds what this one worked out.

    Compiling a bank means validating it (YAML, pydantic) and solving its keys exactly (sympy): work
    that every ``check``, ``export`` and ``practice`` would otherwise do again. After a command has
    worked out what it needed, :func:`save` writes the bank as validated and every table the
    :class:`~quizgym.solver.CompiledBank` filled (exact keys with their 30-digit values and display
    forms, resolved mistakes per variant, and what the commands memoised with
    :meth:`~quizgym.solver.CompiledBank.memo`) to one file in the user cache folder;
    :func:`open_bank` reads it back when the bank's bytes and quizgym are the same, without
    importing sympy.

    **Keyed by content.** A file's name and its first line carry a SHA-256 of: the cache's format,
    quizgym's version, the size and modification time of each of quizgym's own source files (an
    edited checkout never reads what older code wrote), the same for the libraries whose output it
    holds (sympy, mpmath, pydantic, markdown-it, latex2mathml), and the bank file's bytes. Its path
    is not in the key: the same bank elsewhere is the same bank. The domain packs the bank names
    (``packs:``) are kept in the file as validated, each with the SHA-256 of its file's bytes: a
    pack edited since, or one that is now another file (a path beside the bank, moved with it),
    makes the file a miss, and its tables are not merged into the next.

    **Never trusted.** The first line also holds a SHA-256 of the rest; a file whose digest, key or
    format does not match, that is truncated, or that does not decode, is ignored and replaced by
    the next save. Writers write a temporary file beside the target and rename it over the target
    (atomic on POSIX and Windows), so concurrent writers never interleave and a reader sees one
    whole file or the previous one. The digest gives integrity, not authenticity: a file is data,
    decoded by a closed table of the compiled bank's own records (:func:`decode`), so a forged one
    can run nothing; and a folder others can write to is neither read nor written
    (:func:`quizgym.places.trusted`).

    **Generic.** Tables are stored with one codec for the values the compiled bank holds: JSON
    scalars, tuples, lists, dicts (any hashable keys), sets, :class:`~fractions.Fraction`,
    :class:`~decimal.Decimal`, mpmath numbers (exactly, as their binary parts), and quizgym's own
    records (the bank, its packs, keys, mistakes, accepted runs, the preview's parsed text, and the
    dataclasses, pydantic models and enums their fields name), field by field. A new field is stored
    without new code; a value of another type raises :class:`TypeError` when saved, which the
    round-trip test turns into a failure. A dataclass field with ``metadata={"stored": False}`` (a
    key's sympy form) is left out and comes back as its default.

    The folder is ``$QUIZGYM_CACHE_DIR`` when set, else the user cache folder (platformdirs);
    ``QUIZGYM_CACHE=off`` switches the cache off.

    Raises:
        BankNotFoundError: the bank does not exist.
        QuizgymError: the file cannot be read.
        BankError: the bank has errors (all of them, each with its line).
    """
    from quizgym.resources import read_bank_file
    from quizgym.solver.compiled import compile_bank

    path, raw = read_bank_file(name)
    key = bank_key(raw)
    stored = read(key)
    bank = _bank(stored, str(path)) if stored is not None else None
    packs = _packs(stored, bank) if stored is not None and bank is not None else None
    if bank is None or (bank.packs and packs is None):
        from quizgym.loader import parse_bank

        stored = None
        bank = parse_bank(raw, path=str(path))
    book = compile_bank(bank, partial=partial, budget=budget, packs=packs)
    if stored is not None:
        try:
            book.restore({name: stored.part(name) for name in book.STORED})
        except (ValueError, TypeError, KeyError, AttributeError, ImportError):
            book.restore({})  # a damaged table: work everything out again
    book.cache_key = key
    book.cached = stored is not None
    bank._compiled = book
    return book


def _bank(stored: Stored, path: str) -> Bank | None:
    """The bank a cache file holds, with its source map at ``path``; None when damaged."""
    from quizgym.model import Bank, SourceMap

    try:
        bank = stored.part("bank")
        positions = stored.part("positions")
    except (ValueError, TypeError, KeyError, AttributeError, ImportError, RecursionError):
        return None
    if not isinstance(bank, Bank) or not isinstance(positions, dict):
        return None
    bank._source = SourceMap.model_construct(path=path, positions=positions)
    return bank


def _packs(stored: Stored, bank: Bank) -> list[Pack] | None:
    """The packs a cache file holds, each with its source map, when every one is the file the
    bank names now, byte for byte; None otherwise (or when damaged)."""
    from quizgym.model import Pack, SourceMap
    from quizgym.resources import shortest

    if not bank.packs:
        return []
    files = _pack_files(list(bank.packs), bank.path)
    try:
        kept = stored.part("packs")
    except (ValueError, TypeError, KeyError, AttributeError, ImportError, RecursionError):
        return None
    if files is None or not isinstance(kept, list) or len(kept) != len(files):
        return None
    packs = []
    for (name, digest, path), entry in zip(files, kept, strict=True):
        if not isinstance(entry, dict) or (entry.get("name"), entry.get("digest")) != (
            name,
            digest,
        ):
            return None
        pack, positions = entry.get("pack"), entry.get("positions")
        if not isinstance(pack, Pack) or not isinstance(positions, dict):
            return None
        pack._source = SourceMap.model_construct(path=str(shortest(path)), positions=positions)
        packs.append(pack)
    return packs


def _kept_packs(book: CompiledBank) -> list[dict[str, Any]] | None:
    """The packs to keep with a compiled bank: all it names, with their files' digests (None
    when one failed to load: the next command loads them again, and reports it)."""
    names = list(book.bank.packs)
    if len(book.packs) != len(names):
        return None
    digests = pack_digests(names, book.bank.path)
    if digests is None:
        return None
    return [
        {"name": name, "digest": digest, "pack": pack, "positions": dict(pack._source.positions)}
        for (name, digest), pack in zip(digests, book.packs, strict=True)
    ]


def save(book: CompiledBank) -> Path | None:
    """Keep what a compiled bank worked out, with what the cache file of the same bank held
    already; returns the file written, or None (nothing new, no key, or the cache is off).

    A bank gets its key from :func:`open_bank` (or from a caller that sets ``cache_key``)."""
    from quizgym.units import keep_judged

    keep_judged()  # the units the command judged, for the next one
    key = book.cache_key
    if key is None or book.out_of_budget or (book.cached and not book.grew()):
        return None
    tables = book.tables()
    if book.out_of_budget:  # resolving the keys' mistakes ran out
        return None
    packs = _kept_packs(book)
    if book.bank.packs and packs is None:
        return None  # a pack that did not load: nothing to keep that the next command can trust
    before = read(key)
    if before is not None and not _same_packs(before, packs):
        before = None  # a pack changed: what the file holds was worked out with the old one
    if before is not None:  # another command kept other things (keep them: the key is the same)
        for name, table in tables.items():
            try:
                kept = before.part(name)
            except (ValueError, TypeError, KeyError, AttributeError, ImportError, RecursionError):
                continue
            if isinstance(kept, dict):
                tables[name] = {**kept, **table}
    parts = {
        "bank": encode(book.bank),
        "positions": encode(dict(book.bank._source.positions)),
        "packs": encode(packs or []),
        **{name: encode(table) for name, table in tables.items()},
    }
    written = write(key, parts)
    if written is not None:
        book.saved()
        book.cached = True
    return written


def _same_packs(stored: Stored, packs: list[dict[str, Any]] | None) -> bool:
    """Whether a cache file was written with the same pack files (by their digests)."""
    try:
        kept = stored.part("packs")
    except (ValueError, TypeError, KeyError, AttributeError, ImportError, RecursionError):
        return False
    if not isinstance(kept, list):
        return False
    before = [entry.get("digest") if isinstance(entry, dict) else None for entry in kept]
    return before == [entry["digest"] for entry in packs or []]
