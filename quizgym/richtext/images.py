"""An image in bank text (``![alt](figures/x.png)``) in; the file beside the bank, checked, or what
is wrong with it out."""

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
    try:
        content = _read_inside(target, folder)
    except OSError as exc:
        problems.append(f"image {src} cannot be read: {exc.strerror or exc}")
        return problems
    problem = content_problem(content, IMAGE_TYPES[suffix])
    if problem is not None:
        problems.append(f"image {src} {problem}")
    return problems


MAX_PIXELS = 50_000_000
"""Most pixels an image may declare (50 megapixels, a 300 dpi A3 scan is 17): a small file that
decodes to gigapixels would cost gigabytes in every PDF."""
_SVG_REFERENCE = re.compile(
    r"""(?:\bhref\s*=\s*["']\s*([^"']*)["'])|(?:\burl\(\s*["']?\s*([^)"'\s]*))""", re.IGNORECASE
)


def _read_inside(path: Path, folder: Path) -> bytes:
    """A file's bytes, read only when it lies inside ``folder`` once every link is followed
    (the final name opened without following a link, so none can be slipped in between)."""
    import os

    real = path.resolve()
    if not real.is_relative_to(folder.resolve()):
        raise OSError(0, "it lies outside the bank's folder")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    handle = os.open(real, flags)
    with os.fdopen(handle, "rb") as stream:
        return stream.read(MAX_IMAGE_BYTES + 1)


def content_problem(data: bytes, mime: str) -> str | None:
    """What is wrong with an image file's bytes for the type its name says, or None: other
    bytes (a text file named ``x.png``), more than :data:`MAX_PIXELS` pixels declared, or an
    SVG that refers to anything outside itself (an address, a file, an entity)."""
    if len(data) > MAX_IMAGE_BYTES:
        return f"is larger than {MAX_IMAGE_BYTES // 1024 // 1024} MB"
    kind = mime.split("/")[1]
    if kind == "svg+xml":
        return _svg_problem(data)
    size = _dimensions(data, kind)
    if size is None:
        return f"is not a {kind.upper()} image (its bytes are of another kind of file)"
    width, height = size
    if width * height > MAX_PIXELS:
        return (
            f"declares {width:,} × {height:,} pixels; quizgym ships images of at most "
            f"{MAX_PIXELS // 1_000_000} megapixels (scale it down)"
        )
    return None


def _dimensions(data: bytes, kind: str) -> tuple[int, int] | None:
    """The width and height a PNG, GIF, JPEG or WebP file declares, or None when its bytes are
    not of that kind."""
    if kind == "png":
        if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR" or len(data) < 24:
            return None
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if kind == "gif":
        if data[:6] not in (b"GIF87a", b"GIF89a") or len(data) < 10:
            return None
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if kind == "webp":
        return _webp_dimensions(data)
    return _jpeg_dimensions(data)


def _webp_dimensions(data: bytes) -> tuple[int, int] | None:
    if data[:4] != b"RIFF" or data[8:12] != b"WEBP" or len(data) < 30:
        return None
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        return width, int.from_bytes(data[27:30], "little") + 1
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 ":
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        return width, int.from_bytes(data[28:30], "little") & 0x3FFF
    return None


def _jpeg_dimensions(data: bytes) -> tuple[int, int] | None:
    """A JPEG's frame size, from its first start-of-frame segment."""
    if data[:3] != b"\xff\xd8\xff":
        return None
    at = 2
    while at + 9 < len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill bytes
            at += 1
            continue
        length = int.from_bytes(data[at + 2 : at + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height = int.from_bytes(data[at + 5 : at + 7], "big")
            return int.from_bytes(data[at + 7 : at + 9], "big"), height
        at += 2 + length
    return None


def _svg_problem(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "is not an SVG image (not UTF-8 text)"
    if "<svg" not in text[:4096] and "<svg" not in text:
        return "is not an SVG image (no <svg> element)"
    if "@import" in text:
        return "imports a style sheet; quizgym ships SVG images that hold only themselves"
    if "<!ENTITY" in text:
        return "declares an XML entity; quizgym ships SVG images that hold only themselves"
    for found in _SVG_REFERENCE.finditer(text):
        target = (found[1] if found[1] is not None else found[2]).strip()
        if target and not target.startswith(("#", "data:")):
            return (
                f"refers to {target[:60]}; an SVG quizgym ships holds everything it shows "
                "(embed the picture, or draw it in the SVG)"
            )
    return None


@dataclass(frozen=True)
class ImageFile:
    """An image of a bank, found: its path as written, its file and its type."""

    src: str
    path: Path
    mime: str
    folder: Path | None = None
    """The bank's folder, which the file must lie in when it is read."""

    @property
    def name(self) -> str:
        """The path as written, normalised (``figures/x.png``): where copies are written."""
        return PurePosixPath(*PurePosixPath(self.src.replace("\\", "/")).parts).as_posix()

    def data(self) -> bytes:
        """The file's bytes, read as :func:`image_problems` checked them: inside the bank's
        folder, of the type the name says, of bounded size and pixels.

        Raises:
            QuizgymError: the file is no longer the image that was checked.
        """
        from quizgym.errors import QuizgymError

        folder = self.folder if self.folder is not None else self.path.parent
        try:
            data = _read_inside(self.path, folder)
        except OSError as exc:
            raise QuizgymError(f"image {self.src} cannot be read: {exc.strerror or exc}") from exc
        problem = content_problem(data, self.mime)
        if problem is not None:
            raise QuizgymError(f"image {self.src} {problem}")
        return data

    def data_uri(self) -> str:
        """The image as a ``data:`` URI (self-contained HTML, PDF)."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data()).decode('ascii')}"


def find_image(src: str, *, folder: Path) -> ImageFile:
    """The file of an image that has no path problem.

    An image is a path relative to the bank file's folder (the current folder for a bank built in
    code) that stays inside that folder, names a file of a type every output can carry, and has alt
    text (the description a screen reader reads, and what the terminal drill shows). Anything else
    is a ``check`` finding, and ``render`` and ``export`` refuse the bank with the same message
    rather than write a page with a hole in it.

    Raises:
        ValueError: the path has a problem (the message says which).
    """
    problems = image_problems(src, "-", folder=folder)
    if problems:
        raise ValueError(problems[0])
    suffix = PurePosixPath(src).suffix.lower()
    return ImageFile(src, (folder / src).resolve(), IMAGE_TYPES[suffix], folder)
