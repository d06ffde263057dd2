"""Gymnasium environments on the model (the ``learn`` extra: ``pip install
charmie_dynamics[learn]``; docs/learning.md). Importing this module registers the ids, so a
training script needs only ``gymnasium.make("charmie_dynamics.envs:CharmieTracking-v0")``:

* ``CharmieTracking-v0``: the bundled CHARMIE following the validation motion (seed 000
  section 6) from its inputs' efforts;
* ``CharmieTrackingResidual-v0``: the same, the action a residual on the model's feedforward;
* ``CharmieReach-v0``: CHARMIE from a random start to a random target in 2 s;
* ``FiveBarTracking-v0``: the five-bar of seed 002 (closed loop) following eq. 35's motion.

``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")`` gives the
batched :class:`~.tracking.VectorTrackingEnv` (one batch, not N processes).
"""
from __future__ import annotations

try:
    import gymnasium
except ImportError as exc:          # the learn extra is not installed
    raise ImportError("charmie_dynamics.envs needs gymnasium: pip install "
                      "'charmie_dynamics[learn]' (or pip install gymnasium)") from exc

from ..resources import share_directory
from .tracking import Tracking, TrackingEnv, VectorTrackingEnv

ENTRY, VECTOR_ENTRY = f"{__name__}.tracking:TrackingEnv", f"{__name__}.tracking:VectorTrackingEnv"
#: id -> keyword arguments of the environment
IDS = {
    "CharmieTracking-v0": {},
    "CharmieTrackingResidual-v0": {"residual": True},
    "CharmieReach-v0": {"reference": "random", "episode_steps": 200},
    "FiveBarTracking-v0": {"model": "five_bar", "reference": "seed002-eq35",
                           "effort_limit": 20.0},
}


def _kwargs(options: dict) -> dict:
    if options.get("model") == "five_bar":       # a bundled example, found where installed
        return {**options, "model": str(share_directory() / "config" / "examples"
                                        / "five_bar.yaml")}
    return dict(options)


for _id, _options in IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(_id, entry_point=ENTRY, vector_entry_point=VECTOR_ENTRY,
                           kwargs=_kwargs(_options))

__all__ = ["IDS", "Tracking", "TrackingEnv", "VectorTrackingEnv"]
