"""Deterministic packaging shared by the zip-based formats: XML bytes and zips with fixed dates."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
import zipfile

from quizgym.richtext.chars import xml_safe

FIXED_DATE = (1980, 1, 1, 0, 0, 0)
"""Every zip entry's date: the zip epoch, so the same bank gives the same bytes."""


def sub(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    """A child element with optional text and attributes."""
    element = ET.SubElement(parent, tag, attrs)
    if text is not None:
        element.text = text
    return element


def xml_bytes(root: ET.Element) -> bytes:
    """An element as an indented UTF-8 XML document with a declaration, without the characters
    XML cannot hold (bank text with a form feed or an escape still gives a well-formed file)."""
    ET.indent(root)
    body = xml_safe(ET.tostring(root, encoding="unicode"))
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{body}\n'.encode()


def write_zip(entries: list[tuple[str, bytes]]) -> bytes:
    """A deflated zip of ``(name, data)`` entries, in the given order, with fixed dates."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()
