"""Read the pixels of a PNG a headless Chromium wrote (8-bit RGB or RGBA, not interlaced), and
find upright bars of one colour in it: what a screenshot test checks it shows."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

Pixel = tuple[int, int, int]


def pixels(path: Path) -> list[list[Pixel]]:
    """The rows of *path*'s pixels as (r, g, b)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat, head = 8, b"", b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            head = body
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", head)
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("not an 8-bit RGB(A) PNG without interlace")
    size = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * size
    rows: list[list[Pixel]] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for x in range(stride):
            left = line[x - size] if x >= size else 0
            up = previous[x]
            corner = previous[x - size] if x >= size else 0
            if kind == 1:
                line[x] = (line[x] + left) & 0xFF
            elif kind == 2:
                line[x] = (line[x] + up) & 0xFF
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[x] = (line[x] + best) & 0xFF
        rows.append([tuple(line[i : i + 3]) for i in range(0, stride, size)])  # type: ignore[misc]
        previous = line
    return rows


def bars(rows: list[list[Pixel]], colour: Pixel, width: int, min_height: int) -> list[int]:
    """The top rows of each upright bar of *colour* exactly *width* pixels wide and at least
    *min_height* tall (a lane's coloured left edge), top to bottom."""

    def edge(y: int) -> int | None:
        xs = [x for x, p in enumerate(rows[y]) if p == colour]
        for i, x in enumerate(xs):
            run = xs[i : i + width]
            before = i > 0 and xs[i - 1] == x - 1
            after = i + width < len(xs) and xs[i + width] == x + width
            if len(run) == width and run[-1] == x + width - 1 and not before and not after:
                return x
        return None

    found, top, at = [], None, None
    for y in range(len(rows) + 1):
        x = edge(y) if y < len(rows) else None
        if x is not None and (top is None or x == at):
            top, at = (y if top is None else top), x
            continue
        if top is not None and y - top >= min_height:
            found.append(top)
        top, at = (y, x) if x is not None else (None, None)
    return found
