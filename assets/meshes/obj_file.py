"""Writes a triangle mesh as a Wavefront OBJ file, as drape's cloth and collider readers take it: a comment line,
`v x y z` lines in metres to five decimals, `vt u v` lines if texture coordinates are given (one per vertex),
then `f a b c` (or `f a/a b/b c/c`) lines with 1-based indices. Shared by the generators beside it."""


def write_obj(path, comment, points, triangles, uvs=None):
    with open(path, "w") as f:
        f.write(f"# {comment}\n")
        for x, y, z in points:
            f.write(f"v {x:.5f} {y:.5f} {z:.5f}\n")
        for u, v in uvs or []:
            f.write(f"vt {u:.5f} {v:.5f}\n")
        for a, b, c in triangles:
            if uvs:
                f.write(f"f {a + 1}/{a + 1} {b + 1}/{b + 1} {c + 1}/{c + 1}\n")
            else:
                f.write(f"f {a + 1} {b + 1} {c + 1}\n")
