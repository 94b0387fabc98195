"""Closed, manifold surfaces from signed distance fields, shared by the generators beside it: parts (capsules,
ellipsoids) blended by a polynomial smooth minimum, meshed by surface nets (one vertex per grid cell the surface
crosses, one quad per grid edge it crosses, so the triangles are near-uniform at the grid's spacing), relaxed
toward the neighbours' centroids and put back on the surface, then checked for what a balloon or a skinned body
needs: every edge shared by two triangles wound opposite ways, one fan per vertex, Euler characteristic 2 (sphere
topology) and the triangles facing outward."""
import math


def length(v):
    return math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])


def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def cross(p, q):
    return (p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0])


def capsule(a, b, radius):
    def distance(p):
        ab, ap = sub(b, a), sub(p, a)
        t = max(0.0, min(1.0, sum(ap[k] * ab[k] for k in range(3)) / sum(c * c for c in ab)))
        return length(sub(p, tuple(a[k] + t * ab[k] for k in range(3)))) - radius
    return distance


def ellipsoid(center, radii):
    def distance(p):
        q = tuple((p[k] - center[k]) / radii[k] for k in range(3))
        return (length(q) - 1.0) * min(radii)
    return distance


def smooth_union(parts, blend):
    """The parts' signed distance (negative inside), blended by a polynomial smooth minimum of radius `blend`."""
    def field(p):
        d = parts[0](p)
        for part in parts[1:]:
            e = part(p)
            h = max(0.0, min(1.0, 0.5 + 0.5 * (e - d) / blend))
            d = e * (1 - h) + d * h - blend * h * (1 - h)
        return d
    return field


def project(field, p):
    """p moved onto the zero set along the field's gradient (Newton steps)."""
    for _ in range(4):
        f = field(p)
        e = 1e-4
        g = tuple((field(tuple(p[k] + (e if k == j else 0.0) for k in range(3))) - f) / e for j in range(3))
        gg = sum(c * c for c in g)
        if gg == 0.0:
            break
        p = tuple(p[k] - f * g[k] / gg for k in range(3))
    return p


def surface_nets(field, lo, size, spacing):
    """The zero set of `field` in the box from corner `lo` spanning `size`, meshed at `spacing`."""
    n = tuple(int(math.ceil(s / spacing)) + 1 for s in size)
    node = lambda i, j, k: (lo[0] + i * spacing, lo[1] + j * spacing, lo[2] + k * spacing)
    value = {(i, j, k): field(node(i, j, k)) for i in range(n[0]) for j in range(n[1]) for k in range(n[2])}
    corners = [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    edges = [(u, v) for u in corners for v in corners if u < v and sum(abs(u[k] - v[k]) for k in range(3)) == 1]
    points, cell_vertex = [], {}
    for i in range(n[0] - 1):
        for j in range(n[1] - 1):
            for k in range(n[2] - 1):
                crossings = []
                for u, v in edges:
                    cu, cv = (i + u[0], j + u[1], k + u[2]), (i + v[0], j + v[1], k + v[2])
                    fu, fv = value[cu], value[cv]
                    if (fu < 0) != (fv < 0):
                        t = fu / (fu - fv)
                        pu, pv = node(*cu), node(*cv)
                        crossings.append(tuple(pu[m] + t * (pv[m] - pu[m]) for m in range(3)))
                if crossings:
                    cell_vertex[(i, j, k)] = len(points)
                    points.append(tuple(sum(c[m] for c in crossings) / len(crossings) for m in range(3)))
    quads = []
    for (i, j, k), f in value.items():
        for axis in range(3):
            far = [i, j, k]
            far[axis] += 1
            far = tuple(far)
            if far not in value or (f < 0) == (value[far] < 0):
                continue
            # the four cells around this grid edge, counter-clockwise seen from its far end
            b, c = (axis + 1) % 3, (axis + 2) % 3
            ring = []
            for db, dc in ((-1, -1), (0, -1), (0, 0), (-1, 0)):
                cell = [i, j, k]
                cell[b] += db
                cell[c] += dc
                ring.append(cell_vertex[tuple(cell)])
            quads.append(ring if f < 0 else ring[::-1])
    triangles = []
    for a, b, c, d in quads:
        if length(sub(points[a], points[c])) <= length(sub(points[b], points[d])):
            triangles += [(a, b, c), (a, c, d)]
        else:
            triangles += [(a, b, d), (b, c, d)]
    return points, triangles


def relax(field, points, triangles, rounds):
    neighbours = [set() for _ in points]
    for tri in triangles:
        for a in tri:
            neighbours[a].update(b for b in tri if b != a)
    for _ in range(rounds):
        points = [project(field, tuple(sum(points[b][m] for b in ring) / len(ring) for m in range(3)))
                  for ring in neighbours]
    return points


def check(points, triangles):
    """The enclosed volume and the edge count; raises unless the mesh is closed, manifold, of sphere topology and
    facing outward."""
    edge_count = {}
    for a, b, c in triangles:
        for u, v in ((a, b), (b, c), (c, a)):
            edge_count[(u, v)] = edge_count.get((u, v), 0) + 1
    for (u, v), count in edge_count.items():
        if count != 1 or edge_count.get((v, u)) != 1:
            raise SystemExit(f"edge {u}-{v} is not shared by exactly two triangles wound opposite ways")
    fans = {}
    for a, b, c in triangles:
        for centre, u, v in ((a, b, c), (b, c, a), (c, a, b)):
            fans.setdefault(centre, {})[u] = v
    for centre, step in fans.items():
        start = next(iter(step))
        seen, at = 1, step[start]
        while at != start:
            at, seen = step[at], seen + 1
        if seen != len(step):
            raise SystemExit(f"vertex {centre} has more than one fan of triangles")
    euler = len(points) - len(edge_count) // 2 + len(triangles)
    if euler != 2:
        raise SystemExit(f"Euler characteristic {euler}, not a sphere's 2")
    volume = sum(sum(points[a][k] * cross(points[b], points[c])[k] for k in range(3)) for a, b, c in triangles) / 6
    if volume <= 0:
        raise SystemExit("the triangles face inward")
    return volume, len(edge_count) // 2
