"""The tree of the moving bodies (model/moving_tree.py) that forward_dynamics' ABA runs on:
which bodies it keeps, their placements in the world (forward kinematics of both trees), the
mass, first and second moments of each kept body against those of the bodies merged into it
(computed in the world from the whole tree), and qdd by the ABA on it against the Cholesky
solve of the whole tree's mass matrix; and flat.py's packing."""
import numpy as np
import pytest

from charmie_dynamics import forward_kinematics, load_model
from charmie_dynamics.dynamics import forward_dynamics
from charmie_dynamics.flat import flatten
from charmie_dynamics.kinematics.forward import forward_kinematics_sample
from charmie_dynamics.layout import MASS, SCALARS
from charmie_dynamics.model import model_from_dict
from charmie_dynamics.model.moving_tree import attached_bodies
from conftest import CHARMIE
from test_forward_kinematics import random_q
from test_free_flyer import floating_model
from test_urdf_import import ERD, quiet_load, random_states

INERTIA = {"ixx": 0.02, "iyy": 0.03, "izz": 0.04, "ixy": 0.001, "ixz": -0.002, "iyz": 0.003}


def part(name, parent, joint, origin, rotation, mass=1.5, com=(0.03, -0.02, 0.05), points=None):
    b = {"name": name, "parent": parent, "origin": list(origin), "rotation": list(rotation),
         "joint": joint, "mass": mass, "com": list(com), "inertia": dict(INERTIA)}
    if points:
        b["points"] = points
    return b


def spring_model():
    """Fixed bodies of every kind: a massive one on the world (merged into the world), a chain
    of two fixed bodies between two revolute joints (merged, the second joint's placement
    composed), a fixed leaf, and a fixed body a spring is attached to (kept)."""
    R, P = {"type": "R", "axis": [0.3, -0.4, 0.866]}, {"type": "P", "axis": "y"}
    F = {"type": "F"}
    bodies = [
        part("base", "world", F, (0.1, 0.2, 0.3), (0.4, 0.5, 0.6)),
        part("a", "base", dict(R, coordinate="qa"), (0.0, 0.1, 0.2), (0.1, -0.7, 0.3)),
        part("f1", "a", F, (0.2, -0.1, 0.05), (1.1, 0.2, -0.4)),
        part("f2", "f1", F, (-0.05, 0.15, 0.1), (0.3, 0.9, 0.2), mass=0.7),
        part("b", "f2", dict(P, coordinate="qb"), (0.1, 0.0, -0.2), (0.2, 0.2, 0.2)),
        part("leaf", "b", F, (0.0, 0.3, 0.0), (0.5, -0.5, 1.0), mass=2.0),
        part("anchor", "a", F, (0.3, 0.0, 0.1), (0.0, 0.4, 0.0), points={"s": [0.1, 0, 0]}),
        part("c", "b", dict(R, coordinate="qc"), (0.0, 0.0, 0.25), (0.0, 0.0, 0.3),
             points={"s": [0.0, 0.05, 0.1]}),
    ]
    doc = {"format": "charmie_dynamics/model/1", "name": "spring_tree", "bodies": bodies,
           "springs": [{"name": "s1", "between": ["anchor.s", "c.s"], "stiffness": 200.0,
                        "free_length": 0.1, "preload": 5.0}]}
    return model_from_dict(doc)


def erd(path, floating):
    """An example-robot-data URDF by its path under robots/."""
    return quiet_load(next(p for p in ERD if str(p).endswith(path)), floating_base=floating)


MODELS = {
    "spring_tree": spring_model,
    "charmie": lambda: load_model(CHARMIE),
    "floating4": lambda: floating_model(4, coupled=False),
    "floating7": lambda: floating_model(7, coupled=False),
    "talos": lambda: erd("talos_data/robots/talos_reduced.urdf", False),
    "talos_floating": lambda: erd("talos_data/robots/talos_reduced.urdf", True),
    "g1": lambda: erd("g1_description/urdf/g1_29dof_rev_1_0.urdf", False),
}


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    if request.param.startswith(("talos", "g1")) and not ERD:
        pytest.skip("example-robot-data is not installed")
    return MODELS[request.param]()


def configurations(model, count):
    """``count`` configurations: CHARMIE's through its actuators (random_q), others within
    their joints' limits with random unit quaternions (test_urdf_import)."""
    rng = np.random.default_rng(3)
    if model.actuators:
        return np.stack([random_q(model, rng) for _ in range(count)])
    return random_states(model, rng)[0][:count]


def anchors(model, kept):
    """Each body's kept ancestor-or-self (-1: the world), walking up the parents."""
    out = []
    for i in range(model.n_bodies):
        k = i
        while k >= 0 and k not in kept:
            k = int(model.parent[k])
        out.append(k)
    return out


