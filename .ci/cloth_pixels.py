#!/usr/bin/env python3
"""Counts cloth-red pixels in a screenshot and checks their share lies in [min%, max%].

Usage: cloth_pixels.py FILE.png MIN_PERCENT MAX_PERCENT
The cloth is drawn in drape's red (sRGB 0.85, 0.18, 0.14); lit, its pixels stay clearly red: red dominates
green and blue. Ground, sky, sphere and panel are grey or blue."""
import subprocess
import sys

path, lo, hi = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
size = subprocess.run(["identify", "-format", "%w %h", path], check=True, capture_output=True, text=True).stdout
w, h = map(int, size.split())
raw = subprocess.run(["convert", path, "-depth", "8", "rgb:-"], check=True, capture_output=True).stdout
assert len(raw) == w * h * 3, f"expected {w * h * 3} bytes, got {len(raw)}"
red = sum(1 for i in range(0, len(raw), 3) if raw[i] > 60 and raw[i] > 2 * raw[i + 1] and raw[i] > 2 * raw[i + 2])
share = 100.0 * red / (w * h)
print(f"{path}: {w}x{h}, cloth pixels {red} ({share:.2f} %), accepted {lo}-{hi} %")
sys.exit(0 if lo <= share <= hi else 1)
