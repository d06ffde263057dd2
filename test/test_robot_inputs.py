"""Joint states as a ros2_control robot sends them (pure pieces, no ROS): extra names ignored,
partial messages merged joint by joint with each joint's stamp, the robot's names and units
(joint_map.py), and the frames the dynamics node leaves to robot_state_publisher and the
base's odometry (outputs.frame_plan)."""
import math
from pathlib import Path

import pytest

from charmie_dynamics.evaluators.evaluator import Evaluator
from charmie_dynamics.model.model import JointType
from charmie_dynamics.ros.common.inputs import (InputLimits, InputRejected, StateAssembler,
                                                read_joint_state)
from charmie_dynamics.ros.common.joint_map import JointMap, JointMapError, read_joint_map
from charmie_dynamics.ros.common.outputs import frame_plan

WHEELS = ["wheel_front_left_joint", "wheel_front_right_joint", "wheel_rear_left_joint",
          "wheel_rear_right_joint"]


def test_merge_ignores_names_the_model_does_not_use_strict_refuses_them(charmie):
    assembler = StateAssembler(charmie)
    names = list(assembler.required_names()) + WHEELS
    values = [0.0] * (len(names) - 4) + [math.nan, 1.0, 2.0, 3.0]   # a wheel's NaN: not ours
    got = read_joint_state(names, values, [], assembler.accepted_names(),
                           assembler.required_names(), policy="merge")
    assert got.ignored == tuple(WHEELS)
    assert set(got.positions) == set(assembler.required_names())
    with pytest.raises(InputRejected) as info:
        read_joint_state(names, values, [], assembler.accepted_names(),
                         assembler.required_names(), policy="strict")
    assert info.value.reason == "unknown_name"


def test_merge_takes_partial_messages_and_still_refuses_bad_values(charmie):
    assembler = StateAssembler(charmie)
    got = read_joint_state(["theta8a", "finger_joint"], [0.1, 0.2], [0.5, 0.0],
                           assembler.accepted_names(), assembler.required_names(),
                           policy="merge")
    assert got.positions == {"theta8a": 0.1} and got.velocities == {"theta8a": 0.5}
    for names, position, reason in ((["theta8a"], [math.inf], "non_finite"),
                                    (["theta8a", "theta8a"], [0.0, 0.0], "duplicate_name"),
                                    (["theta8a"], [0.0, 1.0], "length_mismatch")):
        with pytest.raises(InputRejected) as info:
            read_joint_state(names, position, [], assembler.accepted_names(), policy="merge")
        assert info.value.reason == reason
    # a name the model does not use, repeated (the attack: a broadcaster message with
    # wheel_fl twice was rejected whole, every one of them), is ignored as its NaN is; in
    # strict, every repeated name is a duplicate
    names = ["theta8a", "wheel_fl", "wheel_fl"]
    got = read_joint_state(names, [0.1, math.nan, 0.3], [], assembler.accepted_names(),
                           policy="merge")
    assert got.positions == {"theta8a": 0.1} and got.ignored == ("wheel_fl",)
    with pytest.raises(InputRejected, match="wheel_fl appears twice") as info:
        read_joint_state(names, [0.1, 0.2, 0.3], [], assembler.accepted_names(), policy="strict")
    assert info.value.reason == "duplicate_name"


def test_merged_state_stamp_is_the_newest_and_each_joint_has_an_age(charmie):
    assembler = StateAssembler(charmie)
    required = assembler.required_names()
    half = len(required) // 2
    fast, slow = required[:half], required[half:]
    with pytest.raises(InputRejected) as info:
        assembler.merged_stamp(100_000_000)
    assert info.value.reason == "missing_name"
    assembler.update(dict.fromkeys(fast, 0.0), dict.fromkeys(fast, 0.0), 1.0, stamp=1_000_000_000)
    with pytest.raises(InputRejected, match=slow[0]) as info:
        assembler.merged_stamp(100_000_000)            # the slow publisher not heard yet
    assert info.value.reason == "missing_name"
    assembler.update(dict.fromkeys(slow, 0.0), dict.fromkeys(slow, 0.0), 1.0, stamp=990_000_000)
    assert assembler.merged_stamp(100_000_000) == 1_000_000_000
    assembler.update(dict.fromkeys(fast, 0.1), dict.fromkeys(fast, 0.0), 1.2, stamp=1_200_000_000)
    with pytest.raises(InputRejected, match=f"{slow[0]}.*stamped more than 0.1 s") as info:
        assembler.merged_stamp(100_000_000)
    assert info.value.reason == "joint_too_old"
    # an older value of a joint (a late message) does not replace a newer one
    assembler.update({fast[0]: 9.0}, {fast[0]: 0.0}, 1.3, stamp=1_100_000_000)
    assert assembler.positions[fast[0]] == 0.1
    assert assembler.stamps[0, assembler.slots[fast[0]]] == 1_200_000_000


