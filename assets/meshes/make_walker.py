#!/usr/bin/env python3
"""Writes walker.glb and skirt.obj beside this file: drape's animated character for the `character` preset
(issue 52, the paper's Fig. 12 left) and the skirt it wears.

walker.glb is a binary glTF 2.0 file: one closed, manifold, skinned mesh (the mannequin's proportions, 1.75 m,
feet at y = 0, facing +z, built from capsules blended into one surface by sdf_mesh.py), a skeleton of 13 joints
and two looping animations, `idle` (breathing, a glance) and `walk` (a stride on the spot; the scene moves the
figure). Each vertex is skinned to the bones of the parts nearest to it. Each joint node's `extras` lists the
capsules of its bone in the joint's frame, `{"capsules": [[ax, ay, az, bx, by, bz, radius], ...]}`: the parts
the cloth collides with, the surface's skeleton before blending.

skirt.obj is an open tube around the hips with texture coordinates (u around, v from the waist at 0 to the hem at
1), so `Row(v: 0.0)` selects its waistband: a ring 1.5 cm outside the body at y = 1.0, flaring down to y = 0.7.
Run it again after changing a part: `python3 assets/meshes/make_walker.py`.
"""
import json
import math
import os
import struct

from obj_file import write_obj
from sdf_mesh import capsule, check, cross, length, relax, smooth_union, sub, surface_nets

SPACING = 0.03  # the grid's spacing, metres: the triangles' size
BLEND = 0.05    # the smooth minimum's radius, metres
RELAX = 20      # rounds of relaxation
SHARPNESS = 0.015  # metres: how fast a bone's skin weight falls with its parts' distance beyond the nearest's

# name, parent, the joint's position in the bind pose (the skeleton's rest pose: no joint rotated)
JOINTS = [
    ("hips", None, (0.0, 0.95, 0.0)),
    ("spine", "hips", (0.0, 1.08, 0.0)),
    ("chest", "spine", (0.0, 1.25, 0.0)),
    ("neck", "chest", (0.0, 1.46, 0.0)),
    ("head", "neck", (0.0, 1.56, 0.0)),
    ("upper_arm.L", "chest", (0.21, 1.41, 0.0)),
    ("forearm.L", "upper_arm.L", (0.27, 1.14, 0.0)),
    ("upper_arm.R", "chest", (-0.21, 1.41, 0.0)),
    ("forearm.R", "upper_arm.R", (-0.27, 1.14, 0.0)),
    ("thigh.L", "hips", (0.1, 0.91, 0.0)),
    ("shin.L", "thigh.L", (0.11, 0.5, 0.01)),
    ("thigh.R", "hips", (-0.1, 0.91, 0.0)),
    ("shin.R", "thigh.R", (-0.11, 0.5, 0.01)),
]
NAMES = [name for name, _, _ in JOINTS]


def mirrored(side, a, b, radius):
    """A capsule of the figure's left side (+x) as given, of its right side mirrored across x = 0."""
    s = 1.0 if side == "L" else -1.0
    return ((s * a[0], a[1], a[2]), (s * b[0], b[1], b[2]), radius)


# bone: capsules (end a, end b, radius) in the world's bind pose
CAPSULES = {
    "head": [((0.0, 1.62, 0.01), (0.0, 1.69, 0.01), 0.095)],
    "neck": [((0.0, 1.45, 0.0), (0.0, 1.56, 0.0), 0.05)],
    "chest": [((-0.09, 1.33, 0.0), (0.09, 1.33, 0.0), 0.12)],
    "spine": [((-0.05, 1.13, 0.0), (0.05, 1.13, 0.0), 0.105)],
    "hips": [((-0.07, 0.95, 0.0), (0.07, 0.95, 0.0), 0.115)],
}
for side in "LR":
    CAPSULES[f"upper_arm.{side}"] = [mirrored(side, (0.21, 1.41, 0.0), (0.27, 1.15, 0.0), 0.045)]
    CAPSULES[f"forearm.{side}"] = [mirrored(side, (0.27, 1.14, 0.0), (0.34, 0.88, 0.02), 0.038),
                                   mirrored(side, (0.345, 0.87, 0.02), (0.36, 0.77, 0.02), 0.035)]  # and hand
    CAPSULES[f"thigh.{side}"] = [mirrored(side, (0.1, 0.9, 0.0), (0.11, 0.5, 0.01), 0.07)]
    CAPSULES[f"shin.{side}"] = [mirrored(side, (0.11, 0.5, 0.01), (0.11, 0.08, 0.0), 0.05),
                                mirrored(side, (0.11, 0.045, -0.03), (0.11, 0.045, 0.12), 0.045)]  # and foot

