"""The cable (model/kinds/cable.py), issue 39's example of a new mechanism kind: a spring's
law while taut, nothing while slack. Checked against the spring it equals when taut, by
virtual work against its energy (central differences) on both sides of the point where it
turns taut, and by a free simulation that keeps the total energy while the cable goes slack
and taut again."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

from charmie_dynamics import forward_kinematics, resolve_state
from charmie_dynamics.dynamics import inverse_dynamics
from charmie_dynamics.export.urdf import overlay_from_model, urdf_from_model
from charmie_dynamics.mechanisms.forces import law_arguments, passive_forces
from charmie_dynamics.model import ModelError, load_model, model_from_dict
from charmie_dynamics.simulation import mechanical_energy, simulate

K, FREE, PRELOAD = 40.0, 0.55, 2.0
#: the cable runs from l1's top to l3's tip; the arm's reach moves its length 0.1 to 0.8 m
POINTS = {"l1": {"top": [0.0, 0.0, 0.3]}, "l3": {"tip": [0.3, 0.0, 0.0]}}


def arm(section: str, **law) -> dict:
    """A 3-link arm (q1 about z, q2 and q3 about parallel y axes) with one mechanism of
    ``section`` ("cables" or "springs") from l1.top to l3.tip."""
    inertia = {"ixx": 0.02, "iyy": 0.03, "izz": 0.01}
    entry = {"name": "tendon", "between": ["l1.top", "l3.tip"], "stiffness": K,
             "free_length": FREE, "preload": PRELOAD} | law
    return {
        "format": "charmie_dynamics/model/1", "name": "cable_arm",
        "bodies": [
            {"name": "l1", "parent": "world", "origin": [0, 0, 0.1],
             "joint": {"type": "R", "axis": "z", "coordinate": "q1"},
             "mass": 2.0, "com": [0.01, 0.02, 0.1], "inertia": inertia,
             "points": POINTS["l1"]},
            {"name": "l2", "parent": "l1", "origin": [0.05, 0, 0.3],
             "joint": {"type": "R", "axis": "y", "coordinate": "q2"},
             "mass": 1.5, "com": [0.2, 0.01, 0.0], "inertia": inertia},
            {"name": "l3", "parent": "l2", "origin": [0.4, 0.02, 0],
             "joint": {"type": "R", "axis": "y", "coordinate": "q3"},
             "mass": 1.0, "com": [0.15, 0, 0.02], "inertia": inertia,
             "points": POINTS["l3"]},
        ],
        section: [entry],
    }


def efforts(model, q):
    zero = np.zeros_like(q)
    return inverse_dynamics(model, resolve_state(model, q, zero, zero)).coordinate_effort


def lengths(model, q):
    return law_arguments(model, forward_kinematics(model, q))[..., 0]


RNG = np.random.default_rng(7)
STATES = RNG.uniform(-2.5, 2.5, (400, 3))


@pytest.fixture(scope="module")
def models():
    return {name: model_from_dict(arm(name), f"{name}.yaml") for name in ("cables", "springs")}


def test_the_states_are_taut_and_slack(models):
    """The check below covers both sides: the states' lengths straddle the taut length
    L1 = L0 - F0 / k."""
    length = lengths(models["cables"], STATES)
    taut = FREE - PRELOAD / K
    assert (length > taut + 0.05).sum() > 50 and (length < taut - 0.05).sum() > 50


def test_taut_it_is_the_spring_and_slack_it_is_nothing(models):
    cable, spring = models["cables"], models["springs"]
    fk = forward_kinematics(cable, STATES)
    tension = passive_forces(cable, fk).spring_tension[:, 0]
    spring_tension = passive_forces(spring, fk).spring_tension[:, 0]
    taut = spring_tension > 0.0
    np.testing.assert_array_equal(tension[taut], spring_tension[taut])
    assert (tension[~taut] == 0.0).all()
    bare = efforts(model_from_dict({k: v for k, v in arm("cables").items() if k != "cables"}),
                   STATES)
    on_cable, on_spring = efforts(cable, STATES) - bare, efforts(spring, STATES) - bare
    np.testing.assert_allclose(on_cable[taut], on_spring[taut], rtol=0, atol=1e-12)
    np.testing.assert_allclose(on_cable[~taut], 0.0, rtol=0, atol=1e-12)


def test_virtual_work_matches_the_energy_gradient(models):
    """The cable's generalized force is -dV/dq (V its energy, central differences), taut or
    slack: the efforts that hold the arm gain dV/dq. States within 1e-4 m of the kink are
    left out (a difference across it is not a derivative)."""
    cable = models["cables"]
    bare = efforts(model_from_dict({k: v for k, v in arm("cables").items() if k != "cables"}),
                   STATES)
    diff = efforts(cable, STATES) - bare
    zero = np.zeros_like(STATES)
    h = 1e-6
    gradient = np.empty_like(STATES)
    for k, step in enumerate(h * np.eye(3)):
        gradient[:, k] = (mechanical_energy(cable, STATES + step, zero).spring
                          - mechanical_energy(cable, STATES - step, zero).spring) / (2 * h)
    away = np.abs(lengths(cable, STATES) - (FREE - PRELOAD / K)) > 1e-4
    error = np.abs(diff - gradient)[away].max()
    assert error < 1e-7, error
    assert np.abs(gradient).max() > 1.0


@pytest.mark.parametrize("dynamics", ["cholesky", "aba"])
def test_energy_is_kept_while_it_goes_slack_and_taut(dynamics, models):
    """2 s at 0.5 ms from a taut state with speed: the cable goes slack and taut again
    (its energy is 0 part of the time), and the total energy drifts by a small fraction
    of its swing (the kink costs RK4 its order at each crossing)."""
    cable = models["cables"]
    q0, qd0 = np.array([0.2, 0.9, -0.3]), np.array([0.5, -4.0, 6.0])
    run = simulate(cable, q0, qd0, None, 2.0, 5e-4, "rk4", limits=False, dynamics=dynamics)
    e = mechanical_energy(cable, run.q, run.qd)
    total = e.kinetic + e.gravitational + e.spring
    assert (e.spring == 0.0).any() and (e.spring > 0.1).any()
    assert np.abs(total - total[0]).max() < 1e-4 * np.ptp(e.spring)


def test_it_loads_names_and_round_trips_through_the_overlay(models, tmp_path):
    cable = models["cables"]
    assert [type(c).__name__ for c in cable.mechanisms["cables"]] == ["Cable"]
    overlay = overlay_from_model(cable)
    assert overlay["cables"][0]["between"] == ["l1.top", "l3.tip"]
    (tmp_path / "arm.urdf").write_text(urdf_from_model(cable, include_auxiliary=False))
    (tmp_path / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    back = load_model(tmp_path / "arm.urdf", overlay=tmp_path / "overlay.yaml")
    np.testing.assert_array_equal(efforts(back, STATES), efforts(cable, STATES))
    with pytest.raises(ModelError, match=r"cables\[0\] \(tendon\)\.stiffness"):
        model_from_dict(arm("cables", stiffness=-1.0), "bad.yaml")


def test_one_point_twice_is_refused():
    """The attack: a cable (or spring) from a point to itself has no direction (its forces
    are not finite); validate-model accepted it."""
    with pytest.raises(ModelError, match=r"cables\[0\] \(tendon\)\.between: got .*one point "
                                         r"twice, expected two points"):
        model_from_dict(arm("cables", between=["l1.top", "l1.top"]), "bad.yaml")
