"""Identification with the truth known: a perturbed "true" model (masses +-30 %, centres of
mass, inertias, springs, friction) moves along an excitation trajectory; its efforts, from
the inverse dynamics along the motion (identification/recording.py says why not the
integrator), are logged to MCAP with Gaussian noise of stated std; the nominal model is
identified from the log. On PUMA the efforts come from Pinocchio's joint torque regressor
(an independent implementation of the tree part) instead of ours.

Noise: positions 1e-5 (rad or m), efforts 0.5 (N m or N), velocities exact.
"""
import re

import numpy as np
import pinocchio as pin
import pytest

from charmie_dynamics import load_model
from charmie_dynamics.cli.main import main
from charmie_dynamics.identification.estimate import is_consistent
from charmie_dynamics.identification.excitation import at_rest, within_limits
from charmie_dynamics.identification.logs import Log, LogError, read_log, write_log
from charmie_dynamics.identification.pipeline import identify, residual_rms
from charmie_dynamics.identification.recording import measured_states, record
from charmie_dynamics.identification.regressor import (friction_columns, inertia_matrix,
                                                       inertial_parameters, model_parameters,
                                                       parameter_layout, with_parameters)
from charmie_dynamics.kinematics import resolve_state
from charmie_dynamics.model.reader import read_model_file
from charmie_dynamics.recordings import RecordingError
from charmie_dynamics.ros.common.joint_map import JointMap
from charmie_dynamics.ros.tools.recorded_inputs import RobotTopics, read_any_log
from conftest import CHARMIE, EXAMPLES
from pin_oracle import pin_joint_vector, pinocchio_model

POSITION_NOISE, EFFORT_NOISE = 1e-5, 0.5


def read(path, model) -> Log:
    """A recording or a CSV log, as identify reads it (no joint map)."""
    return read_any_log(path, model, RobotTopics(), JointMap(), 0.1)[0]
#: the command's default: the prior counts a hundredth of a sample per parameter
PRIOR_WEIGHT = 0.01
#: the fitted motion: 20 s, 8 harmonics (a 10 s, 5-harmonic one left act5's holdout RMS at
#: 1.6 N with OLS itself: too little excitation); the held-out one 10 s, 5 harmonics
FIT_MOTION = {"period": 20.0, "harmonics": 8}


def perturbed(model, seed):
    """The "true" model: per body mass x U(0.7, 1.3), com moved by up to 1 cm, the mass
    distribution stretched by U(0.7, 1.3) along each principal axis (the second moments
    S = tr(I_C)/2 1 - I_C scaled: a physical body stays one; scaling the principal moments
    of inertia themselves can break the triangle inequality of a thin plate), springs and
    friction x U(0.7, 1.3)."""
    rng = np.random.default_rng(seed)
    layout = parameter_layout(model)
    pi = model_parameters(model)
    for k, i in enumerate(layout.bodies):
        b = model.bodies[i]
        values, vectors = np.linalg.eigh(0.5 * np.trace(b.inertia) * np.eye(3) - b.inertia)
        second = (vectors * values * rng.uniform(0.7, 1.3, 3)) @ vectors.T
        inertia = np.trace(second) * np.eye(3) - second
        pi[10 * k:10 * k + 10] = inertial_parameters(b.mass * rng.uniform(0.7, 1.3),
                                                     b.com + rng.uniform(-0.01, 0.01, 3), inertia)
    rest = slice(layout.spring_start, len(pi))
    pi[rest] *= rng.uniform(0.7, 1.3, len(pi) - layout.spring_start)
    assert all(is_consistent(pi[10 * k:10 * k + 10]) for k in range(len(layout.bodies)))
    return with_parameters(model, pi)


def fourier_motion(model, seed, period=10.0, dt=0.02, harmonics=5):
    """A random Fourier series within the limits (excitation.py), one period."""
    n = len(model.input_names)
    free = np.random.default_rng(seed).normal(size=2 * n * (harmonics - 1))
    series = within_limits(model, *at_rest(free, n, harmonics), period, 2.0)
    return series.sample(dt * np.arange(int(round(period / dt)) + 1))


