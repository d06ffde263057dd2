"""identify on bags of the stand-in robot (issue 36): a "truth" model (the bundled CHARMIE,
a few masses perturbed, friction 0: the broadcasters' efforts are the evaluator's inverse
dynamics, which has none) drives the round-3 stand-in robot's two broadcasters (hardware
names, wheels and fingers, actuators in mm; test/robot_standins.py ``efforts``) and the
odometry (base still); two bags are recorded over DDS (test/bag_recorder.py): sqlite3 split
into 2 zstd-compressed files, and MCAP split into 2 files; each is read as identify reads it
(the robot's joint map, /odom) and identified (identification.pipeline, identify's own
steps). The reference: the same motion sampled exactly on a regular grid at the same rate and
length (``record``), written as one MCAP (``write_log``; read by the same reader, whose grid
then is the log's own samples) and identified the same way. What is compared: the WLS base
parameters, the truth's efforts predicted, and the masses as the log determines them (sums of
masses: ``mass_sums``).

Rates: the broadcasters at 250 Hz (arms, wheels) and 50 Hz (body, fingers), odometry 50 Hz
(the robot graph's 500/100 Hz halved; the evaluator costs ~16 us a call, the rest is rclpy).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]
rclpy = pytest.importorskip("rclpy")
pytest.importorskip("rosbags")

from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from bag_recorder import BagRecorder  # noqa: E402
from charmie_dynamics import load_model  # noqa: E402
from charmie_dynamics.identification.logs import write_log  # noqa: E402
from charmie_dynamics.identification.model_file import updated_model_text  # noqa: E402
from charmie_dynamics.identification.pipeline import identify, residual_rms  # noqa: E402
from charmie_dynamics.identification.recording import measured_states, record  # noqa: E402
from charmie_dynamics.identification.regressor import inertial_parameters  # noqa: E402
from charmie_dynamics.identification.regressor import model_parameters, parameter_layout
from charmie_dynamics.model.reader import read_model_file  # noqa: E402
from charmie_dynamics.recordings import open_recording  # noqa: E402
from charmie_dynamics.resources import bundled_model  # noqa: E402
from charmie_dynamics.ros.common.joint_map import JointMap  # noqa: E402
from charmie_dynamics.ros.tools.recorded_inputs import read_any_log  # noqa: E402
from charmie_dynamics.ros.tools.robot_inputs import RobotTopics  # noqa: E402
from charmie_dynamics.trajectories import Trajectory  # noqa: E402
from domains import domain_id  # noqa: E402
from node_process import Child  # noqa: E402
from robot_graph_config import (FINGERS, ROBOT_MAP, WHEELS, broadcasters, robot_map,  # noqa: E402
                                sinusoid_state)

HERE = Path(__file__).resolve().parent
#: body -> factor of its mass in the truth (com and inertia about the com kept)
PERTURBED = {"body_4": 1.15, "body_5": 1.2, "body_8a": 0.8, "body_10b": 1.25, "body_8c": 0.85}
# every joint the sum of sinusoids at 0.25, 0.5 and 0.75 Hz (robot_graph_config.joint_motion):
# with one frequency the log determined the masses poorly (the mass sum below off by 10 kg
# from either bag); at 0.8 of the velocity limit or the range's 0.2
FREQUENCY, HARMONICS = 0.25, 3
FAST_RATE, SLOW_RATE, ODOM_RATE = 250.0, 50.0, 50.0
LENGTH = 12.0               # s of each recording
MAX_JOINT_AGE = 0.25        # s: a loaded machine delays the 50 Hz broadcaster
PRIOR_WEIGHT = 0.01         # identify's default
# see the end of test_identify_on_bags_of_the_robot
BASE_ERROR_BOUND, PREDICTION_FRACTION, MASS_SUM_FRACTION = 0.03, 0.02, 0.1


def truth_model(folder: Path) -> Path:
    model, text = read_model_file(bundled_model())
    layout = parameter_layout(model)
    pi = model_parameters(model)
    for k, i in enumerate(layout.bodies):
        b = model.bodies[i]
        if b.name in PERTURBED:
            pi[10 * k:10 * k + 10] = inertial_parameters(b.mass * PERTURBED[b.name], b.com,
                                                         b.inertia)
    pi[layout.friction_start:] = 0.0          # the evaluator's efforts have no friction
    path = folder / "truth.yaml"
    path.write_text(updated_model_text(text, str(bundled_model()), model, layout, pi))
    return path


def identified(path: Path, nominal, truth, topics: RobotTopics, joint_map) -> dict:
    """identify's estimate from the log at ``path`` read as identify reads it, and how well it
    knows the truth: the relative error of its WLS base parameters (the combinations this
    log identifies) against the truth's, its identified masses, and its "read" line."""
    read = read_any_log(path, nominal, topics, joint_map, MAX_JOINT_AGE)
    state, effort, _ = measured_states(nominal, read[0], str(path))
    result = identify(nominal, state, effort, PRIOR_WEIGHT)
    beta_true = result.base.projection @ model_parameters(truth)
    masses = {}
    for k, i in enumerate(result.layout.bodies):
        if nominal.bodies[i].name in PERTURBED:
            masses[nominal.bodies[i].name] = float(result.consistent.pi[10 * k])
    return dict(base_error=float(np.linalg.norm(result.wls.beta - beta_true)
                                 / np.linalg.norm(beta_true)),
                result=result, masses=masses, read=read[1],
                mass_sums=mass_sums(result, nominal, truth))


