#!/usr/bin/env python3
"""Checks screenshots of the view modes (the 3D view only: right of the 300 px panel).

  view_pixels.py strain FILE.png MIN_RED MIN_WHITE
      the strain view shows at least MIN_RED red pixels (stretched to the tear threshold) and MIN_WHITE
      white ones (at rest)
  view_pixels.py edges SHADED.png WIREFRAME.png MIN_RATIO
      the wireframe view has at least MIN_RATIO times the edge pixels (a step of more than 40 grey levels to
      the right or below) of the shaded view of the same scene"""
import subprocess
import sys

PANEL = 300


def load(path):
    size = subprocess.run(["identify", "-format", "%w %h", path], check=True, capture_output=True, text=True).stdout
    w, h = map(int, size.split())
    raw = subprocess.run(["convert", path, "-depth", "8", "rgb:-"], check=True, capture_output=True).stdout
    assert len(raw) == w * h * 3, f"expected {w * h * 3} bytes, got {len(raw)}"
    return w, h, raw


def strain(path):
    w, h, raw = load(path)
    red = white = 0
    for y in range(h):
        for x in range(PANEL, w):
            i = 3 * (y * w + x)
            r, g, b = raw[i], raw[i + 1], raw[i + 2]
            red += r > 150 and g < 0.45 * r and b < 0.45 * r
            white += min(r, g, b) > 200 and max(r, g, b) - min(r, g, b) < 20
    return red, white


def edges(path):
    w, h, raw = load(path)
    grey = [(299 * raw[3 * k] + 587 * raw[3 * k + 1] + 114 * raw[3 * k + 2]) // 1000 for k in range(w * h)]
    count = 0
    for y in range(h - 1):
        for x in range(PANEL, w - 1):
            k = y * w + x
            count += abs(grey[k + 1] - grey[k]) + abs(grey[k + w] - grey[k]) > 40
    return count


if sys.argv[1] == "strain":
    path, min_red, min_white = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    red, white = strain(path)
    print(f"{path}: {red} red, {white} white pixels (need {min_red}, {min_white})")
    sys.exit(0 if red >= min_red and white >= min_white else 1)
elif sys.argv[1] == "edges":
    shaded, wireframe, ratio = sys.argv[2], sys.argv[3], float(sys.argv[4])
    a, b = edges(shaded), edges(wireframe)
    print(f"edge pixels: shaded {a}, wireframe {b} (ratio {b / max(a, 1):.2f}, need {ratio})")
    sys.exit(0 if b >= ratio * a else 1)
else:
    sys.exit(__doc__)
