"""One half of a static balancing lever mechanism (seed 000 section 4.3, eqs. 22-27; its
forces eqs. 39-41): the model file's ``balancers``."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from ...layout import MechKind
from ..fields import read_point, read_spring_law, spring_law_fields
from ..parameters import ModelParameters, PointRef, SpringParams
from ..validation import FieldReader, show
from .kind import MechanismKind


@dataclass(frozen=True)
class Balancer:
    """One half of a static balancing lever mechanism (seed 000 section 4.3, eqs. 22-27).

    A lever of length ``lever_length`` pivots on the pivot body at ``pivot``; its free end is
    held by a vertical hanger bar of length ``hanger_length`` whose top is at the height of
    ``hanger`` (a point of the sliding body); a spring pulls the lever at distance
    ``spring_attach`` from the pivot towards ``spring_anchor`` (on the pivot body). The
    mechanism lies in the pivot body's xz-plane; ``side`` (+1/-1) is the x direction in
    which the lever points (eq. 24 is the -1 side).
    """

    name: str
    pivot: PointRef
    hanger: PointRef
    spring_anchor: PointRef
    lever_length: float
    hanger_length: float
    spring_attach: float
    side: int
    spring: SpringParams


class BalancerKind(MechanismKind):
    section, label, code = "balancers", "balancers", int(MechKind.BALANCER)
    output, unit = "tension", "N"

    def load(self, r: FieldReader, tree: ModelParameters, data: Any, k: int) -> Balancer:
        data, name, where = r.named_entry(data, f"balancers[{k}]", {
            "name", "pivot", "hanger", "lever_length", "hanger_length", "spring_attach", "side",
            "spring"})
        pivot = read_point(r, tree, r.get(data, "pivot", where), f"{where}.pivot")
        hanger = read_point(r, tree, r.get(data, "hanger", where), f"{where}.hanger")
        lever = r.length_value(r.get(data, "lever_length", where), f"{where}.lever_length",
                               positive=True)
        hang = r.length_value(r.get(data, "hanger_length", where), f"{where}.hanger_length",
                              positive=True)
        attach = r.length_value(r.get(data, "spring_attach", where), f"{where}.spring_attach",
                                positive=True)
        if attach > lever:
            raise r.fail(f"{where}.spring_attach",
                         f"got {show(data['spring_attach'])}, expected a distance <= "
                         f"lever_length {show(data['lever_length'])}")
        side = r.get(data, "side", where)
        if side not in (1, -1) or isinstance(side, bool):
            raise r.fail(f"{where}.side", f"got {show(side)}, expected +1 or -1")
        spring = r.mapping(r.get(data, "spring", where), f"{where}.spring")
        r.check_keys(spring, {"anchor", "stiffness", "free_length", "preload"}, f"{where}.spring")
        anchor = read_point(r, tree, r.get(spring, "anchor", f"{where}.spring"),
                            f"{where}.spring.anchor")
        if anchor.body != pivot.body:
            raise r.fail(f"{where}.spring.anchor", "expected a point of the pivot's body")
        if abs(anchor.local[1] - pivot.local[1]) > 1e-9:
            raise r.fail(f"{where}.spring.anchor",
                         f"y = {anchor.local[1]:g} m, expected the lever's plane "
                         f"y = {pivot.local[1]:g} m (the pivot's)")
        return Balancer(name=name, pivot=pivot, hanger=hanger, spring_anchor=anchor,
                        lever_length=lever, hanger_length=hang, spring_attach=attach,
                        side=int(side), spring=read_spring_law(r, spring, f"{where}.spring"))

    def row(self, item: Balancer, k: int, shares: Mapping[int, int]):
        return ([self.code, item.pivot.body, item.hanger.body, k, item.side, shares.get(k, -1)],
                item.spring, [item.pivot.local, item.hanger.local, item.spring_anchor.local,
                              [item.lever_length, item.hanger_length, item.spring_attach]])

    def law_name(self, item: Balancer) -> str:
        return f"{item.name}_spring"

    def law(self, item: Balancer) -> SpringParams:
        return item.spring

    def with_law(self, item: Balancer, law: SpringParams) -> Balancer:
        return replace(item, spring=law)

    def overlay_entry(self, item: Balancer, point: Callable[[PointRef], str],
                      link: Callable[[int], str]) -> dict:
        return {"name": item.name, "pivot": point(item.pivot), "hanger": point(item.hanger),
                "lever_length": item.lever_length, "hanger_length": item.hanger_length,
                "spring_attach": item.spring_attach, "side": item.side,
                "spring": {"anchor": point(item.spring_anchor),
                           **spring_law_fields(item.spring)}}

    def law_node(self, entry: Any, get: Callable[[Any, str], Any]) -> Any:
        return get(entry, "spring")


BALANCER = BalancerKind()
