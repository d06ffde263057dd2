"""What the dynamics node evaluates with for one installed model: built whole from a prepared
model and the node's parameters, then swapped in with one assignment (``DynamicsNode.slot``),
so that the threads that read it (monitoring, diagnostics) never see half of one model and
half of another. Nothing in it changes while it is installed, but the assembler's stored
measurements, the compiled checks' buffers and the steady path's names blocks, which belong
to this model's slots."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ...evaluators.evaluator import Evaluator
from ...model.model import JointType, Model
from ..common.inputs import CompiledChecks, InputLimits, JointStateParser, StateAssembler
from ..common.joint_map import JointMap
from ..common.model_updates import PreparedModel
from ..common.outputs import FeedforwardMap, FramePlan, frame_plan
from ..common.parameter_types import DynamicsParameters
from .cdr import Float64ArrayWriter, JointStateWriter
from .learned_source import LearnedSource
from .steady_path import SteadyPath


@dataclass(frozen=True, eq=False)
class ModelSlot:
    """One installed model and what the node derives from it (``build_slot``)."""

    prepared: PreparedModel
    evaluator: Evaluator
    inputs: tuple[str, ...]              # a model with loops: the independent ones
    feedforward: FeedforwardMap
    learned: Optional[LearnedSource]     # feedforward_source learned, the network accepted
    assembler: StateAssembler
    solved: tuple[str, ...]              # coordinates published on joint_states, model names
    solved_names: frozenset[str]         # the same, the robot's names
    limits: InputLimits
    compiled_checks: CompiledChecks
    joint_state_parser: JointStateParser
    actuator_state_parser: JointStateParser
    plan: FramePlan
    feedforward_values: Float64ArrayWriter   # the feedforward's bytes, refilled each time
    feedforward_state: JointStateWriter      # its stamped, named copy
    steady: Optional[SteadyPath]             # None: a model with loops (the reference only)

    @property
    def model(self) -> Model:
        return self.prepared.model


def slot_notes(model: Model, p: DynamicsParameters) -> list[str]:
    """What the node says at WARN where parameters take no effect on ``model``."""
    notes = []
    if model.base is None and (p.base_frame or not p.publish_base_transform):
        notes.append(f"base_frame and publish_base_transform take no effect: the model "
                     f"{model.name!r} has no base: section (its bodies are published from "
                     "world_frame)")
    if p.odometry_topic and model.base is None:
        notes.append(f"odometry_topic {p.odometry_topic!r} is set but the model "
                     f"{model.name!r} has no base: section; the odometry is ignored")
    return notes


def build_slot(prepared: PreparedModel, p: DynamicsParameters, joint_map: JointMap) -> ModelSlot:
    """The slot of ``prepared`` under the node's parameters and joint map, without a learned
    source (the node checks the network against the slot, and says whether it takes it)."""
    model, evaluator = prepared.model, prepared.evaluator
    inputs = tuple(evaluator.input_names)
    base = tuple(c for c in model.base.coordinates if c in inputs) \
        if p.odometry_topic and model.base is not None else ()
    assembler = StateAssembler(model, base, inputs, tuple(
        n for n in model.input_names if n not in inputs), shown=joint_map.hardware)
    solved = tuple(c for c in model.coordinate_names if c not in inputs) \
        if p.publish_solved_joint_states else ()
    limits = InputLimits.of(model)
    frames = evaluator.frames
    hardware = joint_map.to_hardware
    feedforward = FeedforwardMap(model, inputs, prepared.joints,
                                 joint_map.effort_out(prepared.joints))
    compiled_checks = CompiledChecks(assembler, limits)
    return ModelSlot(
        prepared=prepared, evaluator=evaluator, inputs=inputs,
        feedforward=feedforward,
        learned=None, assembler=assembler, solved=solved,
        solved_names=frozenset(hardware(solved)), limits=limits,
        compiled_checks=compiled_checks,
        joint_state_parser=JointStateParser(joint_map, assembler.accepted_names(),
                                            assembler.required_names(), p.joint_state_policy),
        actuator_state_parser=JointStateParser(joint_map, model.actuator_names, (),
                                               p.joint_state_policy),
        # the solved coordinates on joint_states: robot_state_publisher places their bodies
        plan=frame_plan(model, frames.parents, frames.children,
                        sum(1 for j in model.joint_type if j != JointType.FIXED),
                        model.coordinate_names if solved else inputs, p.publish_tf,
                        p.publish_base_transform, p.base_frame, p.world_frame, p.frame_prefix,
                        joint_map.links),
        # names (the hardware's) and frames set once, values refilled by every evaluation
        feedforward_values=Float64ArrayWriter(len(prepared.joints)),
        feedforward_state=JointStateWriter(hardware(prepared.joints), ("effort",)),
        steady=SteadyPath(compiled_checks, evaluator, feedforward)
        if isinstance(evaluator, Evaluator) else None)
