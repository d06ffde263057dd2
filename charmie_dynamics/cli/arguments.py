"""Arguments shared by the commands (``id``, ``analyze``): payloads and the points loads act on."""
from __future__ import annotations

from typing import Iterable

from ..documents import bounded
from ..dynamics import ExternalWrench, Payload
from ..errors import InputError
from ..model.loader import MAX_MASS_KG
from ..model.model import Model


def parse_payload(text: str) -> Payload:
    """``BODY.POINT:MASS`` (kg)."""
    point, sep, mass = text.rpartition(":")
    try:
        value = float(mass)
    except ValueError:
        value = float("nan")
    if not sep or not 0 <= value <= MAX_MASS_KG:       # NaN fails too
        raise InputError(f"--payload {bounded(repr(text), 80)}: expected BODY.POINT:MASS with "
                         f"0 <= MASS <= {MAX_MASS_KG:g} kg")
    return Payload(point, value)


def check_points(model: Model, loads: Iterable[Payload | ExternalWrench]) -> None:
    """Raise :class:`InputError` naming the first load whose point the model lacks."""
    for load in loads:
        try:
            model.point(load.point)
        except KeyError as exc:
            raise InputError(f"{load.point}: {exc.args[0]}") from None
