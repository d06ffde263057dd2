"""A tracking environment's frame (``render_mode="rgb_array"``): the robot's bodies as a stick
figure seen from the side (x right, z up) over the reference's pose in grey, drawn by
matplotlib (the ``plots`` extra) without a screen."""
from __future__ import annotations

import numpy as np

from ..kinematics.forward import forward_kinematics


def tracking_frame(task, row: int, size: tuple[int, int] = (480, 480)) -> np.ndarray:
    """The frame of robot ``row`` of a :class:`~.tracking.Tracking`, (height, width, 3) uint8."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    model, plant = task.model, task.plant
    x_ref = task.reference.at(task.k[[row]])[0][0]
    figure = Figure(figsize=(size[0] / 100, size[1] / 100), dpi=100)
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    for q, style in ((plant.joint_positions(row, x_ref), dict(color="0.7", lw=3)),
                     (plant.joint_positions(row), dict(color="tab:blue", lw=1.5))):
        origins = forward_kinematics(model, q).origin_world
        for child, parent in enumerate(model.parent):
            if parent >= 0:
                axes.plot(*origins[[parent, child]][:, [0, 2]].T, **style)
    axes.set_aspect("equal")
    axes.set_title(f"{model.name}  t = {task.k[row] * task.period:.2f} s")
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()
