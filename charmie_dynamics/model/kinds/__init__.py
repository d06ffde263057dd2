"""The kinds of mechanism, one module each (kind.py says what a kind holds), registered in
:data:`MECHANISM_KINDS` in the order of their rows in the mechanism table
(``layout.MechKind``): what the loader, the overlay, packing, the forces' names and laws,
identification, analyze, the summary and datasets iterate."""
from __future__ import annotations

from typing import Any

from ..parameters import ModelParameters
from .balancer import BALANCER, Balancer
from .cable import CABLE, Cable
from .kind import MechanismKind
from .spring import SPRING, Spring
from .torsion_spring import TORSION_SPRING, TorsionSpring

MECHANISM_KINDS: tuple[MechanismKind, ...] = (SPRING, BALANCER, TORSION_SPRING, CABLE)


def items(model: ModelParameters, kind: MechanismKind) -> tuple[Any, ...]:
    """The model's mechanisms of ``kind``, in the model file's order."""
    return model.mechanisms.get(kind.section, ())


__all__ = ["MECHANISM_KINDS", "MechanismKind", "items", "Balancer", "Cable", "Spring",
           "TorsionSpring", "BALANCER", "CABLE", "SPRING", "TORSION_SPRING"]
