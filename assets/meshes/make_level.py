#!/usr/bin/env python3
"""Writes level.obj beside this file: the small game level of the `level` preset (issue 52, the paper's Fig. 12
middle, "a geometrically complex game level").

A room corner, y up, metres: a back wall with a doorway, a side wall, a staircase of seven steps up to a landing
with a railing, a table and two chairs. Each part is a closed mesh wound counter-clockwise seen from outside (so a
triangle-mesh collider built with pseudo-normals has an inside); parts that meet overlap a little instead of
sharing a face, as the mannequin's do. The staircase is one prism whose side faces are cut per step with no
T-junction, so every edge of it has two triangles.
Run it again after changing a part: `python3 assets/meshes/make_level.py`.
"""
import os

RISE, RUN, STEPS = 0.15, 0.225, 7  # the stairs: each step's rise and run; the landing is the eighth level
FRONT = 0.2                        # x of the first riser; the stairs climb towards -x
BACK = -3.05                       # x of the landing's back, inside the side wall
STAIRS_Z = (-2.55, -1.35)          # the stairs' and the landing's sides, the first inside the back wall


class Part:
    """A closed mesh: vertices shared by coordinates, triangles turned to face away from `inside`."""

    def __init__(self, inside):
        self.inside = inside
        self.points, self.index, self.triangles = [], {}, []

    def vertex(self, p):
        key = tuple(round(c, 6) for c in p)
        if key not in self.index:
            self.index[key] = len(self.points)
            self.points.append(key)
        return self.index[key]

    def triangle(self, a, b, c, outward):
        """Triangle abc, wound so that its normal points along `outward`."""
        ab = [b[k] - a[k] for k in range(3)]
        ac = [c[k] - a[k] for k in range(3)]
        n = (ab[1] * ac[2] - ab[2] * ac[1], ab[2] * ac[0] - ab[0] * ac[2], ab[0] * ac[1] - ab[1] * ac[0])
        if sum(n[k] * outward[k] for k in range(3)) < 0:
            b, c = c, b
        self.triangles.append((self.vertex(a), self.vertex(b), self.vertex(c)))

    def quad(self, a, b, c, d, outward):
        self.triangle(a, b, c, outward)
        self.triangle(a, c, d, outward)


def box(lo, hi):
    """An axis-aligned box from corner `lo` to corner `hi`."""
    part = Part(None)
    corner = lambda i, j, k: (hi[0] if i else lo[0], hi[1] if j else lo[1], hi[2] if k else lo[2])
    for axis in range(3):
        for side in (0, 1):
            outward = [0.0, 0.0, 0.0]
            outward[axis] = 1.0 if side else -1.0
            face = []
            for u, v in ((0, 0), (1, 0), (1, 1), (0, 1)):
                idx = [0, 0, 0]
                idx[axis] = side
                others = [a for a in range(3) if a != axis]
                idx[others[0]], idx[others[1]] = u, v
                face.append(corner(*idx))
            part.quad(*face, outward)
    return part


def stairs():
    """The steps and the landing as one prism along z: a staircase profile in (x, y), its columns' side faces
    cut so that each lower column's top-back corner is a vertex of the next column's front edge."""
    part = Part(None)
    # columns from the front: (x front, x back, height)
    columns = [(FRONT - i * RUN, FRONT - (i + 1) * RUN, (i + 1) * RISE) for i in range(STEPS)]
    columns.append((FRONT - STEPS * RUN, BACK, (STEPS + 1) * RISE))
    z0, z1 = STAIRS_Z
    for i, (front, back, height) in enumerate(columns):
        below = columns[i - 1][2] if i > 0 else 0.0
        for z, outward in ((z0, (0, 0, -1)), (z1, (0, 0, 1))):
            tb, tf, bf, bb = (back, height, z), (front, height, z), (front, 0.0, z), (back, 0.0, z)
            if i > 0:
                mid = (front, below, z)
                part.triangle(tb, tf, mid, outward)
                part.triangle(tb, mid, bf, outward)
            else:
                part.triangle(tb, tf, bf, outward)
            part.triangle(tb, bf, bb, outward)
        # tread, riser (from the column below), floor strip
        part.quad((front, height, z0), (back, height, z0), (back, height, z1), (front, height, z1), (0, 1, 0))
        part.quad((front, below, z0), (front, height, z0), (front, height, z1), (front, below, z1), (1, 0, 0))
        part.quad((front, 0.0, z0), (back, 0.0, z0), (back, 0.0, z1), (front, 0.0, z1), (0, -1, 0))
    top = columns[-1][2]
    part.quad((BACK, 0.0, z0), (BACK, top, z0), (BACK, top, z1), (BACK, 0.0, z1), (-1, 0, 0))
    return part