PARTS = [(bone, capsule(a, b, r)) for bone in NAMES for a, b, r in CAPSULES[bone]]
FIELD = smooth_union([part for _, part in PARTS], BLEND)


def skin_weights(p):
    """Up to four (joint, weight) pairs: each bone weighted by how near its nearest part is, relative to the
    nearest part of all."""
    nearest = {}
    for bone, part in PARTS:
        nearest[bone] = min(nearest.get(bone, math.inf), part(p))
    best = min(nearest.values())
    ranked = sorted(((math.exp(-(d - best) / SHARPNESS), NAMES.index(b)) for b, d in nearest.items()), reverse=True)
    top = [(j, w) for w, j in ranked[:4] if w > 1e-3]
    total = sum(w for _, w in top)
    top = [(j, w / total) for j, w in top]
    return top + [(0, 0.0)] * (4 - len(top))


def vertex_normals(points, triangles):
    normals = [[0.0, 0.0, 0.0] for _ in points]
    for a, b, c in triangles:
        n = cross(sub(points[b], points[a]), sub(points[c], points[a]))
        for v in (a, b, c):
            for k in range(3):
                normals[v][k] += n[k]
    return [tuple(c / length(n) for c in n) for n in normals]


def quat(axis, degrees):
    """The unit quaternion (x, y, z, w) turning `degrees` about `axis`."""
    h = math.radians(degrees) / 2
    n = length(axis)
    return tuple(c / n * math.sin(h) for c in axis) + (math.cos(h),)


def qmul(p, q):
    px, py, pz, pw = p
    qx, qy, qz, qw = q
    return (pw * qx + px * qw + py * qz - pz * qy, pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw, pw * qw - px * qx - py * qy - pz * qz)


SAMPLES = 24  # keyframes per cycle, the last equal to the first so the loop closes


def walk(phase):
    """The walk's joint rotations and the hips' offset at `phase` (0..1 of a stride of two steps)."""
    s = math.sin(2 * math.pi * phase)
    c = math.cos(2 * math.pi * phase)
    rotations = {
        "thigh.L": quat((1, 0, 0), -26 * s), "thigh.R": quat((1, 0, 0), 26 * s),
        # the knee bends while the leg swings forward, behind the hip
        "shin.L": quat((1, 0, 0), 8 + 32 * max(0.0, c)), "shin.R": quat((1, 0, 0), 8 + 32 * max(0.0, -c)),
        "upper_arm.L": quat((1, 0, 0), 18 * s), "upper_arm.R": quat((1, 0, 0), -18 * s),
        "forearm.L": quat((1, 0, 0), -12 - 8 * max(0.0, -s)), "forearm.R": quat((1, 0, 0), -12 - 8 * max(0.0, s)),
        "hips": quat((0, 1, 0), 6 * s), "chest": quat((0, 1, 0), -8 * s),
        "spine": quat((1, 0, 0), 4),
    }
    bob = 0.015 * math.cos(4 * math.pi * phase)
    return rotations, (0.0, bob - 0.01, 0.0)


def idle(phase):
    """The idle's joint rotations and the hips' offset at `phase` (0..1 of a breath)."""
    s = math.sin(2 * math.pi * phase)
    rotations = {
        "chest": quat((1, 0, 0), -2 * s), "head": quat((0, 1, 0), 12 * math.sin(2 * math.pi * phase + 1.0)),
        "upper_arm.L": quat((0, 0, 1), 3 + 2 * s), "upper_arm.R": quat((0, 0, 1), -3 - 2 * s),
    }
    return rotations, (0.0, 0.004 * s, 0.0)


