"""A linear extension spring between two named points (seed 000 section 4.3, eq. 20; its law
eq. 35): the model file's ``springs``."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

from ...layout import MechKind
from ..fields import read_point, read_spring_law, spring_law_fields
from ..parameters import ModelParameters, PointRef, SpringParams
from ..validation import FieldReader, show
from .kind import MechanismKind


@dataclass(frozen=True)
class Spring:
    """A spring between two named points of main bodies (seed 000 section 4.3, eq. 20)."""

    name: str
    start: PointRef
    end: PointRef
    params: SpringParams


class SpringKind(MechanismKind):
    """Springs; a kind between two points with a spring's fields (a cable) derives from it
    with its own ``item_type``."""

    section, label, code = "springs", "springs", int(MechKind.SPRING)
    output, unit = "tension", "N"
    item_type: type = Spring

    def load(self, r: FieldReader, tree: ModelParameters, data: Any, k: int) -> Spring:
        data, name, where = r.named_entry(data, f"{self.section}[{k}]", {
            "name", "between", "stiffness", "free_length", "preload"})
        between = r.get(data, "between", where)
        if not isinstance(between, (list, tuple)) or len(between) != 2:
            raise r.fail(f"{where}.between",
                         f"got {show(between)}, expected [BODY.POINT, BODY.POINT]")
        start = read_point(r, tree, between[0], f"{where}.between[0]")
        end = read_point(r, tree, between[1], f"{where}.between[1]")
        if start.body == end.body and (start.local == end.local).all():
            raise r.fail(f"{where}.between", f"got {show(between)}: one point twice, expected "
                                             "two points (a zero length has no direction)")
        return self.item_type(name=name, start=start, end=end,
                              params=read_spring_law(r, data, where))

    def row(self, item: Spring, k: int, shares: Mapping[int, int]):
        return ([self.code, item.start.body, item.end.body, k, 0, -1], item.params,
                [item.start.local, item.end.local])

    def with_law(self, item: Spring, law: SpringParams) -> Spring:
        return replace(item, params=law)

    def overlay_entry(self, item: Spring, point: Callable[[PointRef], str],
                      link: Callable[[int], str]) -> dict:
        return {"name": item.name, "between": [point(item.start), point(item.end)],
                **spring_law_fields(item.params)}


SPRING = SpringKind()
