"""Text from a bank or a student in, the same text made inert for a terminal out: shown, never
obeyed."""

from __future__ import annotations

import re

_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(
    # C0 except tab (09) and newline (0a); DEL and C1; bidi controls; lone surrogates
    # (undecodable input bytes under surrogateescape), which cannot even be encoded for output.
    f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_CONTROLS}\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_controls(text: str) -> str:
    r"""Text that cannot drive a terminal: control and bidi characters spelled out visibly.

    Threat model: bank text (prompts, choices, feedback, explanations, hints, titles) comes from
    whoever wrote the bank, and answers, ids and file names come from students; all of them reach
    the terminal. A terminal obeys some characters instead of showing them: ESC starts sequences
    that retitle the window (``ESC ] 0 ; … BEL``), clear the screen (``ESC [ 2 J``), move the cursor
    or redefine keys; the 8-bit C1 controls (U+0080–U+009F, e.g. U+009B CSI) do the same on some
    terminals; CR and BS overwrite what was printed; and the bidi embeddings, overrides and isolates
    (U+202A–U+202E, U+2066–U+2069, the "Trojan source" characters) make text that follows read in
    another order than it is stored. rich passes all of these through (it drops only BEL, BS, VT, FF
    and CR), so every string meant for the terminal goes through :func:`escape_controls` first.

    The characters are *escaped*, not dropped: ``\\x1b``, ``\\u202e`` stay visible, so an author
    sees that the bank holds them and nothing a student typed disappears silently. Newline and tab
    are kept. This module imports nothing from quizgym: any layer may use it.

    Args:
        text: any text, e.g. ``"Title\x1b]0;pwned\x07"``.

    Returns:
        The same text with C0 controls (except newline and tab), DEL, C1 controls, the bidi
        embedding/override/isolate characters and lone surrogates written as ``\x1b``,
        ``\u202e`` …: e.g. ``"Title\\x1b]0;pwned\\x07"``. Text without them is returned as is.
    """
    return _CONTROLS.sub(_escape, text)


__all__ = ["escape_controls"]
