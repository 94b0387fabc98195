#!/usr/bin/env python3
"""Finds the cloth in screenshots by its colour.

  cloth_pixels.py share FILE.png MIN_PERCENT MAX_PERCENT
      the share of cloth-red pixels must lie in [MIN, MAX] percent
  cloth_pixels.py moved BEFORE.png AFTER.png DX_MIN
      the centroid of the cloth-red pixels must move right by at least DX_MIN pixels

The cloth is drawn in drape's red (sRGB 0.85, 0.18, 0.14); lit, its pixels stay clearly red: red dominates
green and blue. Ground, sky, sphere, pins and panel are grey, blue or yellow."""
import subprocess
import sys


def cloth_pixels(path):
    size = subprocess.run(["identify", "-format", "%w %h", path], check=True, capture_output=True, text=True).stdout
    w, h = map(int, size.split())
    raw = subprocess.run(["convert", path, "-depth", "8", "rgb:-"], check=True, capture_output=True).stdout
    assert len(raw) == w * h * 3, f"expected {w * h * 3} bytes, got {len(raw)}"
    xs = []
    for i in range(0, len(raw), 3):
        r, g, b = raw[i], raw[i + 1], raw[i + 2]
        if r > 60 and r > 2 * g and r > 2 * b:
            xs.append((i // 3) % w)
    return w, h, xs


if sys.argv[1] == "share":
    path, lo, hi = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    w, h, xs = cloth_pixels(path)
    share = 100.0 * len(xs) / (w * h)
    print(f"{path}: {w}x{h}, cloth pixels {len(xs)} ({share:.2f} %), accepted {lo}-{hi} %")
    sys.exit(0 if lo <= share <= hi else 1)
elif sys.argv[1] == "moved":
    before, after, dx_min = sys.argv[2], sys.argv[3], float(sys.argv[4])
    _, _, xa = cloth_pixels(before)
    _, _, xb = cloth_pixels(after)
    if not xa or not xb:
        print("no cloth in one of the pictures")
        sys.exit(1)
    ca, cb = sum(xa) / len(xa), sum(xb) / len(xb)
    print(f"cloth centroid x: {ca:.0f} px before, {cb:.0f} px while dragged (moved {cb - ca:+.0f} px, need >= {dx_min})")
    sys.exit(0 if cb - ca >= dx_min else 1)
else:
    sys.exit(__doc__)
