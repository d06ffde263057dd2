"""Closed loops of any model, solved numerically (seed 003): the cut joints'
constraints (constraints.py) and their embedding (embedding.py). CHARMIE's two actuator
loops keep their closed forms (kinematics/indirect.py, mechanisms/loops.py) by default."""
from .constraints import ConstraintRows, ConstraintValues, evaluate
from .embedding import ClosedChain, GroupInfo, LoopAssemblyError, LoopSingularityError, SolveReport

__all__ = ["ClosedChain", "ConstraintRows", "ConstraintValues", "GroupInfo",
           "LoopAssemblyError", "LoopSingularityError", "SolveReport", "evaluate"]
