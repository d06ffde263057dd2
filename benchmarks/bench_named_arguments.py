"""numba's dispatch cost of a NamedTuple of arrays against the same arrays passed one by one.

    .venv/bin/python benchmarks/bench_named_arguments.py [--calls 20000] [--repeats 9]

Calls kernels that do no work (each returns one element of its last array) with the
bundled CHARMIE's packed model (model/packed.py, 9 arrays): as one ``PackedModel``
argument, as one plain tuple, flattened into 3 arrays in one tuple (``packed_args``, the
form the kernels called from Python take), as 9 positional arrays, and as one array, and
prints the microseconds per call
(median, min of the rounds; the cases take turns within each round, so a change of machine
load hits them alike). Also the same with the column constants read as an IntEnum member
and as a module-level int inside a kernel that reads one column: both compile to the same
constant (layout.py names its columns and slots by IntEnum members).
"""
from __future__ import annotations

import argparse
import os
import sys
from enum import IntEnum

import numpy as np

from charmie_dynamics import bundled_model, jit, load_model
from charmie_dynamics.model.packed import PackedModel, flat_packed, unflat_packed
from common import timings_us

PARENT_INT = 0


class Column(IntEnum):
    """A column name as an IntEnum member, for the comparison with the int constant."""

    PARENT = 0


@jit.kernel
def _flat(packed: tuple) -> float:
    """No work but naming: the packed model flattened (3 arrays as one plain tuple), as the
    kernels called from Python take it (``model.compiled.packed_args``)."""
    return unflat_packed(packed).mech_vec.shape[0]


@jit.kernel
def _named(pm: PackedModel) -> float:
    """No work: one NamedTuple argument."""
    return pm.mech_vec.shape[0]


@jit.kernel
def _plain(arrays: tuple) -> float:
    """No work: the 9 arrays as one plain tuple."""
    return arrays[8].shape[0]


@jit.kernel
def _positional(body_int, body_vec, body_mat, subspace, base_acceleration, act_int, act_vec,
                mech_int, mech_vec) -> float:
    """No work: the same 9 arrays, one argument each."""
    return mech_vec.shape[0]


@jit.kernel
def _one(a: np.ndarray) -> float:
    """No work: one array."""
    return a.shape[0]


@jit.kernel
def _sum_int_column(body_int: np.ndarray) -> int:
    """The parent column summed, its index a module-level int."""
    total = 0
    for i in range(body_int.shape[0]):
        total += body_int[i, PARENT_INT]
    return total


@jit.kernel
def _sum_enum_column(body_int: np.ndarray) -> int:
    """The parent column summed, its index an IntEnum member."""
    total = 0
    for i in range(body_int.shape[0]):
        total += body_int[i, Column.PARENT]
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    pm = load_model(bundled_model()).compiled.packed
    plain, flat = tuple(pm), flat_packed(pm)
    assert _named(pm) == _plain(plain) == _positional(*pm) == _one(pm.mech_vec) == _flat(flat)
    assert _sum_int_column(pm.body_int) == _sum_enum_column(pm.body_int)
    cases = {
        "one PackedModel argument (9 arrays)": lambda: _named(pm),
        "one plain tuple argument (9 arrays)": lambda: _plain(plain),
        "the flattened model (3 arrays, one tuple)": lambda: _flat(flat),
        "9 positional arrays": lambda: _positional(*pm),
        "9 positional arrays, spelled out": lambda: _positional(
            pm.body_int, pm.body_vec, pm.body_mat, pm.subspace, pm.base_acceleration,
            pm.act_int, pm.act_vec, pm.mech_int, pm.mech_vec),
        "one array": lambda: _one(pm.mech_vec),
        "column sum, int constant": lambda: _sum_int_column(pm.body_int),
        "column sum, IntEnum member": lambda: _sum_enum_column(pm.body_int),
    }
    load0 = os.getloadavg()[0]
    results = timings_us(cases, args.repeats, args.calls)
    print(f"kernels compiled: {jit.ENABLED}; load average {load0:.2f} -> "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    print(f"{'case':40s} {'median':>8s} {'min':>8s}   us per call")
    for name, (med, low, _) in results.items():
        print(f"{name:40s} {med:8.3f} {low:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