def logged(model, truth, seed, tmp_path, name, **motion):
    """The truth's log along a Fourier motion, through an MCAP file, as the nominal model
    reads it."""
    log = record(truth, fourier_motion(model, seed, **motion), POSITION_NOISE, EFFORT_NOISE,
                 seed)
    path = tmp_path / f"{name}.mcap"
    write_log(path, model, log)
    return measured_states(model, read(path, model), name)


def check_identification(model, truth, fit, holdout):
    state, effort, _ = fit
    result = identify(model, state, effort, prior_weight=PRIOR_WEIGHT)
    layout = result.layout
    # predictions on the held-out motion within 2x the noise level, every input
    _, rms = residual_rms(model, result.consistent.pi, *holdout[:2])
    assert np.all(rms < 2 * EFFORT_NOISE), dict(zip(model.input_names, rms.round(3)))
    # the base parameters within 3 sigma of the truth's, as statistics allows: with r
    # independent Gaussian errors, all r within 3 sigma happens with probability 0.9973^r
    # only (CHARMIE, r = 184: 61 %), so at most 1 % of them (0.27 % expected) beyond 3 sigma,
    # none beyond 4.5 sigma, and the standardised errors' mean square near 1 (chi-square / r:
    # within 4 of its standard deviations sqrt(2 / r))
    truth_beta = result.base.of(model_parameters(truth))
    z = (result.wls.beta - truth_beta) / result.wls.std
    worst = int(np.argmax(np.abs(z)))
    assert np.mean(np.abs(z) > 3) <= 0.01, np.sort(np.abs(z))[-5:]
    assert np.all(np.abs(z) < 4.5), (result.base.base_names[worst], z[worst])
    assert abs(np.mean(z ** 2) - 1) < 4 * np.sqrt(2 / len(z)), np.mean(z ** 2)
    # the consistent estimate is consistent, and fits nearly as well as OLS
    pi = result.consistent.pi
    for k in range(len(layout.bodies)):
        body = pi[10 * k:10 * k + 10]
        assert is_consistent(body) and body[0] > 0, layout.names[10 * k]
        # the principal moments about the com obey the triangle inequalities
        com = body[1:4] / body[0]
        I_C = inertia_matrix(body[4:]) - body[0] * (com @ com * np.eye(3) - np.outer(com, com))
        moments = np.linalg.eigvalsh(I_C)
        assert moments[0] > 0 and moments[2] < moments[0] + moments[1], (layout.names[10 * k],
                                                                          moments)
    friction = pi[layout.friction_start:]
    assert np.all(friction >= 0)
    ratio = np.sqrt(np.mean(result.consistent.residual_rms ** 2) /
                    np.mean(result.ols.residual_rms ** 2))
    assert ratio <= 1.2, ratio
    return result


@pytest.mark.slow
def test_charmie_identified_from_a_noisy_mcap_log(charmie, tmp_path):
    truth = perturbed(charmie, 1)
    fit = logged(charmie, truth, 2, tmp_path, "fit", **FIT_MOTION)
    holdout = logged(charmie, truth, 3, tmp_path, "holdout")
    check_identification(charmie, truth, fit, holdout)


@pytest.mark.slow
def test_puma_identified_from_pinocchio_efforts(tmp_path):
    """The log's efforts from Pinocchio's regressor times the truth's parameters (the tree
    part: PUMA has no loops or springs), plus friction."""
    model = load_model(EXAMPLES["puma"])
    truth = perturbed(model, 4)
    layout = parameter_layout(model)
    pi_true = model_parameters(truth)
    pm = pinocchio_model(model)
    pd = pm.createData()

    def pinocchio_log(seed, **motion):
        traj = fourier_motion(model, seed, **motion)
        state = resolve_state(model, traj.x, traj.xd, traj.xdd)
        effort = np.array([pin.computeJointTorqueRegressor(
            pm, pd, *(pin_joint_vector(model, v[s]) for v in (state.q, state.qd, state.qdd)))
            @ pi_true[:layout.n_inertial] for s in range(len(traj.t))])
        effort += friction_columns(model, state.q, state.qd) @ pi_true[layout.friction_start:]
        rng = np.random.default_rng(seed)
        log = Log(traj.t, traj.x + rng.normal(0, POSITION_NOISE, traj.x.shape), traj.xd,
                  effort + rng.normal(0, EFFORT_NOISE, effort.shape))
        path = tmp_path / f"{seed}.mcap"
        write_log(path, model, log)
        return measured_states(model, read(path, model), str(path))

    check_identification(model, truth, pinocchio_log(5, **FIT_MOTION), pinocchio_log(6))