def level():
    parts = [
        # back wall with a doorway 1 m wide and 2.1 m high, and the side wall
        box((-3.15, 0.0, -2.65), (0.9, 2.6, -2.5)),
        box((1.9, 0.0, -2.65), (3.0, 2.6, -2.5)),
        box((0.85, 2.1, -2.65), (1.95, 2.6, -2.5)),
        box((-3.15, 0.0, -2.6), (-3.0, 2.6, 2.5)),
        stairs(),
    ]
    landing = (STEPS + 1) * RISE
    x_landing = FRONT - STEPS * RUN
    # the railing along the landing's open side: posts and a handrail
    rail_z = STAIRS_Z[1] - 0.05
    xs = [BACK + 0.15 + k * (x_landing - 0.05 - BACK - 0.15) / 4 for k in range(5)]
    for x in xs:
        parts.append(box((x - 0.025, landing - 0.05, rail_z - 0.025), (x + 0.025, landing + 0.9, rail_z + 0.025)))
    parts.append(box((xs[0] - 0.05, landing + 0.86, rail_z - 0.035), (xs[-1] + 0.05, landing + 0.93, rail_z + 0.035)))
    # a table 1.2 x 0.8 m, its top 0.76 m high, and two chairs
    tx, tz = 1.2, 0.6
    parts.append(box((tx - 0.6, 0.72, tz - 0.4), (tx + 0.6, 0.76, tz + 0.4)))
    for sx in (-1, 1):
        for sz in (-1, 1):
            x, z = tx + sx * 0.52, tz + sz * 0.32
            parts.append(box((x - 0.03, 0.0, z - 0.03), (x + 0.03, 0.74, z + 0.03)))
    for cx, cz, back_side in ((tx - 0.35, tz + 0.75, 1), (tx + 0.45, tz - 0.8, -1)):
        parts.append(box((cx - 0.21, 0.42, cz - 0.21), (cx + 0.21, 0.46, cz + 0.21)))
        for sx in (-1, 1):
            for sz in (-1, 1):
                x, z = cx + sx * 0.17, cz + sz * 0.17
                parts.append(box((x - 0.02, 0.0, z - 0.02), (x + 0.02, 0.44, z + 0.02)))
        bz = cz + back_side * 0.19
        parts.append(box((cx - 0.21, 0.44, bz - 0.02), (cx + 0.21, 0.95, bz + 0.02)))
    return parts


def main():
    parts = level()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "level.obj")
    points = sum(len(p.points) for p in parts)
    triangles = sum(len(p.triangles) for p in parts)
    with open(path, "w") as f:
        f.write(f"# drape's game level: generated by make_level.py, {len(parts)} closed parts, {points} vertices, "
                f"{triangles} triangles\n")
        offset = 1
        for part in parts:
            for p in part.points:
                f.write("v {:.5f} {:.5f} {:.5f}\n".format(*p))
            for t in part.triangles:
                f.write("f {} {} {}\n".format(*(i + offset for i in t)))
            offset += len(part.points)


if __name__ == "__main__":
    main()