def test_joint_map_names_and_units(charmie, tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text("names:\n  act4: lift_actuator\nscale:\n  act4: 0.001\n"
                    "offset:\n  act4: 0.4\n")
    m = read_joint_map(["theta8a=right_shoulder_joint", ""], str(path))
    m.check(charmie.input_names + charmie.coordinate_names, "charmie.yaml")
    assert m.to_model(["right_shoulder_joint", "lift_actuator", "theta9a", "x"]) == \
        ["theta8a", "act4", "theta9a", "x"]
    assert m.to_hardware(["theta8a", "theta9a"]) == ["right_shoulder_joint", "theta9a"]
    positions, velocities = {"act4": 50.0, "theta9a": 1.0}, {"act4": 20.0, "theta9a": 2.0}
    m.convert(positions, velocities)
    assert positions == {"act4": pytest.approx(0.45), "theta9a": 1.0}
    assert velocities == {"act4": pytest.approx(0.02), "theta9a": 2.0}


def test_with_a_map_a_model_name_on_joint_states_is_not_taken(charmie):
    """Issue 34, G4: with act4 mapped to lift_actuator (millimetres), a message naming act4
    was taken and scaled (0.4 m read as 0.3304 m), and a publisher flipping between the two
    names made the feedforward alternate. Now only the hardware name is read; the model's
    name is a foreign name, ignored and counted (merge) or refused (strict)."""
    m = JointMap({"act4": "lift_actuator", "theta8a": "theta9a", "theta9a": "theta8a"},
                 scale={"act4": 0.001}, offset={"act4": 0.0})
    assert m.message_to_model(["lift_actuator", "act4", "theta9a", "theta8a", "wheel_fl"]) == \
        ["act4", "act4 (a model name; the map reads lift_actuator)", "theta8a", "theta9a",
         "wheel_fl"]
    assert JointMap().message_to_model(["act4"]) == ["act4"]
    assembler = StateAssembler(charmie)
    allowed = tuple(assembler.accepted_names()) + tuple(charmie.actuator_names)
    got = read_joint_state(m.message_to_model(["act4", "lift_actuator"]), [0.4, 400.0], [],
                           allowed, (), policy="merge")
    m.convert(got.positions, got.velocities)
    assert got.positions == {"act4": pytest.approx(0.4)}          # the hardware's 400 mm
    assert got.ignored == ("act4 (a model name; the map reads lift_actuator)",)
    with pytest.raises(InputRejected) as info:
        read_joint_state(m.message_to_model(["act4"]), [0.4], [], allowed, (), policy="strict")
    assert info.value.reason == "unknown_name"


def test_rejection_texts_name_the_inputs_as_the_robot_does(charmie):
    """Issue 34's attack: under a joint map, the texts of missing, duplicate, old, stale,
    out-of-range and beyond-limit inputs named the model's names where the robot sent its
    own."""
    m = JointMap({"theta7a": "left_shoulder_pan", "act4": "lift_actuator"},
                 scale={"act4": 0.001}, offset={"act4": 0.0})
    assembler = StateAssembler(charmie, shown=m.hardware)
    allowed, required = assembler.accepted_names(), assembler.required_names()
    sent = [n for n in required if n != "theta7a"]
    with pytest.raises(InputRejected, match="^missing_name: left_shoulder_pan not in the message$"):
        read_joint_state(m.message_to_model(sent), [0.0] * len(sent), [], allowed, required,
                         policy="strict", shown=m.hardware)
    with pytest.raises(InputRejected, match="^duplicate_name: left_shoulder_pan appears twice$"):
        read_joint_state(m.message_to_model(["left_shoulder_pan"] * 2), [0.0, 0.0], [],
                         allowed, (), policy="merge", shown=m.hardware)
    with pytest.raises(InputRejected, match="^missing_name: no measurement yet of .*left_shoulder_pan"):
        assembler.assemble()
    assembler.update(dict.fromkeys(sent, 0.0), dict.fromkeys(sent, 0.0), 0.0, stamp=10**9)
    with pytest.raises(InputRejected, match="^missing_name: no measurement yet of left_shoulder_pan$"):
        assembler.merged_stamp(10**8)
    assembler.update({"theta7a": 0.0}, {"theta7a": 0.0}, 0.0, stamp=1)
    with pytest.raises(InputRejected, match="^joint_too_old: left_shoulder_pan stamped more than 0.1 s"):
        assembler.merged_stamp(10**8)
    with pytest.raises(InputRejected, match="^out_of_range: lift_actuator = 9.0 m outside"):
        assembler.update({"act4": 9.0}, {"act4": 0.0})
    with pytest.raises(InputRejected, match="^beyond_limits: left_shoulder_pan velocity 1e.06") as info:
        InputLimits.of(charmie).check({"theta7a": 0.0}, {"theta7a": 1e6}, 0.0, 0.0, m.hardware)
    assert info.value.reason == "beyond_limits"


@pytest.mark.parametrize("entries, text, problem", [
    (["theta8a"], None, r"entry 'theta8a': expected MODEL=HARDWARE"),
    (["theta8a=a", "theta8a=b"], None, "'theta8a' mapped twice"),
    (["theta8a=a", "theta9a=a"], None, "'theta8a' and 'theta9a' both map to 'a'"),
    (["theta8a=a"], "names:\n  theta8a: b\n", "names.theta8a: mapped in joint_name_map too"),
    ([], "scale:\n  act4: 0\n", r"scale.act4: 0, expected a finite number, not 0"),
    ([], "offset:\n  act4: .nan\n", "offset.act4: nan, expected a finite number"),
    ([], "renames: {}\n", "expected a mapping with the sections names, scale, offset"),
    ([], "names: [a, b]\n", "names: expected a mapping MODEL_NAME: HARDWARE_NAME"),
    ([], "names: {a: [\n", "not valid YAML"),
])
def test_joint_map_errors_name_the_entry(tmp_path, entries, text, problem):
    path = ""
    if text is not None:
        path = str(tmp_path / "map.yaml")
        (tmp_path / "map.yaml").write_text(text)
    with pytest.raises(JointMapError, match=problem):
        read_joint_map(entries, path)


def test_joint_map_against_the_model(charmie):
    names = charmie.input_names + charmie.coordinate_names
    with pytest.raises(JointMapError, match="'elbow' is not an input or coordinate"):
        JointMap({"elbow": "elbow_joint"}).check(names, "charmie.yaml")
    with pytest.raises(JointMapError, match="'theta9a' is also the model's own name"):
        JointMap({"theta8a": "theta9a"}).check(names, "charmie.yaml")
    JointMap({"theta8a": "theta9a", "theta9a": "theta8a"}).check(names, "charmie.yaml")  # a swap


def _plan(model, policy, publish_base=True, base_frame=""):
    evaluator = Evaluator(model)
    frames = evaluator.frames
    n_moving = sum(1 for j in model.joint_type if j != JointType.FIXED)
    return frame_plan(model, frames.parents, frames.children, n_moving,
                      evaluator.input_names, policy, publish_base, base_frame, "world", "r1/")


def test_frames_not_in_the_urdf_are_the_solved_bodies_and_the_auxiliary_segments(charmie):
    """CHARMIE's joint_states carry every coordinate but the indirectly actuated ones (their
    actuators' lengths instead): robot_state_publisher places every other body; the node
    publishes those bodies, the actuators, springs and balancer bars."""
    everything, beside_rsp = _plan(charmie, "all"), _plan(charmie, "not_in_urdf")
    assert _plan(charmie, "none").poses == () and everything.static and not beside_rsp.static
    solved = {charmie.body_names[i] for i, b in enumerate(charmie.bodies)
              if b.coordinate is not None and b.coordinate not in charmie.input_names}
    assert solved                                       # the lower and upper body's joints
    children = {c.removeprefix("r1/") for c in beside_rsp.children}
    segments = set(everything.children) - {everything.frame[n] for n in charmie.body_names}
    assert children == solved | {s.removeprefix("r1/") for s in segments}
    assert {"act4", "act5"} <= children
    assert beside_rsp.root == everything.root == "r1/world"


def test_the_base_transform_left_to_odometry(charmie):
    plan = _plan(charmie, "all", publish_base=False, base_frame="base_link")
    moved_by_base = {charmie.body_names[i] for i, b in enumerate(charmie.bodies)
                     if b.coordinate in ("d1", "d2", "theta3")}
    assert moved_by_base and not moved_by_base & {c.removeprefix("r1/") for c in plan.children}
    assert plan.root == "r1/base_link"
    assert "r1/world" not in plan.parents               # nothing hangs from the world now
    assert plan.parents.count("r1/base_link") >= 1      # the base body's children
    assert plan.frame["body_3"] == "r1/base_link"


def test_ros2_control_example_is_consistent(charmie):
    """config/ros2_control_example.yaml: the effort controller's joints are the hardware names
    (config/joint_map_example.yaml) of the dynamics node's feedforward_joints, in order; every
    dynamics parameter it sets is declared, with a valid value."""
    import yaml

    from charmie_dynamics.ros.dynamics_parts.dynamics_parameters import (PARAMETERS,
                                                                         check_parameters,
                                                                         with_defaults)
    config = Path(__file__).resolve().parent.parent / "config"
    example = yaml.safe_load((config / "ros2_control_example.yaml").read_text())
    joint_map = read_joint_map([], str(config / "joint_map_example.yaml"))
    joint_map.check(charmie.input_names + charmie.coordinate_names, "charmie.yaml")
    dynamics = example["/**/dynamics"]["ros__parameters"]
    assert set(dynamics) <= set(PARAMETERS), set(dynamics) - set(PARAMETERS)
    assert check_parameters(with_defaults(dynamics)) is None
    assert example["effort_controller"]["ros__parameters"]["joints"] == \
        joint_map.to_hardware(dynamics["feedforward_joints"])
    assert dynamics["feedforward_topic"] == "/effort_controller/commands"
    assert example["controller_manager"]["ros__parameters"]["effort_controller"]["type"] == \
        "effort_controllers/JointGroupEffortController"


def test_a_message_older_in_every_joint_brings_nothing_new(charmie):
    assembler = StateAssembler(charmie)
    assembler.update({"theta8a": 0.1, "act4": 0.4}, {}, 1.0, stamp=2_000)
    assert not assembler.anything_new(["theta8a", "act4"], 1_999)
    assert assembler.anything_new(["theta8a", "act4"], 2_000)         # the same instant again
    assert assembler.anything_new(["theta8a", "theta9a"], 1_000)      # theta9a never heard


@pytest.mark.parametrize("changes, problem", [
    ({"world_frame": ""}, "world_frame '': expected a frame name"),
    ({"frame_prefix": "/"}, "frame_prefix '/': expected no leading '/'"),
    ({"frame_prefix": "a//b/"}, "frame_prefix 'a//b/'"),
    ({"base_frame": "world"}, "base_frame 'world': the same as world_frame"),
])
def test_frame_parameters_tf2_would_refuse(changes, problem):
    from charmie_dynamics.ros.dynamics_parts.dynamics_parameters import (check_parameters,
                                                                         with_defaults)
    assert problem in (check_parameters(with_defaults(changes)) or "")
    assert check_parameters(with_defaults({"base_frame": "base_link", "frame_prefix": "r1/"})) \
        is None


@pytest.mark.parametrize("frames, problem", [
    (("world", "body_4"), "base_frame 'body_4' is the name of a body"),
    (("body_2", ""), "world_frame 'body_2' is the name of a body"),
    # body_3 is turned into base_link: its own name is base_link's fixed child (review)
    (("odom", "body_3"), "base_frame 'body_3' is the name of a body"),
    (("base_link", ""), "world_frame 'base_link' is also the base body's frame"),
])
def test_a_frame_name_of_another_body_refuses_the_model(charmie, frames, problem):
    """base_frame naming another body gave a transform whose parent was its child (attack)."""
    from charmie_dynamics.model import ModelError
    from charmie_dynamics.ros.common.model_updates import prepare_model
    with pytest.raises(ModelError, match=problem):
        prepare_model(charmie, "", "charmie.yaml", [""], [""], frames=frames)
    prepare_model(charmie, "", "charmie.yaml", [""], [""], frames=("odom", "base_link"))


def test_a_yaml_11_exponent_in_the_joint_map_says_how_to_write_it(tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text("scale:\n  act4: 1e-3\n")
    with pytest.raises(JointMapError, match=r"scale\.act4: got '1e-3', text to YAML 1\.1 .* "
                                            r"as 1\.0e\+17"):
        read_joint_map([], str(path))
