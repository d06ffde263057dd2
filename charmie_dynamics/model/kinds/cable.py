"""A cable between two named points: the model file's ``cables`` (issue 39's example of a
new kind). It pulls like a spring while taut and not at all while slack,

    T = max(0, k (L - L0) + F0)        (N; k, L0, F0: the spring's law of seed 000 eq. 35),

so its energy is 1/2 k (L - L1)^2 beyond L1 = L0 - F0 / k, where it turns taut, and 0
before (F0 (L - L0) for k = 0 and F0 > 0: a constant pull). Its entry has a spring's fields
(``between``, ``stiffness``, ``free_length``, ``preload``); its kernel law is the spring's,
clamped at zero (``mechanisms/forces.py``). Identification takes it as taut (its law is
linear only there): identify from motion that keeps it taut. It is not drawn among the
auxiliary segments.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...layout import MechKind
from ..parameters import SpringParams
from .spring import Spring, SpringKind


@dataclass(frozen=True)
class Cable(Spring):
    """A cable between two named points of main bodies (module docstring)."""


class CableKind(SpringKind):
    section, label, code = "cables", "cables", int(MechKind.CABLE)
    item_type = Cable

    def energy(self, law: SpringParams, argument: np.ndarray) -> np.ndarray:
        s = argument - law.free_length
        if law.stiffness == 0.0:
            return max(law.preload, 0.0) * s
        taut = s + law.preload / law.stiffness        # L - L1
        return np.where(taut > 0.0, 0.5 * law.stiffness * taut * taut, 0.0)


CABLE = CableKind()
