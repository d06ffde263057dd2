"""Arguments shared by the commands (``fk``, ``id``, ``analyze``): payloads, the points loads
act on, and whether positions are checked against the joint limits."""
from __future__ import annotations

import argparse
from typing import Iterable

from ..documents import bounded
from ..dynamics import ExternalWrench, Payload
from ..errors import InputError
from ..kinematics.limits import PLAUSIBLE, POSITION_TOLERANCE
from ..model.model import Model
from ..model.validation import MAX_MASS_KG


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
        check_point(model, load.point, load.point)


def check_point(model: Model, point: str, what: str) -> None:
    """Raise :class:`InputError` ``"<what>: <why>"`` when the model lacks ``point``
    (BODY.POINT)."""
    try:
        model.point(point)
    except KeyError as exc:
        raise InputError(f"{what}: {exc.args[0]}") from None


def add_position_limits_argument(parser: argparse.ArgumentParser) -> None:
    """``--check-position-limits``: off by default, as in the node's sim configuration,
    because the papers' validation motion leaves CHARMIE's estimated joint limits."""
    parser.add_argument("--check-position-limits", action="store_true",
                        help="also refuse positions beyond the model's joint limits (by more "
                             f"than {POSITION_TOLERANCE:g} rad or m); without it positions are "
                             f"only held to |value| <= {PLAUSIBLE:g}")


def add_overwrite_argument(parser: argparse.ArgumentParser) -> None:
    """``--overwrite``: without it, a run whose outputs would replace files already in
    ``--out`` (the user's, or an earlier run's) writes nothing and says which."""
    parser.add_argument("--overwrite", action="store_true",
                        help="replace files of the same names already in --out (without it "
                             "such a run writes nothing and names them)")
