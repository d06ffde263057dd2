"""The base of the algorithms' ``Data`` objects (Pinocchio's Model/Data split): reusable
result and work buffers built for one model and one shape of leading sample axes, passed as
``data=`` to ``forward_kinematics``, ``body_motion``, ``auxiliary_segments``,
``inverse_dynamics``, ``mass_matrix``, ``bias_forces``, ``forward_dynamics``, ``step`` and
``simulate``. A call with data writes its results into the data's buffers and returns views
of them, overwritten by the next call. Data whose buffers have a size of their own besides
the sample shape (a simulation's number of steps) takes it as a keyword (``sizes``).
"""
from __future__ import annotations

import math
from typing import Optional, TypeVar

from .model import Model

D = TypeVar("D", bound="AlgorithmData")


class AlgorithmData:
    """The model and sample shape a Data object was built for, and the check of both."""

    def __init__(self, model: Model, lead: tuple[int, ...] = ()) -> None:
        self.model = model
        self.lead = tuple(int(k) for k in lead)
        self.samples = math.prod(self.lead)

    @classmethod
    def reuse(cls: type[D], data: Optional[D], model: Model, lead: tuple[int, ...],
              **sizes: int) -> D:
        """``data`` once checked (:meth:`check`), or new data of this class when None: the
        start of every algorithm that takes ``data=``. TypeError for data of another
        algorithm, whose buffers have other shapes."""
        if data is None:
            return cls(model, lead, **sizes)
        if not isinstance(data, cls):
            raise TypeError(f"data: got {type(data).__name__}, expected {cls.__name__}")
        data.check(model, lead, **sizes)
        return data

    def sizes(self) -> dict[str, int]:
        """The sizes of its buffers besides the sample shape: none here."""
        return {}

    def check(self, model: Model, lead: tuple[int, ...], **sizes: int) -> None:
        """ValueError unless this data is for ``model``, the sample shape ``lead`` and the
        ``sizes``: the kernels write its buffers without bounds checks."""
        if self.model is not model or self.lead != tuple(lead) or self.sizes() != sizes:
            others = "".join(f" ({k} {v}, got {sizes.get(k)})" for k, v in self.sizes().items())
            raise ValueError(f"{type(self).__name__} is for {self.model.name} with sample "
                             f"shape {self.lead}, got {model.name} with {tuple(lead)}{others}")
