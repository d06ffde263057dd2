"""What a cylindrical joint costs as two bodies (the loader's sugar: a virtual body that
slides, then the body that turns; issue 39 item 1) against one two-DoF joint, measured in
Pinocchio where both exist: JointModelComposite (a slide then a turn, one joint) and the two
joints of the loader's expansion, on the same 3-body chain (test/test_cylindrical_joint.py's),
beside ours on the expanded model. One state, inverse dynamics (RNEA) and the ABA,
medians of the rounds, microseconds and ratios.

    .venv/bin/python benchmarks/bench_multidof.py [--repeats 9] [--calls 2000]
"""
from __future__ import annotations

import argparse
import platform
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin

from charmie_dynamics import resolve_state
from charmie_dynamics.dynamics import forward_dynamics, inverse_dynamics
from charmie_dynamics.dynamics.inverse import InverseDynamicsData
from charmie_dynamics.model import model_from_dict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "test"))
from common import timings_us  # noqa: E402
from test_cylindrical_joint import composite_model, document  # noqa: E402


def expanded_pinocchio(model) -> pin.Model:
    """Pinocchio with one joint per body of the loaded model (the expansion)."""
    from pin_oracle import pinocchio_model
    return pinocchio_model(model)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    model = model_from_dict(document(), "cylinders.yaml")
    composite, expanded = composite_model(), expanded_pinocchio(model)
    dc, de = composite.createData(), expanded.createData()
    rng = np.random.default_rng(3)
    q, v, a = (rng.uniform(-1.0, 1.0, model.n_coordinates) for _ in range(3))
    state, data = resolve_state(model, q, v, a), InverseDynamicsData(model)
    cases = {
        "pin.rnea composite (3 two-DoF joints)": lambda: pin.rnea(composite, dc, q, v, a),
        "pin.rnea expanded (6 one-DoF joints)": lambda: pin.rnea(expanded, de, q, v, a),
        "ours inverse_dynamics (6 bodies), reused data": lambda: inverse_dynamics(
            model, resolve_state(model, q, v, a, out=state), data=data),
        "pin.aba composite": lambda: pin.aba(composite, dc, q, v, a),
        "pin.aba expanded": lambda: pin.aba(expanded, de, q, v, a),
        "ours forward_dynamics aba": lambda: forward_dynamics(model, q, v, a, method="aba"),
    }
    us = timings_us(cases, args.repeats, args.calls)
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.processor() or "?")
    print(f"one state of a 3-body chain of cylindrical joints; CPU {cpu}")
    for name, (median, low, high) in us.items():
        print(f"  {name:48s} {median:8.2f} us  (min {low:.2f}, max {high:.2f})")
    r = [median for median, _, _ in us.values()]     # in the order of ``cases``
    print(f"expanded / composite, in Pinocchio: rnea {r[1] / r[0]:.2f}x, aba {r[4] / r[3]:.2f}x")
    print(f"ours / pin composite: rnea {r[2] / r[0]:.2f}x, aba {r[5] / r[3]:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
