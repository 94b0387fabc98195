#!/usr/bin/env python3
"""Finds the cloth in screenshots by its colour.

  cloth_pixels.py share FILE.png MIN_PERCENT MAX_PERCENT
      the share of cloth-red pixels must lie in [MIN, MAX] percent
  cloth_pixels.py moved BEFORE.png AFTER.png DX_MIN
      the centroid of the cloth-red pixels must move right by at least DX_MIN pixels
  cloth_pixels.py worn FILE.png MIN_PERCENT
      the `character` preset: cloth-red pixels (the cape) and wood-toned ones (the walker, drawn from its glTF
      file) must each make up at least MIN percent

The cloth is drawn in drape's red (sRGB 0.85, 0.18, 0.14); lit, its pixels stay clearly red: red dominates
green and blue. Ground, sky, sphere, pins and panel are grey, blue or yellow."""
import subprocess
import sys


def pixels(path):
    size = subprocess.run(["identify", "-format", "%w %h", path], check=True, capture_output=True, text=True).stdout
    w, h = map(int, size.split())
    raw = subprocess.run(["convert", path, "-depth", "8", "rgb:-"], check=True, capture_output=True).stdout
    assert len(raw) == w * h * 3, f"expected {w * h * 3} bytes, got {len(raw)}"
    return w, h, [(i // 3, raw[i], raw[i + 1], raw[i + 2]) for i in range(0, len(raw), 3)]


def is_cloth(r, g, b):
    return r > 60 and r > 2 * g and r > 2 * b


def is_wood(r, g, b):
    """The walker's sRGB (0.78, 0.66, 0.52), lit: warm, red over green over blue, unlike the grey-blue ground."""
    return r > 90 and r - b > 40 and g - b > 15 and not is_cloth(r, g, b)


def cloth_pixels(path):
    w, h, all_pixels = pixels(path)
    return w, h, [k % w for k, r, g, b in all_pixels if is_cloth(r, g, b)]


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
elif sys.argv[1] == "worn":
    path, lo = sys.argv[2], float(sys.argv[3])
    w, h, all_pixels = pixels(path)
    cloth = 100.0 * sum(is_cloth(r, g, b) for _, r, g, b in all_pixels) / (w * h)
    wood = 100.0 * sum(is_wood(r, g, b) for _, r, g, b in all_pixels) / (w * h)
    print(f"{path}: cape {cloth:.2f} %, walker {wood:.2f} %, each needs >= {lo} %")
    sys.exit(0 if cloth >= lo and wood >= lo else 1)
else:
    sys.exit(__doc__)
