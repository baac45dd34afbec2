"""Bank text in, the characters it cannot carry out: what ``check`` reports, and what every XML
writer strips."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["control_characters", "xml_safe"]

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")
_SPACES = {"\x0b": " ", "\x0c": " "}


def xml_safe(text: str) -> str:
    """Text without the characters XML cannot hold (a form feed or vertical tab: a space).

    XML 1.0 holds tab, line feed, carriage return and the characters from U+0020 on, but not the
    other C0 controls (a form feed, an escape), lone surrogates, U+FFFE or U+FFFF: one of them makes
    a Moodle or QTI file that no LMS reads. ``check`` reports those and the other controls (DEL and
    C1, which drive terminals) at the field that holds them; the writers drop them (a form feed and
    a vertical tab become a space), so no output is broken even for a bank that was not checked.
    """
    if _NOT_XML.search(text) is None:
        return text
    return _NOT_XML.sub(lambda found: _SPACES.get(found[0], ""), text)


def control_characters(text: str) -> list[tuple[int, str]]:
    """Where a text holds a control character, a lone surrogate or a non-character, and its
    name (``U+000C FORM FEED``): the offset and name of each, in order."""
    found = []
    for match in _CONTROL.finditer(text):
        char = match[0]
        name = _NAMES.get(char) or unicodedata.name(char, "")
        label = f"U+{ord(char):04X}" + (f" {name}" if name else "")
        found.append((match.start(), label))
    return found


_NAMES = {
    "\x00": "NUL",
    "\x07": "BELL",
    "\x08": "BACKSPACE",
    "\x0b": "VERTICAL TAB",
    "\x0c": "FORM FEED",
    "\x1b": "ESCAPE",
    "\x7f": "DELETE",
}
"""Names of the controls the Unicode database leaves unnamed."""
