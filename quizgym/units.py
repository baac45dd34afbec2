"""A unit a student typed and the question's units in; whether it is the question's, convertible
(with the value converted), or wrong out."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from quizgym.places import cache_dir, library_stamp
from quizgym.version import __version__

if TYPE_CHECKING:
    import pint

__all__ = ["Conversion", "convert", "is_unit", "keep_judged", "unit_problem"]

_EXTRA_UNITS = (
    # Information: Pint defines bit = [] (a dimensionless base unit) and byte; nats and bans
    # are the natural and decimal units (1 nat = 1/ln 2 bits, 1 ban = log2(10) bits).
    f"nat = {1 / math.log(2)!r} * bit = nats",
    f"ban = {math.log2(10)!r} * bit = hartley = dit",
)


MAX_UNIT = 100
"""Longest units text judged (a unit is a few symbols; a longer text is a label)."""


@functools.cache
def _registry() -> pint.UnitRegistry[Any]:
    import pint  # the units library is loaded only when a unit has to be judged

    registry: pint.UnitRegistry[Any] = pint.UnitRegistry(autoconvert_offset_to_baseunit=False)
    for definition in _EXTRA_UNITS:
        registry.define(definition)
    return registry


@functools.lru_cache(maxsize=4096)
def _unit(text: str) -> Any | None:
    """The Pint unit a text names, or None when it names none."""
    import pint

    if len(text) > MAX_UNIT:
        return None
    try:
        unit = _registry().parse_units(text)
    except (pint.PintError, AttributeError, TypeError, ValueError, SyntaxError, KeyError):
        return None
    except (ZeroDivisionError, OverflowError, RecursionError):  # m/0, 1/0, ((((m))))
        return None
    return unit


def is_unit(text: str) -> bool:
    """Whether the units library knows this unit (``m/s``: yes; ``tokens``: a label)."""
    key = json.dumps(["unit", text.strip()])
    kept = _KEPT.get(key)
    if isinstance(kept, bool):
        return kept
    found = _unit(text.strip()) is not None
    _KEPT.add(key, found)
    return found


def unit_problem(text: str) -> str:
    """Why a question's ``units`` look like a unit but are none ('' when they are a unit, or a
    plain word used as a label, such as ``tokens``)."""
    text = text.strip()
    if is_unit(text) or text.replace(" ", "").isalpha():
        return ""
    shown = text if len(text) <= 60 else text[:59] + "…"
    return (
        f"units {shown!r} are not a unit the units library knows (m/s, km/h, %, J/(kg K), …); "
        "answers in other units cannot be converted, and only this text is accepted after the "
        "number"
    )


@dataclass(frozen=True, kw_only=True)
class Conversion:
    """How a typed unit relates to a question's: the number in the question's unit is
    ``scale · typed + offset``."""

    kind: Literal["same", "converted", "incompatible", "unknown"]
    scale: float = 1.0
    offset: float = 0.0
    spelled: str = ""
    """The unit as read when its letters were read apart (``m*s^-1`` for ``ms^-1`` in a
    question in m/s: metres per second, as students write it, where milliseconds⁻¹ would be
    no speed); '' when it was read as typed. Such a unit is always ``converted``, even when
    nothing changes (scale 1, offset 0), so that the answer says how it was read."""

    @property
    def identity(self) -> bool:
        """The number typed is the number in the question's unit (no scale, no offset)."""
        return self.scale == 1.0 and self.offset == 0.0

    @property
    def usable(self) -> bool:
        """Whether the number can be graded in the question's unit."""
        return self.kind in {"same", "converted"}


_KINDS = ("same", "converted", "incompatible", "unknown")
_SAME = Conversion(kind="same")
_INCOMPATIBLE = Conversion(kind="incompatible")
_UNKNOWN = Conversion(kind="unknown")


def _label(text: str) -> str:
    word = " ".join(text.casefold().split())
    return word[:-1] if word.endswith("s") and len(word) > 1 else word


