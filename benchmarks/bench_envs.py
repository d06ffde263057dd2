"""Robot-steps per second of the Gymnasium environments (issue 38 item 2), in one process:
CHARMIE's single environment, N of them stepped in a Python loop (Gymnasium's SyncVectorEnv),
the batched VectorTrackingEnv of N, and Gymnasium's MuJoCo ``Humanoid-v5`` (a tree of similar
size, 17 actuated joints; needs ``pip install mujoco``) single and N in a SyncVectorEnv.

    .venv/bin/python benchmarks/bench_envs.py [--envs 256] [--loop-envs 16] [--steps 40]
                                               [--repeats 5] [--id CharmieTracking-v0]
                                               [--action-scale 1] [--out FILE.json]

Each case steps with uniform random actions (seeded) and the environments' own resets (an
episode that ends starts again), one thread. Prints the median robot-steps per second over
``--repeats`` rounds (the cases take turns in each round), the simulated seconds per wall
second (a CHARMIE step is 10 ms of motion, a humanoid step 15 ms: 5 x 3 ms) and the ratios to
the humanoid's. CHARMIE's step is ``control_dt / dt`` integration steps (10 semi-implicit
Euler steps of 1 ms by default); the humanoid's, 5 MuJoCo steps of 3 ms.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Callable

import gymnasium as gym

import charmie_dynamics.envs  # noqa: F401 - registers the ids
from common import write_result


def stepper(env, vector: bool, seed: int, scale: float) -> Callable[[int], int]:
    """A function stepping ``env`` n times with random actions (``scale`` times a uniform
    sample of the action space); returns robot-steps."""
    space = env.action_space
    space.seed(seed)
    env.reset(seed=seed)
    count = env.num_envs if vector else 1

    def run(n: int) -> int:
        for _ in range(n):
            if vector:
                env.step(scale * space.sample())
            else:
                _, _, terminated, truncated, _ = env.step(scale * space.sample())
                if terminated or truncated:
                    env.reset()
        return n * count
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=256, help="robots of the batched env")
    parser.add_argument("--loop-envs", type=int, default=16,
                        help="robots of the SyncVectorEnv cases (their per-robot cost does not "
                             "depend on N)")
    parser.add_argument("--steps", type=int, default=40, help="steps per case and round")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--id", default="CharmieTracking-v0", help="this package's env id")
    parser.add_argument("--action-scale", type=float, default=1.0,
                        help="actions are this fraction of a uniform sample (1: the whole "
                             "action space, where a robot is lost within a step or two)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    def single(env_id: str):
        return gym.make(env_id)

    cases = {  # name -> (env, vector?, simulated seconds per step)
        "charmie single": (single(args.id), False, 0.01),
        f"charmie {args.loop_envs} in a Python loop": (
            gym.vector.SyncVectorEnv([lambda: single(args.id)] * args.loop_envs), True, 0.01),
        f"charmie batched x{args.envs}": (
            gym.make_vec(args.id, num_envs=args.envs, vectorization_mode="vector_entry_point"),
            True, 0.01),
    }
    try:
        import mujoco  # noqa: F401
        cases["humanoid single"] = (single("Humanoid-v5"), False, 0.015)
        cases[f"humanoid {args.loop_envs} in a Python loop"] = (
            gym.vector.SyncVectorEnv([lambda: single("Humanoid-v5")] * args.loop_envs), True,
            0.015)
    except ImportError:
        print("mujoco is not installed (pip install mujoco): the humanoid cases are left out")
    runs = {name: stepper(env, vector, 0, args.action_scale if name.startswith("charmie")
                          else 1.0)
            for name, (env, vector, _) in cases.items()}
    rates: dict[str, list[float]] = {name: [] for name in cases}
    for run in runs.values():
        run(2)                                   # warm-up: kernels loaded, first resets
    for _ in range(args.repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            done = run(args.steps if "batched" in name or "loop" in name
                       else args.steps * 10)
            rates[name].append(done / (time.perf_counter() - start))
    median = {name: statistics.median(v) for name, v in rates.items()}
    humanoid = median.get("humanoid single")
    print(f"CPU: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
          f"median of {args.repeats} rounds; {args.id}, actions x{args.action_scale:g} "
          "(the humanoid's: the whole space)")
    print(f"{'case':<34} {'robot-steps/s':>14} {'sim s / wall s':>15} {'/ humanoid single':>18}")
    results = {}
    for name, rate in median.items():
        simulated = rate * cases[name][2]
        ratio = rate / humanoid if humanoid else float("nan")
        print(f"{name:<34} {rate:>14.0f} {simulated:>15.1f} {ratio:>18.2f}")
        results[name] = {"robot_steps_per_s": rate, "simulated_s_per_s": simulated,
                         "over_humanoid_single": ratio, "rounds": rates[name]}
    if args.out:
        write_result(args.out, {"id": args.id, "action_scale": args.action_scale,
                                "envs": args.envs,
                                "loop_envs": args.loop_envs, "cases": results})


if __name__ == "__main__":
    main()
