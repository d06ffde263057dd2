"""The dynamics node's one-call pipelines: an assembled input in, efforts, actuator forces,
wrenches and every TF pose out, into buffers built once per model (evaluator.py for an open
tree, loop_evaluator.py for a model with closed loops)."""
from .evaluator import Evaluation, Evaluator, NonFiniteLoads
from .loop_evaluator import (EffortsUnavailable, LoopEvaluator, LoopJumpError, MaxJumpError,
                             NonFiniteInput, assembled_evaluator, efforts_along, evaluator_for)

__all__ = ["Evaluation", "Evaluator", "NonFiniteLoads", "LoopEvaluator", "LoopJumpError",
           "MaxJumpError", "NonFiniteInput", "assembled_evaluator", "evaluator_for",
           "EffortsUnavailable", "efforts_along"]
