#!/usr/bin/env python3
"""Renders tessel.svg to the PNG icons in icons/ (standard library only).

The build has no SVG renderer (Qt SVG is not a dependency), so the window icon
and the hicolor PNG icons are pre-rendered from tessel.svg and kept in the
tree. The renderer understands exactly what the icon uses: <rect> elements
with x, y, width, height, optional rx/ry and an opaque #rrggbb fill, painted
in document order and anti-aliased by supersampling.

Usage: resources/render_icons.py   (rewrites resources/icons/tessel-N.png)
"""

import pathlib
import struct
import xml.etree.ElementTree as ET
import zlib

SIZES = (16, 24, 32, 48, 64, 128, 256)
SUPERSAMPLE = 8  # samples per pixel along each axis
SVG_NS = "{http://www.w3.org/2000/svg}"


def read_rects(svg_path):
    root = ET.parse(svg_path).getroot()
    _, _, vb_w, vb_h = (float(v) for v in root.get("viewBox").split())
    rects = []
    for el in root.iter(SVG_NS + "rect"):
        fill = el.get("fill")
        if not (fill and fill.startswith("#") and len(fill) == 7):
            raise ValueError(f"unsupported fill {fill!r}: use #rrggbb")
        rx = float(el.get("rx", el.get("ry", "0")))
        ry = float(el.get("ry", el.get("rx", "0")))
        rects.append((float(el.get("x", "0")), float(el.get("y", "0")),
                      float(el.get("width")), float(el.get("height")), rx, ry,
                      tuple(int(fill[i:i + 2], 16) for i in (1, 3, 5))))
    return vb_w, vb_h, rects


def inside(px, py, x, y, w, h, rx, ry):
    if px < x or py < y or px > x + w or py > y + h:
        return False
    cx = x + rx if px < x + rx else (x + w - rx if px > x + w - rx else None)
    cy = y + ry if py < y + ry else (y + h - ry if py > y + h - ry else None)
    if cx is None or cy is None or rx == 0 or ry == 0:
        return True
    return ((px - cx) / rx) ** 2 + ((py - cy) / ry) ** 2 <= 1.0


def render(size, vb_w, vb_h, rects):
    # Premultiplied RGBA, float, composited with "source over".
    img = [[0.0, 0.0, 0.0, 0.0] for _ in range(size * size)]
    sx, sy = size / vb_w, size / vb_h
    n = SUPERSAMPLE
    offsets = [(i + 0.5) / n for i in range(n)]
    for (x, y, w, h, rx, ry, rgb) in rects:
        x, y, w, h, rx, ry = x * sx, y * sy, w * sx, h * sy, rx * sx, ry * sy
        for py in range(max(0, int(y)), min(size, int(y + h) + 1)):
            for px in range(max(0, int(x)), min(size, int(x + w) + 1)):
                hits = sum(inside(px + ox, py + oy, x, y, w, h, rx, ry)
                           for oy in offsets for ox in offsets)
                if not hits:
                    continue
                a = hits / (n * n)
                p = img[py * size + px]
                for c in range(3):
                    p[c] = rgb[c] / 255.0 * a + p[c] * (1.0 - a)
                p[3] = a + p[3] * (1.0 - a)
    return img


def write_png(path, size, img):
    raw = bytearray()
    for row in range(size):
        raw.append(0)  # filter: none
        for r, g, b, a in img[row * size:(row + 1) * size]:
            if a > 0:
                r, g, b = r / a, g / a, b / a  # un-premultiply
            raw.extend(round(v * 255) for v in (r, g, b, a))

    def chunk(tag, data):
        body = tag + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    png += chunk(b"IEND", b"")
    path.write_bytes(png)


def main():
    here = pathlib.Path(__file__).resolve().parent
    vb_w, vb_h, rects = read_rects(here / "tessel.svg")
    (here / "icons").mkdir(exist_ok=True)
    for size in SIZES:
        out = here / "icons" / f"tessel-{size}.png"
        write_png(out, size, render(size, vb_w, vb_h, rects))
        print(out.relative_to(here))


if __name__ == "__main__":
    main()