ANIMATIONS = [("idle", 3.0, idle), ("walk", 1.1, walk)]


class Glb:
    """A glTF document being written: its JSON and one binary buffer, accessors appended as they come."""

    def __init__(self):
        self.json = {"asset": {"version": "2.0", "generator": "drape make_walker.py"}, "bufferViews": [],
                     "accessors": []}
        self.blob = bytearray()

    def accessor(self, fmt, items, kind, component, target=None, bounds=False):
        while len(self.blob) % 4:
            self.blob.append(0)
        offset = len(self.blob)
        for item in items:
            self.blob += struct.pack("<" + fmt, *(item if isinstance(item, tuple) else (item,)))
        view = {"buffer": 0, "byteOffset": offset, "byteLength": len(self.blob) - offset}
        if target:
            view["target"] = target
        self.json["bufferViews"].append(view)
        accessor = {"bufferView": len(self.json["bufferViews"]) - 1, "componentType": component,
                    "count": len(items), "type": kind}
        if bounds:
            tuples = [item if isinstance(item, tuple) else (item,) for item in items]
            accessor["min"] = [min(t[k] for t in tuples) for k in range(len(tuples[0]))]
            accessor["max"] = [max(t[k] for t in tuples) for k in range(len(tuples[0]))]
        self.json["accessors"].append(accessor)
        return len(self.json["accessors"]) - 1

    def write(self, path):
        while len(self.blob) % 4:
            self.blob.append(0)
        self.json["buffers"] = [{"byteLength": len(self.blob)}]
        text = json.dumps(self.json, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 4)
        with open(path, "wb") as f:
            f.write(struct.pack("<III", 0x46546C67, 2, 12 + 8 + len(text) + 8 + len(self.blob)))
            f.write(struct.pack("<II", len(text), 0x4E4F534A) + text)
            f.write(struct.pack("<II", len(self.blob), 0x004E4942) + bytes(self.blob))


FLOAT, USHORT, UINT = 5126, 5123, 5125


def write_walker(path, points, triangles):
    glb = Glb()
    normals = vertex_normals(points, triangles)
    weights = [skin_weights(p) for p in points]
    position = glb.accessor("3f", points, "VEC3", FLOAT, 34962, bounds=True)
    normal = glb.accessor("3f", normals, "VEC3", FLOAT, 34962)
    joints = glb.accessor("4H", [tuple(j for j, _ in w) for w in weights], "VEC4", USHORT, 34962)
    weight = glb.accessor("4f", [tuple(x for _, x in w) for w in weights], "VEC4", FLOAT, 34962)
    indices = glb.accessor("I", [i for t in triangles for i in t], "SCALAR", UINT, 34963)
    where = {name: at for name, _, at in JOINTS}
    nodes = []
    for name, parent, at in JOINTS:
        origin = where[parent] if parent else (0.0, 0.0, 0.0)
        local = [[c - o for c, o in zip(end, at)] for a, b, r in CAPSULES[name] for end in (a, b)]
        capsules = [local[2 * i] + local[2 * i + 1] + [r] for i, (_, _, r) in enumerate(CAPSULES[name])]
        children = [NAMES.index(child) for child, up, _ in JOINTS if up == name]
        node = {"name": name, "translation": [round(c - o, 6) for c, o in zip(at, origin)],
                "extras": {"capsules": [[round(c, 6) for c in cap] for cap in capsules]}}
        if children:
            node["children"] = children
        nodes.append(node)
    nodes.append({"name": "walker", "mesh": 0, "skin": 0})
    # the inverse bind matrices: the joints are unrotated in the bind pose, so each is a translation back
    inverse_binds = glb.accessor("16f", [(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -x, -y, -z, 1)
                                         for x, y, z in (at for _, _, at in JOINTS)], "MAT4", FLOAT)
    animations = []
    for name, duration, pose in ANIMATIONS:
        times = [duration * k / SAMPLES for k in range(SAMPLES + 1)]
        frames = [pose(k / SAMPLES) for k in range(SAMPLES + 1)]
        frames[-1] = frames[0]
        time = glb.accessor("f", times, "SCALAR", FLOAT, bounds=True)
        samplers, channels = [], []
        for bone in sorted(frames[0][0]):
            rotation = glb.accessor("4f", [f[0][bone] for f in frames], "VEC4", FLOAT)
            samplers.append({"input": time, "output": rotation, "interpolation": "LINEAR"})
            channels.append({"sampler": len(samplers) - 1, "target": {"node": NAMES.index(bone), "path": "rotation"}})
        hips = where["hips"]
        offset = glb.accessor("3f", [tuple(h + o for h, o in zip(hips, f[1])) for f in frames], "VEC3", FLOAT)
        samplers.append({"input": time, "output": offset, "interpolation": "LINEAR"})
        channels.append({"sampler": len(samplers) - 1, "target": {"node": 0, "path": "translation"}})
        animations.append({"name": name, "samplers": samplers, "channels": channels})
    glb.json.update({
        "scene": 0,
        "scenes": [{"name": "walker", "nodes": [0, len(nodes) - 1]}],
        "nodes": nodes,
        "meshes": [{"name": "walker", "primitives": [{
            "attributes": {"POSITION": position, "NORMAL": normal, "JOINTS_0": joints, "WEIGHTS_0": weight},
            "indices": indices, "material": 0}]}],
        "materials": [{"name": "skin", "pbrMetallicRoughness": {
            # linear, as glTF factors are: sRGB (0.78, 0.66, 0.52), a wooden mannequin's
            "baseColorFactor": [0.571, 0.393, 0.234, 1.0], "metallicFactor": 0.0, "roughnessFactor": 0.8}}],
        "skins": [{"name": "walker", "joints": list(range(len(JOINTS))), "skeleton": 0,
                   "inverseBindMatrices": inverse_binds}],
        "animations": animations,
    })
    glb.write(path)


