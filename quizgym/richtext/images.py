"""Images in bank text: ``![alt](figures/x.png)``, files beside the bank, shipped everywhere.

An image is a path relative to the bank file's folder (the current folder for a bank built in
code) that stays inside that folder, names a file of a type every output can carry, and has alt
text (the description a screen reader reads, and what the terminal drill shows). Anything else
is a ``check`` finding, and ``render`` and ``export`` refuse the bank with the same message
rather than write a page with a hole in it.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".webp": "image/webp",
}
"""The image types shipped: the ones every target (browsers, WeasyPrint, the LMSs) shows."""
MAX_IMAGE_BYTES = 5 * 1024 * 1024
"""Largest image file shipped (it is copied into every package and page)."""

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def image_folder(bank_path: str) -> Path:
    """The folder a bank's images are relative to: its file's folder, or the current one."""
    return Path(bank_path).resolve().parent if bank_path else Path.cwd().resolve()


def image_problems(src: str, alt: str, *, folder: Path) -> list[str]:
    """What is wrong with an image of a bank whose images live in ``folder`` (empty: nothing).

    Args:
        src: the path as written, ``figures/x.png``.
        alt: its alt text.
        folder: the bank's folder (:func:`image_folder`).
    """
    problems = []
    if not alt.strip():
        problems.append(
            f"image {src} has no alt text: write what it shows, ![a bar chart of …]({src})"
        )
    if _SCHEME.match(src) or src.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", src):
        problems.append(
            f"image {src} is an absolute path or an address; write a path relative to the "
            "bank's folder (figures/x.png), so the image travels with the bank"
        )
        return problems
    if not src.strip():
        problems.append("an image without a path")
        return problems
    target = (folder / src).resolve()
    if not target.is_relative_to(folder):
        problems.append(f"image {src} leaves the bank's folder; keep images beside the bank")
        return problems
    suffix = PurePosixPath(src).suffix.lower()
    if suffix not in IMAGE_TYPES:
        kinds = ", ".join(sorted(IMAGE_TYPES))
        problems.append(f"image {src}: quizgym ships only {kinds} images")
        return problems
    if not target.is_file():
        problems.append(f"image {src} does not exist (no file {target})")
        return problems
    size = target.stat().st_size
    if size > MAX_IMAGE_BYTES:
        problems.append(
            f"image {src} is {size / 1024 / 1024:.1f} MB; quizgym ships images of at most "
            f"{MAX_IMAGE_BYTES // 1024 // 1024} MB"
        )
    return problems


@dataclass(frozen=True)
class ImageFile:
    """An image of a bank, found: its path as written, its file and its type."""

    src: str
    path: Path
    mime: str

    @property
    def name(self) -> str:
        """The path as written, normalised (``figures/x.png``): where copies are written."""
        return PurePosixPath(*PurePosixPath(self.src.replace("\\", "/")).parts).as_posix()

    def data(self) -> bytes:
        """The file's bytes."""
        return self.path.read_bytes()

    def data_uri(self) -> str:
        """The image as a ``data:`` URI (self-contained HTML, PDF)."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data()).decode('ascii')}"


def find_image(src: str, *, folder: Path) -> ImageFile:
    """The file of an image that has no path problem.

    Raises:
        ValueError: the path has a problem (the message says which).
    """
    problems = image_problems(src, "-", folder=folder)
    if problems:
        raise ValueError(problems[0])
    suffix = PurePosixPath(src).suffix.lower()
    return ImageFile(src, (folder / src).resolve(), IMAGE_TYPES[suffix])
