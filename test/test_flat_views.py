"""The four flat views (flat.py) against the arrays they were flattened from (issue 39 item 4).

Each view function (``packed_model_view``, ``buffers_view``, ``work_view``,
``held_work_view``, and the held step's own rows) names header rows by hand: field j of its
tuple is row k + j, viewed with j's number of axes. The compiled step's data
(``HeldStepData``) flattens all four tuples into one header, so one flattening checks them
all: with every buffer entry made distinct, each field of each view must hold exactly the
values, shape and dtype of the array flatten copied into that row. A row off by one, a wrong
number of axes or the int buffer for a float array fails.

Why they are not generated: numba cannot cache a function made at run time
(``exec``: "cannot cache function ...: no locator available for file"), and the kernels'
on-disk cache is what keeps start-up in seconds; a generator writing the four functions
(36 lines) into their modules would be larger than they are. This test is their check.
"""
from __future__ import annotations

import gc

import numpy as np
import pytest

from charmie_dynamics.dynamics.aba import ArticulatedBodyWork, work_view
from charmie_dynamics.dynamics.inverse import InverseDynamicsBuffers, buffers_view
from charmie_dynamics.evaluators.evaluator import Evaluator, _unflat
from charmie_dynamics.flat import flatten, view1, view2, view3, view4, view5
from charmie_dynamics.kinematics.state import state_samples
from charmie_dynamics.mechanisms.auxiliary import segment_names
from charmie_dynamics.model.packed import PackedModel, packed_model_view
from charmie_dynamics.simulation import actuated_step
from charmie_dynamics.simulation.actuated_step import (HeldInput, HeldStepData, HeldStepWork,
                                                       held_work_view)


@pytest.fixture(scope="module")
def flattened(charmie):
    data = HeldStepData(charmie)
    # every entry distinct, so a view of the wrong row (or buffer) holds other values
    data.ints[:] = np.arange(data.ints.size)
    data.floats[:] = -1.0 - np.arange(data.floats.size)
    return data


def _check(view, data, first: int, fields: tuple[str, ...]) -> None:
    assert view._fields == fields
    for j, (name, got) in enumerate(zip(fields, view)):
        offset, padded = data.header[first + j, 0], data.header[first + j, 1:]
        assert got.ndim >= 1, name
        assert tuple(padded[:got.ndim]) == got.shape and all(padded[got.ndim:] == 1), \
            f"{name}: shape {got.shape} against the header's {tuple(padded)}"
        buffer = data.ints if got.dtype.kind in "iu" else data.floats
        want = buffer[offset:offset + got.size].reshape(got.shape)
        np.testing.assert_array_equal(got, want, err_msg=f"{name} (row {first + j})")


def test_the_packed_model_view_is_its_arrays(flattened):
    view = packed_model_view(flattened.header, flattened.ints, flattened.floats, 0)
    _check(view, flattened, 0, PackedModel._fields)
    assert view.body_int.dtype == np.int64 and view.body_vec.dtype == np.float64


def test_the_inverse_dynamics_buffers_view_is_its_arrays(flattened):
    first = actuated_step._INVERSE
    view = buffers_view(flattened.header, flattened.floats, first)
    _check(view, flattened, first, InverseDynamicsBuffers._fields)


def test_the_articulated_body_work_view_is_its_arrays(flattened):
    first = actuated_step._ARTICULATED
    view = work_view(flattened.header, flattened.floats, first)
    _check(view, flattened, first, ArticulatedBodyWork._fields)


def test_the_held_step_work_view_is_its_arrays(flattened):
    first = actuated_step._WORK
    view = held_work_view(flattened.header, flattened.ints, flattened.floats, first)
    _check(view, flattened, first, HeldStepWork._fields)


def test_the_rows_of_the_held_step_follow_its_tuples():
    """The held step's row constants are its tuples' lengths in HeldStepData's order."""
    assert actuated_step._INVERSE == len(PackedModel._fields) + 2
    assert actuated_step._ARTICULATED - actuated_step._INVERSE == \
        len(InverseDynamicsBuffers._fields)
    assert actuated_step._HELD - actuated_step._WORK == len(HeldStepWork._fields)
    assert actuated_step._STATE - actuated_step._HELD == len(HeldInput._fields)