SKIRT_AROUND = 36  # vertices around the skirt
SKIRT_RINGS = 9    # rings from the waistband to the hem
SKIRT_GAP = 0.015  # metres between the waistband and the body
SKIRT_TOP, SKIRT_BOTTOM, SKIRT_FLARE = 1.0, 0.7, 0.09  # heights of waistband and hem, metres; how far the hem flares


def write_skirt(path):
    points, uvs, triangles = [], [], []
    for i in range(SKIRT_AROUND):
        theta = 2 * math.pi * i / SKIRT_AROUND
        out = (math.sin(theta), 0.0, math.cos(theta))
        reach = 0.0  # march out of the body along `out` at the waistband's height
        while FIELD((reach * out[0], SKIRT_TOP, reach * out[2])) < SKIRT_GAP:
            reach += 0.001
        for k in range(SKIRT_RINGS):
            v = k / (SKIRT_RINGS - 1)
            r = reach + SKIRT_FLARE * v
            points.append((r * out[0], SKIRT_TOP + (SKIRT_BOTTOM - SKIRT_TOP) * v, r * out[2]))
            uvs.append((i / SKIRT_AROUND, v))
    at = lambda i, k: (i % SKIRT_AROUND) * SKIRT_RINGS + k
    for i in range(SKIRT_AROUND):
        for k in range(SKIRT_RINGS - 1):
            triangles += [(at(i, k), at(i, k + 1), at(i + 1, k + 1)), (at(i, k), at(i + 1, k + 1), at(i + 1, k))]
    write_obj(path, "drape's skirt for the walker: generated by make_walker.py (open tube, v = 0 at the waist)",
              points, triangles, uvs)
    return len(points), len(triangles)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    points, triangles = surface_nets(FIELD, (-0.46, -0.07, -0.21), (0.92, 1.88, 0.42), SPACING)
    points = relax(FIELD, points, triangles, RELAX)
    volume, edges = check(points, triangles)
    write_walker(os.path.join(here, "walker.glb"), points, triangles)
    print(f"walker.glb: {len(points)} vertices, {edges} edges, {len(triangles)} triangles, volume {volume:.4f} m³, "
          f"{len(JOINTS)} joints, animations {', '.join(name for name, _, _ in ANIMATIONS)}")
    print("skirt.obj: {} vertices, {} triangles".format(*write_skirt(os.path.join(here, "skirt.obj"))))


if __name__ == "__main__":
    main()