def mass_sums(result, nominal, truth) -> dict[str, tuple[float, float, float]]:
    """The log's base parameters that are sums of masses including a perturbed one (a
    body's mass alone is not identifiable from joint efforts: it is regrouped into its
    parent's parameters, so the masses come back as these sums): name -> (bodies summed,
    WLS estimate - truth, truth - nominal), kg."""
    base, names = result.base, result.layout.names
    P = base.projection
    beta_true, beta_nominal = base.of(model_parameters(truth)), base.of(model_parameters(nominal))
    out = {}
    for j, i in enumerate(base.independent):
        summed = [names[c][:-2] for c in np.flatnonzero(np.abs(P[j]) > 1e-9)
                  if names[c].endswith(".m")]
        if names[i].endswith(".m") and np.allclose(P[j][[names.index(b + ".m") for b in summed]], 1.0) \
                and set(summed) & set(PERTURBED):
            out[names[i]] = (len(summed), float(result.wls.beta[j] - beta_true[j]),
                             float(beta_true[j] - beta_nominal[j]))
    return out


def test_identify_on_bags_of_the_robot(tmp_path, monkeypatch):
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id(200, 30)))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    monkeypatch.delenv("ROS_LOCALHOST_ONLY", raising=False)
    env = dict(os.environ)
    nominal = load_model(bundled_model())
    truth_path = truth_model(tmp_path)
    truth = load_model(truth_path)
    joint_map = robot_map()
    fast, slow = broadcasters(nominal, joint_map, FREQUENCY, HARMONICS)
    motion = fast["joints"] + slow["joints"]
    efforts = dict(model=str(truth_path), motion=motion, joint_map=str(ROBOT_MAP))
    fast.update(rate=FAST_RATE, efforts=efforts)
    slow.update(rate=SLOW_RATE, efforts=efforts)

    def config(name: str, value: dict) -> str:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(value))
        return str(path)
    standin = lambda role, cfg: [sys.executable, str(HERE / "robot_standins.py"), role, cfg]  # noqa: E731
    logs = tmp_path / "logs"
    logs.mkdir()
    bags = {"sqlite3": dict(storage="sqlite3", split_files=2, compression="zstd"),
            "mcap": dict(storage="mcap", split_files=2)}
    types = {"/joint_states": JointState, "/odom": Odometry}
    per_second = FAST_RATE + SLOW_RATE
    children = [Child("jsb_arms", standin("broadcaster", config("fast", fast)), env, logs),
                Child("jsb_body", standin("broadcaster", config("slow", slow)), env, logs),
                Child("base_controller", standin("odometry", config(
                    "odom", dict(rate=ODOM_RATE, scale=0.0))), env, logs)]
    try:
        for name, options in bags.items():
            with BagRecorder(tmp_path / name, types, **options) as rec:
                # every stand-in heard, then LENGTH s of messages by count (a loaded machine
                # slows them: waited on, never timed)
                assert rec.wait_for(1, 180.0, "/odom") and rec.wait_for(1, 180.0), \
                    [c.log.read_text()[-2000:] for c in children]
                mark = rec.count("/joint_states")
                assert rec.wait_for(mark + int(LENGTH * per_second), 600.0, "/joint_states"), \
                    (rec.count("/joint_states"), [c.log.read_text()[-2000:] for c in children])
                assert rec.wait_for(int(LENGTH * ODOM_RATE), 600.0, "/odom")
    finally:
        for child in children:
            child.stop()

    # the reference: the same sinusoids sampled exactly, one MCAP, base efforts logged
    t = np.arange(int(round(LENGTH * FAST_RATE)) + 1) / FAST_RATE
    x, xd, xdd = (np.array(v) for v in zip(*(sinusoid_state(motion, joint_map,
                                                             nominal.input_names, tk)
                                              for tk in t)))
    exact_log = record(truth, Trajectory(t, x, xd, xdd))
    write_log(tmp_path / "exact.mcap", nominal, exact_log)
    runs = {"exact": identified(tmp_path / "exact.mcap", nominal, truth, RobotTopics(),
                                JointMap())}
    robot = RobotTopics(("/joint_states",), "/actuator_states", "/odom")
    for name, options in bags.items():
        recording = open_recording(tmp_path / name)
        assert recording.storage == options["storage"] and len(recording.files) == 2
        assert all(f.endswith(".zstd") == bool(options.get("compression"))
                   for f in map(str, recording.files))
        runs[name] = identified(tmp_path / name, nominal, truth, robot, joint_map)
        read = runs[name]["read"]
        assert "messages refused" not in read, read
        ignored = re.search(r"names not in the model, ignored: ([^;]*)", read)
        assert ignored and set(ignored.group(1).split(", ")) == set(WHEELS + FINGERS), read
        assert "inputs without efforts, not fitted: d1, d2, theta3" in read, read

    # each identified model predicts the truth's efforts along the exact motion (the arms',
    # body's and neck's: the base's are not measured on the robot)
    state, effort, _ = measured_states(nominal, exact_log, "exact")
    joints = [k for k, n in enumerate(nominal.input_names) if n not in ("d1", "d2", "theta3")]

    def prediction_rms(pi: np.ndarray) -> float:
        return float(np.sqrt(np.mean(residual_rms(nominal, pi, state, effort)[1][joints] ** 2)))
    nominal_rms = prediction_rms(model_parameters(nominal))
    lines = [f"nominal model: prediction RMS {nominal_rms:.4g} N m"]
    for name, run in runs.items():
        run["prediction"] = prediction_rms(run["result"].consistent.pi)
        lines.append(f"{name}: {run['read'] or 'exact'}; base parameters' relative error "
                     f"{run['base_error']:.3g}; prediction RMS {run['prediction']:.4g} N m; "
                     "identified mass - truth (kg): " + ", ".join(
                         f"{b} {m - truth.mass[truth.body_names.index(b)]:+.3f}"
                         for b, m in run["masses"].items())
                     + "; mass sums (bodies, estimate - truth, truth - nominal): " + ", ".join(
                         f"{n} ({c}, {e:+.4f}, {d:+.4f}) kg" for n, (c, e, d) in run["mass_sums"].items()))
    print("\n".join(lines))
    # Measured (one run, 2-core AMD EPYC VM; relative error of the WLS base parameters /
    # prediction RMS of the truth's efforts along the exact motion, arms, body and neck /
    # the mass sum's WLS estimate - truth, of a +2.275 kg perturbation):
    #   nominal model                       -      / 14.27 N m  / -
    #   exact MCAP (today's path)     1.8e-6 / 0.132 N m  / +0.0000 kg
    #   sqlite3 bag, 2 zstd files      0.0031 / 0.064 N m  / +0.019 kg
    #   MCAP bag, 2 files              0.0021 / 0.060 N m  / +0.022 kg
    # (the one-frequency motion of the last round gave 0.136 and 0.044, and mass sums off by
    # 10 kg). The bags do not reach the exact path's 1e-6: the 50 Hz broadcaster's inputs are
    # interpolated to the 250 Hz grid, which the exact path samples without error. Bounds: 10x
    # the worst measured (a loaded machine delays messages, and the interpolation spans the
    # gaps), 4x for the prediction. The single masses (printed) are not identifiable from
    # joint efforts, by either path: each is regrouped into its parent's parameters; the
    # consistent estimate keeps what the log leaves undetermined at the prior.
    for name in bags:
        assert runs[name]["base_error"] <= BASE_ERROR_BOUND, lines
        assert runs[name]["prediction"] <= PREDICTION_FRACTION * nominal_rms, lines
    for name, run in runs.items():
        assert run["mass_sums"], lines
        for error, perturbation in (v[1:] for v in run["mass_sums"].values()):
            bound = 1e-3 if name == "exact" else MASS_SUM_FRACTION
            assert abs(error) <= bound * abs(perturbation), lines