@functools.lru_cache(maxsize=4096)
def convert(typed: str, expected: str | None) -> Conversion:
    """Judge the unit a student typed against a question's units (see :func:`_convert`),
    from what an earlier run worked out when it can (:class:`_Kept`): Pint is imported, and
    its registry built, only for a unit no run has judged yet.

    The expression language reads a unit after a number only by its shape (``10 m/s``, ``15.3%``,
    ``2.30 nats``: see :func:`quizgym.expr.read_answer`); this module judges it against the
    question's ``units`` with the units library Pint, which is imported, and its registry built,
    only when a unit has to be judged (once per process).

    A question's ``units`` are either a unit Pint knows (``m/s``, ``km/h``, ``%``, ``deg``, ``J``)
    or a *label* it does not (``tokens``): a label is matched as written, case aside and with or
    without a plural ``s``. Information units are units here: ``nat`` (natural log), ``bit`` (log
    base 2) and ``ban`` (log base 10, also ``hartley``, ``dit``) convert into each other, and into
    nothing else (Pint's own ``bit`` is dimensionless, which would make bits convertible to a
    percentage; the root units are compared instead of the dimensions, so it is not).

    Threat model: a unit reaches Pint only after the expression language has held it to a closed
    shape (letters, ``%``, single-digit integer powers, at most 8 factors and 40 characters), so
    Pint's own parser sees nothing larger; Pint never evaluates Python.
    """
    if expected is not None and " ".join(typed.split()) == " ".join(expected.split()):
        return _SAME
    key = json.dumps(["convert", typed, expected])
    kept = _conversion(_KEPT.get(key))
    if kept is not None:
        return kept
    found = _convert(typed, expected)
    if not found.usable and expected is not None:
        found = _apart(typed, expected) or found
    _KEPT.add(key, [found.kind, found.scale, found.offset, found.spelled])
    return found


def _conversion(kept: Any) -> Conversion | None:
    """A kept conversion, or None when it is not one ``_convert`` could have given: a finite
    non-zero scale and a finite offset for ``converted``, 1 and 0 for the other kinds (and a
    unit read apart only for ``converted``)."""
    if not (isinstance(kept, list) and len(kept) == 4 and kept[0] in _KINDS):
        return None
    kind, scale, offset, spelled = kept
    if not (isinstance(scale, float) and isinstance(offset, float) and isinstance(spelled, str)):
        return None
    if kind == "converted":
        ok = math.isfinite(scale) and math.isfinite(offset) and scale != 0
    else:
        ok = scale == 1.0 and offset == 0.0 and not spelled
    return Conversion(kind=kind, scale=scale, offset=offset, spelled=spelled) if ok else None


_WORD = re.compile(r"[A-Za-z]+")


def _apart(typed: str, expected: str) -> Conversion | None:
    """A unit that is not the question's kind of quantity as typed, read with one word's letters
    apart (``ms^-1`` as ``m*s^-1``, ``Nm`` as ``N*m``), when exactly one such reading converts
    to the question's units; None otherwise. ``ms`` stays milliseconds wherever milliseconds
    convert (a question in seconds), as any unit read as typed does."""
    found: dict[tuple[float, float], str] = {}
    for word in _WORD.finditer(typed):
        text = word.group()
        for cut in range(1, len(text)):
            first, second = text[:cut], text[cut:]
            if _unit(first) is None or _unit(second) is None:
                continue
            spelled = f"{typed[: word.start()]}{first}*{second}{typed[word.end() :]}"
            conversion = _convert(spelled, expected)
            if conversion.usable:
                found.setdefault((conversion.scale, conversion.offset), spelled)
    if len(found) != 1:
        return None
    ((scale, offset), spelled), *_ = found.items()
    return Conversion(kind="converted", scale=scale, offset=offset, spelled=spelled)


