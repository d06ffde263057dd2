"""What a kind of mechanism is, Python side (issue 39 item 1): one module per kind holds its
dataclass and everything the package does with it by kind, behind this interface; the
registry (``kinds.MECHANISM_KINDS``) is what the loader, the overlay, packing, the forces'
names and laws, identification, analyze, the summary and datasets iterate.

Kernel side, a kind is its code (``layout.MechKind``), its ``mech_vec`` slots and one law in
``mechanisms/forces.py`` that turns a row of the mechanism table into forces on its two
bodies; every kind's tension follows a linear law (:class:`SpringParams`, seed 000 eq. 35)
in a length or an angle.
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar, Mapping, Sequence

import numpy as np

from ..parameters import ModelParameters, PointRef, SpringParams
from ..validation import FieldReader


def linear_law_energy(law: SpringParams, argument: np.ndarray) -> np.ndarray:
    """The potential energy of the linear law ``k (x - x0) + t0`` at ``x``:
    1/2 k (x - x0)^2 + t0 (x - x0), whose derivative is the law."""
    s = argument - law.free_length
    return 0.5 * law.stiffness * s * s + law.preload * s


class MechanismKind:
    """One kind of mechanism (a subclass per kind module, one instance in the registry)."""

    #: the model file's, the overlay's and ``Model.mechanisms``' key
    section: ClassVar[str]
    #: its name in messages and summaries, plural ("torsion springs")
    label: ClassVar[str]
    #: its rows' kind in the mechanism table (``layout.MechKind``)
    code: ClassVar[int]
    #: what its law gives, as analyze's column suffix ("tension", "torque"), and the unit
    output: ClassVar[str]
    unit: ClassVar[str]

    def load(self, r: FieldReader, tree: ModelParameters, data: Any, k: int) -> Any:
        """Entry ``k`` of the model file's section, checked against the tree (SI)."""
        raise NotImplementedError

    def row(self, item: Any, k: int, shares: Mapping[int, int]
            ) -> tuple[list[int], SpringParams, Sequence[Sequence[float]]]:
        """Its mechanism-table row: the ``layout.MechInt`` columns, the law and its own
        ``mech_vec`` slots (``shares``: balancer -> the actuator whose couple it shares)."""
        raise NotImplementedError

    def law_name(self, item: Any) -> str:
        """The name of its tension (``forces.spring_names``)."""
        return item.name

    def law(self, item: Any) -> SpringParams:
        return item.params

    def with_law(self, item: Any, law: SpringParams) -> Any:
        """The same mechanism with another law (identification's write-back)."""
        raise NotImplementedError

    def overlay_entry(self, item: Any, point: Callable[[PointRef], str],
                      link: Callable[[int], str]) -> dict:
        """Its overlay entry (SI), the points and bodies named by ``point`` and ``link``."""
        raise NotImplementedError

    def law_node(self, entry: Any, get: Callable[[Any, str], Any]) -> Any:
        """The node of its model-file entry that holds the law's fields (``get(node, key)``:
        a mapping's value)."""
        return entry

    def energy(self, law: SpringParams, argument: np.ndarray) -> np.ndarray:
        """Its potential energy (J) at its law's argument (a length or an angle), whose
        derivative is the tension or torque the kernel's law applies."""
        return linear_law_energy(law, argument)

    def stiffness_scale(self, length: float, angle: float) -> float:
        """The model file's unit of its stiffness per SI unit (``length``: metres per file
        unit, ``angle``: radians per file unit)."""
        return length