def test_a_view_of_the_wrong_rows_is_caught(flattened):
    """The check itself: the articulated body's work viewed one row late fails it."""
    first = actuated_step._ARTICULATED
    with pytest.raises(AssertionError):
        _check(work_view(flattened.header, flattened.floats, first + 1), flattened, first,
               ArticulatedBodyWork._fields)


def test_flatten_refuses_what_it_cannot_view():
    with pytest.raises(ValueError, match="at most 5 axes"):
        flatten([np.zeros((1,) * 6)])
    with pytest.raises(ValueError, match="expected integers or floats"):
        flatten([np.zeros(2, dtype=bool)])


@pytest.mark.parametrize("dtype", [np.float64, np.int64])
def test_as_shape_is_numpys_reshape(dtype):
    """flat.as_shape (numba's view without reshape's C helper) against numpy's reshape for one
    to five axes: the same values, shape and C strides, the buffer's own memory (a write
    through the view reaches it), and a view that outlives the kernel and the buffer's name."""
    buffer = np.arange(2 * 3 * 4 * 5 * 6).astype(dtype)
    for shape in [(720,), (24, 30), (4, 6, 30), (2, 3, 4, 30), (2, 3, 4, 5, 6), (1, 720)]:
        view = {1: view1, 2: view2, 3: view3, 4: view4, 5: view5}[len(shape)](
            buffer, np.array([[0, *shape, *(1,) * (5 - len(shape))]], dtype=np.int64), 0)
        want = buffer.reshape(shape)
        assert view.shape == want.shape and view.strides == want.strides and view.dtype == dtype
        assert view.flags.c_contiguous and np.shares_memory(view, buffer)
        np.testing.assert_array_equal(view, want)
    view[0, 0] = 7          # the last view: (1, 720)
    assert buffer[0] == 7
    del buffer, want
    gc.collect()
    assert view[0, 0] == 7 and view[0, -1] == 719


def test_the_evaluators_block_is_its_arrays(charmie):
    """The evaluator's rows (_LOADS ... _OUTPUTS, named by hand): each array the kernel views
    is the one the evaluator's Python side reads (the same memory and shape); with
    gravity_only, zero rates and accelerations."""
    evaluator = Evaluator(charmie)
    state, inverse, segments, poses, outputs = _unflat(evaluator.flat, False)
    for view, mine in zip(state, state_samples(evaluator.state)):
        assert view.shape == mine.shape and np.shares_memory(view, mine)
    for view, mine in zip(inverse[1], evaluator.applied):
        assert view.shape == mine.shape and view.dtype == mine.dtype
        assert mine.size == 0 or np.shares_memory(view, mine)
    assert inverse[2] is not None and np.shares_memory(inverse[2], evaluator.state.q)
    assert np.shares_memory(inverse[3], evaluator.state.qd)
    assert np.shares_memory(inverse[4], evaluator.state.qdd)
    for view, mine in zip(inverse[5], evaluator.data.buffers):
        assert view.shape == mine.shape and np.shares_memory(view, mine)
    n_segments = len(segment_names(charmie))
    assert [a.shape for a in segments] == [(n_segments, 2, 3), (n_segments,),
                                          (n_segments, 1, 3, 3)]
    moving, hanging, slots = poses
    assert [charmie.body_names[i] for i in moving] + \
        [charmie.body_names[i] for i in hanging] == [
            evaluator.frames.children[k] if k < len(moving) else
            evaluator.frames.parents[k] for k in range(len(evaluator.frames.children))]
    assert [evaluator.input_names[s] for s in slots] == list(charmie.actuator_names)
    for view, mine in zip(outputs, (evaluator.result.efforts, evaluator.result.translations,
                                    evaluator.result.quaternions)):
        assert view.shape == mine.shape and np.shares_memory(view, mine)
    _, resting, *_ = _unflat(evaluator.flat, True)
    assert not np.shares_memory(resting[3], evaluator.state.qd)
    np.testing.assert_array_equal(resting[3], 0.0)
    np.testing.assert_array_equal(resting[4], 0.0)


def test_a_view_keeps_its_buffers_read_only_flag():
    """A read-only buffer gives read-only views, as numba's reshape keeps the flag."""
    buffer = np.arange(6.0)
    buffer.flags.writeable = False
    assert not view2(buffer, np.array([[0, 2, 3, 1, 1, 1]], dtype=np.int64), 0).flags.writeable
