"""The carpet-scraping machine of seed 002 section 4.4 (issue 13): the model against Table 5
and the text, its assembly over a revolution against plane geometry (circle intersections,
independent of the Newton-Raphson solver), the driving torque at 45 rpm by power balance,
by FD(ID) = identity and by the paper's own subsystem approach (sec. 4.2: subsystem III's 4 x
4 equations give lambda_2, lambda_3; subsystem I's 2 x 2 then lambda_1; subsystem II tau_D)."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from charmie_dynamics.cli.loop_analysis import SCRAPING_RPM
from charmie_dynamics.dynamics import closed_chain as cc
from charmie_dynamics.kinematics.forward import forward_kinematics, point_positions
from charmie_dynamics.mechanisms.closed_chains import ClosedChain, evaluate
from charmie_dynamics.model import load_model

MODEL = Path(__file__).resolve().parent.parent / "config" / "examples" / "scraping_machine.yaml"
# Table 5 (link: length a, mass, moment of inertia about the link origin) and the text
TABLE5 = {"link3": (0.115, 3.0, 0.0133), "link2": (0.115, 5.0, 2.212e-2),
          "link1": (0.038, 1.5, 7.258e-4), "link4": (0.335, 4.2, 0.157),
          "link6": (0.239, 10.5, 2.449), "link7": (0.239, 3.0, 0.057),
          "link5": (0.239, 3.0, 0.057)}
I1, III1, P1 = np.array([-0.089, 0.0]), np.array([0.038, 0.410]), 0.096
W = 2 * math.pi * SCRAPING_RPM / 60.0


@pytest.fixture(scope="module")
def chain() -> ClosedChain:
    return ClosedChain.build(load_model(MODEL))


def _circles(p0: np.ndarray, r0: float, p1: np.ndarray, r1: float, side: float) -> np.ndarray:
    """The intersection of two circles left (side +1) or right (-1) of p0 -> p1."""
    d = np.linalg.norm(p1 - p0)
    a = (r0 * r0 - r1 * r1 + d * d) / (2 * d)
    e = (p1 - p0) / d
    return p0 + a * e + side * math.sqrt(r0 * r0 - a * a) * np.array([-e[1], e[0]])


def _angle(v: np.ndarray) -> float:
    return math.atan2(v[1], v[0])


def closed_form(theta: float) -> np.ndarray:
    """Every coordinate (the model's order) at crank angle theta by plane geometry: the
    rocker pin M from the crank pin A and I-1, B = 2 M - A (Hoeken's coupler), P1 from
    III-1^0 and B, then the parallelogram P1-B-Q-P2; the model's branch (B above the ground
    line, link 4 up and left), relative angles wrapped to (-pi, pi]."""
    A = 0.038 * np.array([math.cos(theta), math.sin(theta)])
    M = _circles(A, 0.115, I1, 0.115, -1.0)
    B = 2 * M - A
    p1 = _circles(III1, P1, B, 0.239, -1.0)
    u4 = (p1 - III1) / P1
    absolute = [theta, _angle(M - I1), _angle(B - M), _angle(u4), _angle(B - p1),
                _angle(B - p1), _angle(-u4)]
    parent = [0.0, 0.0, absolute[1], 0.0, absolute[3], absolute[3], absolute[5]]
    rel = np.array(absolute) - np.array(parent)
    return np.angle(np.exp(1j * rel))


def _wrapped(q: np.ndarray) -> np.ndarray:
    return np.angle(np.exp(1j * q))


def test_model_is_table_5_and_the_text(chain):
    model = chain.model
    for name, (a, m, inertia) in TABLE5.items():
        b = model.bodies[model.body_names.index(name)]
        c = np.asarray(b.com)
        # the moment of inertia about the link origin (its joint), Table 5's column
        assert b.mass == m
        assert b.inertia[2, 2] + m * (c @ c) == pytest.approx(inertia, rel=1e-5)
        # Table 5's length: from the origin to the next joint or to the point B (C)
        ends = [np.linalg.norm(p) for p in b.points.values()]
        ends += [np.linalg.norm(c.origin) for c in model.bodies if c.parent == name]
        assert min(abs(e - a) for e in ends) <= 1e-12
    assert np.linalg.norm(model.point("link6.E").local) == pytest.approx(0.239 * 0.335 / P1,
                                                                          abs=1e-6)
    parents = {b.name: b.parent for b in model.bodies}
    # the spanning tree of Fig. 19: I = #3-#2, II = #1, III = #4-#6-#7 with #5 on #4
    assert parents == {"link1": "world", "link3": "world", "link2": "link3",
                       "link4": "world", "link5": "link4", "link6": "link4", "link7": "link6"}
    fk = forward_kinematics(model, chain.assembled)
    for name, origin in (("link1", (0, 0)), ("link3", I1), ("link4", III1)):
        np.testing.assert_allclose(fk.origin_world[model.body_names.index(name)][:2], origin)
    # 8 bodies, 10 revolute joints in a plane: 3 (8 - 1) - 2 * 10 = 1 degree of freedom
    (group,) = chain.groups
    assert (len(group.group.coordinates), group.rank, group.mobility) == (7, 6, 1)
    assert len(group.redundant) == 9 and all(".position.z" in r or ".orientation." in r
                                             for r in group.redundant)


def test_assembly_over_a_revolution_matches_plane_geometry(chain):
    model = chain.model
    q = None
    for theta in np.radians(np.arange(0.0, 361.0, 5.0)):
        q = chain.positions(np.array([theta]), q)
        np.testing.assert_allclose(_wrapped(q), closed_form(theta), atol=1e-10)
        assert np.abs(evaluate(model, chain.rows, q).residual).max() <= 1e-12
        pts = point_positions(model, forward_kinematics(model, q))
        B, E = pts["link2.B"], pts["link6.E"]
        np.testing.assert_allclose(pts["link5.B"], B, atol=1e-12)
        np.testing.assert_allclose(pts["link7.B"], B, atol=1e-12)
        # the pantograph: E = O + (0.335 / 0.096) (B - O), O = joint III-1^0 (E is written
        # to the micrometre in the file: 0.834010 of 0.8340104 m)
        np.testing.assert_allclose(E[:2] - III1, 0.335 / P1 * (B[:2] - III1), atol=1e-6)


def test_hoekens_coupler_point_runs_straight():
    """Text: the coupler point's path is partly straight (Hoeken's mechanism): over the
    crank's half-turn from -90 to +90 deg, B runs 0.16 m along x while its height varies by
    0.27 mm (plane geometry; measured)."""
    B = []
    for theta in np.radians(np.arange(-90.0, 90.5, 1.0)):
        A = 0.038 * np.array([math.cos(theta), math.sin(theta)])
        B.append(2 * _circles(A, 0.115, I1, 0.115, -1.0) - A)
    B = np.array(B)
    assert np.ptp(B[:, 0]) > 0.16 and np.ptp(B[:, 1]) < 3e-4


def _state(chain: ClosedChain, t: float, start: np.ndarray | None) -> cc.ClosedChainLoads:
    theta0 = chain.assembled[chain.independent[0]]
    return cc.inverse_dynamics(chain, [theta0 + W * t], [W], [0.0], start)


@pytest.mark.parametrize("t", [0.1, 0.55, 0.8, 1.2])
def test_driving_torque_by_power_balance_and_forward_dynamics(chain, t):
    """tau theta_dot = dE/dt (E kinetic + gravitational, central differences, 1e-4 s) and
    the embedded forward dynamics under tau gives back zero crank acceleration."""
    loads = _state(chain, t, None)
    h = 1e-4
    e_plus, e_minus = (cc.energy(chain, s.q, s.qd) for s in
                       (_state(chain, t + h, loads.q), _state(chain, t - h, loads.q)))
    dE = (e_plus - e_minus) / (2 * h)
    power = loads.effort[0] * W
    assert abs(power) > 1.0                            # not vacuous, W
    assert abs(dE - power) <= 1e-6 * abs(power)
    ind = chain.independent
    qdd, _, _ = cc.forward_dynamics(chain, loads.q[ind], loads.qd[ind], loads.effort, loads.q)
    assert abs(qdd[0]) <= 1e-9


def test_paper_subsystem_approach_gives_the_same_torque_and_multipliers(chain):
    """Seed 002 sec. 4.4: the spanning tree is determinate (7 unknowns: lambda_1..3 in the
    plane and tau_D); subsystem III's four equations give lambda_2, lambda_3, then subsystem
    I's two give lambda_1, then subsystem II's one gives tau_D. Our minimum-norm solution of
    the whole chain must agree, and leave the in-plane rows out of the indeterminate part."""
    names, rows = chain.model.coordinate_names, chain.rows.names
    cols = {s: [names.index(c) for c in names if c.startswith(f"theta_{s}_")]
            for s in ("I", "II", "III")}
    planar = {k: [rows.index(f"lambda{k}.position.{a}") for a in "xy"] for k in (1, 2, 3)}
    last = None
    for t in np.linspace(0.0, 4.0 / 3.0, 17):
        loads = _state(chain, t, last)
        last = loads.q
        J = evaluate(chain.model, chain.rows, loads.q).jacobian
        f = loads.tree_effort                          # H qdd + b = S^T tau + J^T lambda
        r23 = planar[2] + planar[3]
        lam23 = np.linalg.solve(J[np.ix_(r23, cols["III"])].T, f[cols["III"]])
        lam1 = np.linalg.solve(J[np.ix_(planar[1], cols["I"])].T,
                               f[cols["I"]] - J[np.ix_(r23, cols["I"])].T @ lam23)
        lam = np.concatenate([lam1, lam23])
        r = planar[1] + r23
        tau = f[cols["II"]] - J[np.ix_(r, cols["II"])].T @ lam
        scale = np.abs(lam).max()
        np.testing.assert_allclose(loads.effort, tau, atol=1e-9 * scale)
        np.testing.assert_allclose(loads.multipliers[r], lam, atol=1e-9 * scale)
        assert np.abs(loads.indeterminate[r]).max(initial=0.0) <= 1e-12