def _convert(typed: str, expected: str | None) -> Conversion:
    """Judge the unit a student typed against a question's units.

    Args:
        typed: the unit after the number, as the expression language read it (``km/h``).
        expected: the question's ``units`` (None: the question has none, and only a ratio
            such as ``%`` may be typed, read as the plain number: 15% is 0.15).

    Returns:
        ``same`` (nothing to convert), ``converted`` (with the scale and offset to the
        question's unit), ``incompatible`` (a unit, but of something else) or ``unknown``
        (not a unit the library knows, nor the question's label).
    """
    unit = _unit(typed)  # (:func:`convert` has answered the question's own units as typed)
    if unit is None:
        # Not a unit the library knows: the question's own word, in another case or number
        # (``Tokens`` for ``tokens``, ``M/S`` for ``m/s``), or nothing quizgym can read. A text
        # that is a unit is never matched loosely: ``ms`` is milliseconds, not metres.
        if expected is not None and _label(typed) == _label(expected):
            return _SAME
        return _UNKNOWN
    registry = _registry()
    target = registry.dimensionless if expected is None else _unit(expected)
    if target is None:  # the question's units are a label, and the student typed a real unit
        return _INCOMPATIBLE
    if registry.get_root_units(unit)[1] != registry.get_root_units(target)[1]:
        return _INCOMPATIBLE
    import pint

    try:
        zero = float(registry.Quantity(0.0, unit).to(target).magnitude)
        one = float(registry.Quantity(1.0, unit).to(target).magnitude)
    except (pint.PintError, ZeroDivisionError, OverflowError, ValueError):
        # one temperature scale's difference for another's temperature (delta_degC for degC):
        # of the same dimension, but no number of one is a number of the other
        return _INCOMPATIBLE
    scale = one - zero
    if abs(scale - 1) <= 1e-15 and abs(zero) <= 1e-15:
        return _SAME
    return Conversion(kind="converted", scale=scale, offset=zero)


class _Kept:
    """What Pint said in earlier runs (``units.json`` in the cache folder), for this quizgym,
    this Pint and these extra units. A file that is missing, damaged (its entries' SHA-256 is
    kept with them) or made by other code is never trusted, only replaced, and an entry that is
    no conversion Pint could have given is judged again. What a run adds is written by
    :func:`keep_judged`, which :func:`quizgym.solver.cache.save` calls when a compiled bank is
    kept (the commands, ``grade_submissions``, ``export_bank``): a process that only grades
    answers (``grade_response``) writes nothing."""

    MOST = 4096
    """Entries kept at most (students type few distinct units; a file stays small)."""

    def __init__(self) -> None:
        self._known: dict[str, Any] | None = None
        self._new: dict[str, Any] = {}

    @staticmethod
    def _stamp() -> str:
        parts = [__version__, *_EXTRA_UNITS, library_stamp("pint"), library_stamp(__name__)]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    @staticmethod
    def _digest(entries: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(entries, sort_keys=True).encode()).hexdigest()

    @staticmethod
    def _path() -> Path | None:
        folder = cache_dir()
        return None if folder is None else folder / "units.json"

    def _read(self, path: Path) -> dict[str, Any]:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("stamp") != self._stamp():
                return {}
            entries = data.get("entries")
            if not isinstance(entries, dict) or data.get("digest") != self._digest(entries):
                return {}
        except (OSError, ValueError, TypeError, RecursionError):  # TypeError: a stamp that
            return {}  # cannot be made (a frozen bundle), or entries json cannot write back
        return entries

    def get(self, key: str) -> Any:
        """What an earlier run (or this one) found for ``key``, or None."""
        if key in self._new:
            return self._new[key]
        if self._known is None:
            path = self._path()
            self._known = {} if path is None else self._read(path)
        return self._known.get(key)

    def add(self, key: str, value: Any) -> None:
        """Keep what this run found (written by :meth:`write`)."""
        self._new[key] = value

    def write(self) -> None:
        """Write this run's findings with the file's, if there is room (never raises)."""
        path = self._path()
        if path is None or not self._new:
            return
        entries = {**self._read(path), **self._new}
        self._new = {}
        if len(entries) > self.MOST:
            return
        try:
            data = {"stamp": self._stamp(), "digest": self._digest(entries), "entries": entries}
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # the user's alone
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        except (OSError, TypeError):  # a read-only or missing cache folder: nothing is kept
            return
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream)
            os.replace(temporary, path)
        except OSError:
            Path(temporary).unlink(missing_ok=True)


_KEPT = _Kept()


def keep_judged() -> None:
    """Keep the units this process judged with Pint for the next run (``units.json``; nothing
    when the cache is off or nothing is new). Never raises."""
    _KEPT.write()
