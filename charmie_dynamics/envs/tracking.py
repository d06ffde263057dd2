"""Trajectory tracking on the model as Gymnasium environments (docs/learning.md).

:class:`TrackingEnv` is one robot, :class:`VectorTrackingEnv` N robots stepped in one batch
(envs/plants.py); both run the same :class:`Tracking` core, the single one with N = 1, so N
single environments and one vector environment of N give the same numbers.

Every control period T (``control_dt``, 10 ms) the action holds each input's effort
(``model.input_names``: CHARMIE's joint torques, its act4 and act5 forces; a model with loops:
the efforts at its independent coordinates) for ``control_dt / dt`` integration steps.

* Action: a in [-1, 1]^n (float32), the effort u = a * limit (the model's effort limits, or
  ``effort_limit=`` where it has none); with ``residual=True`` u = u_ff + a * limit *
  ``residual_scale``, u_ff the model's own feedforward at the reference (inverse dynamics
  plus the friction the simulation applies: plants.py). u is clipped to the limits.
* Observation (float32, 4 n): x, x', x_ref, x'_ref: the inputs' positions and rates and the
  reference's at the end of the period (SI units: m, rad, m/s, rad/s).
* Reward, after each period: r = -mean(((x - x_ref) / s)^2) - w_effort mean((u / limit)^2),
  s the error scale of the input's kind (``error_scale``: 0.1 rad, 0.01 m, an actuator's
  0.01 m), w_effort ``effort_weight`` (0.01).
* Terminated: the simulation cannot go on (an actuator driven past its stroke, loops that no
  longer close, a state not finite), a rate beyond the model's velocity limit by more than
  ``velocity_margin`` (0.1: 10 %), or a tracking error beyond ``max_error`` error scales (20);
  ``math.inf`` turns either check off. Truncated: the reference's
  end (a motion's duration; ``episode_steps`` periods for ``reference="random"``).
* Reset: at rest at the reference's start (``random``: a start and a target drawn in the
  middle ``target_span`` of each input's range, seeded by ``reset(seed=...)``).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from ..kinematics.limits import VELOCITY_TOLERANCE, InputLimits
from ..model.model import Model
from ..resources import bundled_model
from .plants import STEP_ERRORS, LoopPlant, TreePlant, finite_limits
from .references import RANDOM, random_ramps, shared_motion

#: The error scales of the reward, by input kind (rad, m, m)
ERROR_SCALE = {"angular": 0.1, "linear": 0.01, "actuator": 0.01}
#: Most draws of a random start before reset gives up (a start outside the stops is drawn
#: again)
START_DRAWS = 100
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: Bounds of the options: control periods in an episode (200,000: 2000 s at 10 ms), integration
#: steps in a period, robots in a vector environment
MAX_STEPS, MAX_SUBSTEPS, MAX_ROBOTS = 200_000, 10_000, 1_000_000
#: The reward of a robot too far to score (beyond float range), when max_error is off
WORST_REWARD = -1e6


def _check_options(count, control_dt, dt, residual_scale, effort_weight, error_scale,
                   max_error, velocity_margin, episode_steps) -> None:
    """ValueError naming the first option out of its range."""
    def number(value) -> float:
        return float(value) if isinstance(value, (int, float, np.number)) \
            and not isinstance(value, bool) else math.nan
    checks = [
        ("num_envs", count, isinstance(count, (int, np.integer)) and 1 <= count <= MAX_ROBOTS,
         f"an integer from 1 to {MAX_ROBOTS}"),
        ("control_dt", control_dt, 0.0 < number(control_dt) <= 1.0, "a period in (0, 1] s"),
        ("dt", dt, number(control_dt) / MAX_SUBSTEPS <= number(dt) <= number(control_dt),
         f"an integration step from control_dt / {MAX_SUBSTEPS} to control_dt"),
        ("residual_scale", residual_scale, 0.0 <= number(residual_scale) <= 1.0, "0 to 1"),
        ("effort_weight", effort_weight, 0.0 <= number(effort_weight) <= 1e6, "0 to 1e6"),
        ("max_error", max_error, number(max_error) > 0.0, "a positive number (inf: off)"),
        ("velocity_margin", velocity_margin, number(velocity_margin) >= 0.0,
         "a fraction >= 0 (inf: off)"),
        ("episode_steps", episode_steps, isinstance(episode_steps, (int, np.integer))
         and 1 <= episode_steps <= MAX_STEPS, f"an integer from 1 to {MAX_STEPS}"),
    ]
    for name, value, good, expected in checks:
        if not good:
            raise ValueError(f"{name}: got {value!r}, expected {expected}")
    for kind, value in (error_scale or {}).items():
        if kind not in ERROR_SCALE or not 0.0 < number(value) < math.inf:
            raise ValueError(f"error_scale: got {kind!r}: {value!r}, expected positive finite "
                             f"scales of {', '.join(ERROR_SCALE)}")


def load(model: Model | str | None) -> Model:
    """A model, or the model file at a path (None: the bundled CHARMIE)."""
    if isinstance(model, Model):
        return model
    from ..model import load_model
    return load_model(str(bundled_model() if model is None else model))


class Tracking:
    """N robots following references (module docstring): the state machine both
    environments share. ``step`` takes actions (N, n) and gives observations, rewards,
    terminated and truncated (N,) arrays."""

    def __init__(self, model: Model | str | None, count: int, *, reference: str = "validation",
                 control_dt: float = 0.01, dt: float = 1e-3, integrator: str = "euler",
                 residual: bool = False, residual_scale: float = 0.2,
                 effort_limit: Optional[Sequence[float] | float] = None,
                 effort_weight: float = 0.01, error_scale: Optional[dict[str, float]] = None,
                 max_error: float = 20.0, velocity_margin: float = VELOCITY_TOLERANCE,
                 episode_steps: int = 200,
                 target_span: float = 0.5) -> None:
        self.model = m = load(model)
        _check_options(count, control_dt, dt, residual_scale, effort_weight, error_scale,
                       max_error, velocity_margin, episode_steps)
        substeps = int(round(control_dt / dt))
        if abs(substeps * dt - control_dt) > 1e-9 * control_dt:
            raise ValueError(f"control_dt: got {control_dt!r}, expected a whole number of "
                             f"dt = {dt!r}")
        self.count, self.period = count, control_dt
        self.plant = (TreePlant(m, count, dt, substeps, integrator) if m.loops is None
                      else LoopPlant(m, count, dt, substeps))
        names = self.plant.names
        self.names = names
        self.limit = finite_limits(self.plant.effort_limit, names, effort_limit)
        scales = {**ERROR_SCALE, **(error_scale or {})}
        self.scale = np.array([scales[k] for k in self.plant.kinds])
        velocity = InputLimits.of(m).velocity
        self.velocity_limit = np.array([velocity.get(n, math.inf) for n in names]) \
            * (1.0 + velocity_margin)
        self.residual, self.residual_scale = bool(residual), float(residual_scale)
        self.effort_weight, self.max_error = float(effort_weight), float(max_error)
        if reference == RANDOM:
            self.reference = random_ramps(m, count, int(episode_steps), control_dt, target_span)
            self.rigid_table = None
        else:
            self.reference = shared_motion(m, reference, control_dt)
            # the shared motion's inverse dynamics, once (a residual policy adds to it)
            self.rigid_table = self.plant.rigid_body(
                self.reference.x, self.reference.xd, self.reference.xdd) if residual else None
        if not 1 <= self.reference.steps <= MAX_STEPS:
            raise ValueError(f"reference {reference!r}: {self.reference.steps} control periods "
                             f"of {control_dt} s, expected 1 to {MAX_STEPS}")
        self.k = np.zeros(count, dtype=np.int64)
        self.started = False                          # no step before the first reset
        self.effort = np.zeros((count, len(names)))
        n = len(names)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (4 * n,), np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, (n,), np.float32)

    def reset_rows(self, rows: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Robots ``rows`` back at their reference's start, at rest (``rngs``: each one's
        generator, for a random reference)."""
        self.k[rows] = 0
        reference = self.reference
        for row, rng in zip(rows, rngs):
            for _ in range(START_DRAWS):
                reference.draw(row, rng)
                try:        # the start placed last: the robot starts there
                    for point in reference.ends(row):
                        self.plant.place(np.array([row]), point[None])
                    break
                except (ValueError, *STEP_ERRORS):
                    if not reference.drawn:
                        raise
            else:
                raise RuntimeError(f"reset: no start within the stops of {self.model.name} in "
                                   f"{START_DRAWS} draws; expected a smaller target_span")
        self.started = True

    def observe(self) -> np.ndarray:
        x, xd = self.plant.observe()
        x_ref, xd_ref, _ = self.reference.at(self.k)
        return self._observation(x, xd, x_ref, xd_ref)

    def step(self, action: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """One control period of every robot: observation, reward, terminated, truncated and
        failed (the simulation could not go on) arrays."""
        if not self.started:
            raise gym.error.ResetNeeded("step: called before reset(), expected reset() first "
                                        "(it places the robots at their reference's start)")
        a = np.asarray(action)
        n = len(self.names)
        if a.shape not in ((self.count, n), (n,) if self.count == 1 else None) or \
                a.dtype.kind not in "fiu":
            raise ValueError(f"action: got shape {a.shape} of {a.dtype}, expected "
                             f"({self.count}, {n}) numbers (one effort per input of "
                             f"{self.model.name}, per robot)")
        a = a.astype(float).reshape(self.count, n)
        if not np.all(np.isfinite(a)):
            robot, k = np.argwhere(~np.isfinite(a))[0]
            raise ValueError(f"action: robot {robot}, input {self.names[k]}: got {a[robot, k]}, "
                             "expected a finite number in [-1, 1]")
        a = np.clip(a, -1.0, 1.0)
        u = a * self.limit
        if self.residual:
            u = self.residual_scale * u + self.feedforward()
        np.clip(u, -self.limit, self.limit, out=self.effort)
        failed = self.plant.advance(self.effort)
        self.k = np.minimum(self.k + 1, self.reference.steps)
        x, xd = self.plant.observe()
        x_ref, xd_ref, _ = self.reference.at(self.k)
        reward, lost = self.score(x, xd, x_ref, self.effort)
        terminated = failed | lost
        truncated = (self.k >= self.reference.steps) & ~terminated
        return self._observation(x, xd, x_ref, xd_ref), reward, terminated, truncated, failed

    @staticmethod
    def _observation(*parts: np.ndarray) -> np.ndarray:
        """The parts side by side as float32; a failed robot's huge last state as the largest
        float32, not inf."""
        joined = np.concatenate(parts, axis=1)
        return np.clip(joined, -FLOAT32_MAX, FLOAT32_MAX).astype(np.float32)

    def score(self, x: np.ndarray, xd: np.ndarray, x_ref: np.ndarray, effort: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """The reward and whether the robot is lost (the module docstring's), (N,) each, of
        the inputs x, x' after a period under ``effort`` against the reference x_ref."""
        error = (x - x_ref) / self.scale
        with np.errstate(over="ignore"):
            reward = -np.mean(error ** 2, axis=1) \
                - self.effort_weight * np.mean((effort / self.limit) ** 2, axis=1)
        lost = ~(np.abs(error) <= self.max_error).all(axis=1) \
            | ~(np.abs(xd) <= self.velocity_limit).all(axis=1)
        # a robot lost at a state too far to score gets the worst finite reward
        return np.where(np.isfinite(reward), reward,
                        max(-self.max_error ** 2, WORST_REWARD)), lost

    def feedforward(self) -> np.ndarray:
        """The model's efforts (N, n) at each robot's reference now (plants.py)."""
        x_ref, xd_ref, xdd_ref = self.reference.at(self.k)
        rigid = self.plant.rigid_body(x_ref, xd_ref, xdd_ref) if self.rigid_table is None \
            else self.rigid_table[self.k]
        return rigid + self.plant.friction(xd_ref)


class TrackingEnv(gym.Env):
    """One robot tracking a reference (module docstring); keyword arguments as
    :class:`Tracking`'s, ``model`` a Model or a model file (None: the bundled CHARMIE)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 25}

    def __init__(self, model: Model | str | None = None, render_mode: Optional[str] = None,
                 **options: Any) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode: got {render_mode!r}, expected None or 'rgb_array'")
        self.task = Tracking(model, 1, **options)
        self.observation_space = self.task.observation_space
        self.action_space = self.task.action_space
        self.render_mode = render_mode

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None
              ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.task.reset_rows(np.array([0]), [self.np_random])
        return self.task.observe()[0], {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        observation, reward, terminated, truncated, failed = self.task.step(action)
        info = {"effort": self.task.effort[0].copy(), "failed": bool(failed[0])}
        return observation[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), info

    def render(self) -> Optional[np.ndarray]:
        if self.render_mode != "rgb_array":
            return None
        from .render import tracking_frame
        return tracking_frame(self.task, 0)


class VectorTrackingEnv(VectorEnv):
    """``num_envs`` robots tracking references in one batch (module docstring); an episode that
    ends is reset on the next ``step`` (Gymnasium's next-step autoreset), whose action for it
    is ignored. ``reset(seed=s)`` seeds robot i with s + i, as N single environments reset
    with those seeds."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, num_envs: int = 1, model: Model | str | None = None,
                 render_mode: Optional[str] = None, **options: Any) -> None:
        if render_mode is not None:
            raise ValueError(f"render_mode: got {render_mode!r}, expected None (render a "
                             "single TrackingEnv)")
        self.task = Tracking(model, num_envs, **options)
        self.num_envs = int(num_envs)
        self.single_observation_space = self.task.observation_space
        self.single_action_space = self.task.action_space
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space,
                                                         self.num_envs)
        self.render_mode = render_mode
        self._rngs = [np.random.default_rng() for _ in range(self.num_envs)]
        self._pending = np.zeros(self.num_envs, dtype=bool)

    def reset(self, *, seed: Optional[int | Sequence[int]] = None,
              options: Optional[dict] = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            seeds = [int(seed) + i for i in range(self.num_envs)] \
                if isinstance(seed, (int, np.integer)) else list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: got {len(seeds)} seeds, expected one integer or "
                                 f"{self.num_envs} (one per robot)")
            self._rngs = [gym.utils.seeding.np_random(s)[0] for s in seeds]
        self.task.reset_rows(np.arange(self.num_envs), self._rngs)
        self._pending[:] = False
        return self.task.observe(), {}

    def step(self, actions: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        pending = np.flatnonzero(self._pending)
        if pending.size:                 # their action is ignored: nothing pushes them on
            actions = np.array(actions, dtype=float)
            actions.reshape(self.num_envs, -1)[pending] = 0.0
        observation, reward, terminated, truncated, failed = self.task.step(actions)
        if pending.size:
            # the robots whose episode ended last step start again; this step is not theirs
            self.task.reset_rows(pending, [self._rngs[r] for r in pending])
            observation[pending] = self.task.observe()[pending]
            reward[pending], terminated[pending], truncated[pending] = 0.0, False, False
        self._pending = terminated | truncated
        return observation, reward, terminated, truncated, {"failed": failed}