def test_logs_round_trip_and_bad_logs(charmie, tmp_path):
    log = record(charmie, fourier_motion(charmie, 7, period=1.0), 0.0, 0.0)
    for name in ("log.mcap", "log.csv"):
        write_log(tmp_path / name, charmie, log)
        back = read(tmp_path / name, charmie)
        for a, b in ((log.t, back.t), (log.x, back.x), (log.xd, back.xd),
                     (log.effort, back.effort)):
            assert np.allclose(a, b, rtol=1e-12, atol=1e-12)
    (tmp_path / "bad.csv").write_text("time,d1\n0,1\n")
    with pytest.raises(LogError, match="bad.csv: missing column"):
        read_log(tmp_path / "bad.csv", charmie)
    (tmp_path / "bad.mcap").write_bytes(b"\x89MCAP0\r\n" + b"\0" * 40)
    with pytest.raises(RecordingError, match="bad.mcap: "):
        read(tmp_path / "bad.mcap", charmie)


@pytest.mark.slow
def test_commands_record_identify_excite(tmp_path, capsys):
    """The README's commands on the bundled model, small: record two logs, identify, load
    the written model back; excite writes a trajectory that record plays."""
    traj = tmp_path / "excite.csv"
    assert main(["excite", "--evaluations", "10", "--period", "4", "--out", str(traj)]) == 0
    found = re.search(r"([-+.\de]+) for the random start, ([-+.\de]+) after",
                      capsys.readouterr().out)
    assert float(found.group(2)) <= float(found.group(1))
    for name, seed in (("fit.mcap", 1), ("holdout.mcap", 2)):
        assert main(["record", "--trajectory", str(traj), "--effort-noise", "0.5",
                     "--position-noise", "1e-5", "--seed", str(seed),
                     "--out", str(tmp_path / name)]) == 0
    new = tmp_path / "new.yaml"
    assert main(["identify", "--log", str(tmp_path / "fit.mcap"), "--holdout",
                 str(tmp_path / "holdout.mcap"), "--out", str(new)]) == 0
    model, text = read_model_file(new)
    assert "# identified" in text
    assert len(parameter_layout(model)) == len(parameter_layout(load_model(CHARMIE)))
    report = (tmp_path / "new_report" / "report.txt").read_text()
    assert "base parameter" in report and "holdout consistent" in report
    assert (tmp_path / "new_report" / "holdout.png").stat().st_size > 1000
    capsys.readouterr()
    assert main(["identify", "--log", str(tmp_path / "missing.mcap"), "--out",
                 str(tmp_path / "other.yaml")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing.mcap: cannot read the log" in err[0]
    # issue 34: an existing --out (a model, a log, a trajectory) or report is replaced only
    # with --overwrite; refused before any work, nothing written
    before = new.read_bytes()
    for argv in (["identify", "--log", str(tmp_path / "fit.mcap"), "--out", str(new)],
                 ["identify", "--log", str(tmp_path / "fit.mcap"), "--out",
                  str(tmp_path / "fresh.yaml"), "--report", str(tmp_path / "new_report")],
                 ["record", "--trajectory", str(traj), "--out", str(tmp_path / "fit.mcap")],
                 ["excite", "--out", str(traj)]):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "give --overwrite" in err[0], err
    assert new.read_bytes() == before and not (tmp_path / "fresh.yaml").exists()