def test_kept_bodies_are_the_moving_and_the_attached_ones(model):
    tree = model.compiled.moving_tree
    pm = model.compiled.packed
    moving = {i for i in range(model.n_bodies) if model.coordinate_index[i] >= 0}
    named = {b for a in model.actuators for b in (a.drives, int(model.parent[a.drives]),
                                                 a.base.body, a.end.body)}
    named |= {b for s in model.springs for b in (s.start.body, s.end.body)}
    named |= {b for bal in model.balancers for b in (bal.pivot.body, bal.hanger.body)}
    assert attached_bodies(pm) == {b for b in named if b >= 0}
    assert tree.bodies.tolist() == sorted(moving | attached_bodies(pm))
    assert tree.n_bodies < model.n_bodies or not set(range(model.n_bodies)) - moving
    # coordinates and their groups are the model's, renumbered
    assert [[int(tree.bodies[k]) for k in g] for g in tree.coordinate_bodies] == \
        [list(g) for g in model.compiled.coordinate_bodies]


def test_spring_model_keeps_the_anchor_and_merges_the_rest():
    model = spring_model()
    names = [model.body_names[i] for i in model.compiled.moving_tree.bodies]
    assert sorted(names) == ["a", "anchor", "b", "c"]


def test_placements_and_mass_moments_in_the_world(model):
    """The moving tree's forward kinematics places its bodies where the whole tree's does,
    and each kept body's mass, first moment and second moment about the world origin (world
    frame) are the sums over the bodies merged into it (from the whole tree's placements)."""
    tree = model.compiled.moving_tree
    pm, nb = tree.packed, tree.n_bodies
    kept = set(tree.bodies.tolist())
    anchor = anchors(model, kept)
    for q in configurations(model, 3):
        full = forward_kinematics(model, q)
        values, R, O = np.empty(nb), np.empty((nb, 2, 3, 3)), np.empty((nb, 2, 3))
        forward_kinematics_sample(pm.body_int, pm.body_vec, pm.body_mat, q, values, R, O)
        np.testing.assert_allclose(R[:, 1], full.rotations[tree.bodies, 1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(O[:, 1], full.origins[tree.bodies, 1], rtol=0, atol=1e-12)
        for k, a in enumerate(tree.bodies.tolist()):
            group = [i for i in range(model.n_bodies) if anchor[i] == a]
            mass = model.mass[group].sum()
            com_w = [full.origins[i, 1] + full.rotations[i, 1] @ model.com[i] for i in group]
            first = sum(model.mass[i] * c for i, c in zip(group, com_w))
            second = sum(full.rotations[i, 1] @ model.inertia[i] @ full.rotations[i, 1].T
                         + model.mass[i] * (c @ c * np.eye(3) - np.outer(c, c))
                         for i, c in zip(group, com_w))
            m_k = pm.body_vec[k, SCALARS, MASS]
            c_k = O[k, 1] + R[k, 1] @ pm.body_vec[k, 2]
            I_k = R[k, 1] @ pm.body_mat[k, 1] @ R[k, 1].T + m_k * (c_k @ c_k * np.eye(3)
                                                                  - np.outer(c_k, c_k))
            scale = max(1.0, mass)
            assert abs(m_k - mass) <= 1e-12 * scale
            np.testing.assert_allclose(m_k * c_k, first, rtol=0, atol=1e-12 * scale)
            np.testing.assert_allclose(I_k, second, rtol=0, atol=1e-11 * scale)


def test_aba_on_the_moving_tree_equals_cholesky_on_the_whole_tree(model):
    """qdd by the ABA (moving tree) against H qdd = tau - u' by the whole tree's CRBA and
    Cholesky, free and with coordinates held, single states and a batch."""
    rng = np.random.default_rng(5)
    n = model.n_coordinates
    q = configurations(model, 4)
    qd, tau = rng.normal(size=(4, n)), rng.normal(size=(4, n))
    held = rng.uniform(size=(4, n)) < 0.3
    for h in (None, held):
        ref = forward_dynamics(model, q, qd, tau, "cholesky", held=h)
        got = forward_dynamics(model, q, qd, tau, "aba", held=h)
        assert np.abs(got - ref).max() <= 1e-9 * max(1.0, np.abs(ref).max())
        for s in range(4):
            one = forward_dynamics(model, q[s], qd[s], tau[s], "aba",
                                   held=None if h is None else h[s])
            np.testing.assert_array_equal(one, got[s])


def test_flatten_views_are_the_arrays():
    arrays = [np.arange(6.0).reshape(2, 3), np.arange(4, dtype=np.int64), np.zeros((0, 4, 3)),
              np.random.default_rng(0).normal(size=(1, 2, 2, 3, 3))]
    header, ints, floats, views = flatten(arrays)
    assert header.shape == (4, 6) and ints.size == 4 and floats.size == 6 + 36
    for a, v in zip(arrays, views):
        np.testing.assert_array_equal(v, a)
        assert v.dtype == a.dtype and (v.base is ints or v.base is floats or
                                       np.shares_memory(v, ints) or np.shares_memory(v, floats))
    views[0][1, 2] = -1.0
    assert floats[5] == -1.0
    with pytest.raises(ValueError, match="array 0 of dtype bool"):
        flatten([np.zeros(2, dtype=bool)])
    with pytest.raises(ValueError, match="array 1 .* 6 axes, expected .* at most 5"):
        flatten([np.zeros(1), np.zeros((1,) * 6)])
