"""The efforts of ``analyze`` grouped by subsystem (issue 11 item 5)."""
from collections import Counter

import numpy as np

from charmie_dynamics.cli.plots import plot_efforts, plot_series, subsystems


def test_every_input_is_plotted_once(any_model):
    counts = Counter(name for group in subsystems(any_model) for name in group.inputs)
    assert sorted(counts) == sorted(any_model.input_names)
    assert set(counts.values()) == {1}


def test_charmie_groups_are_its_subsystems(charmie):
    groups = {g.inputs: (g.name, g.unit) for g in subsystems(charmie)}
    arm = tuple(f"theta{k}a" for k in range(7, 13))
    assert groups[("d1", "d2")][1] == "N" and groups[("theta3",)][1] == "N m"      # base
    assert groups[("act4", "act5")] == ("actuators of body_4..body_5", "N")
    assert groups[arm] == ("body_7a..body_12a", "N m")                           # left arm
    assert groups[("theta13a",)] == ("body_13a1+body_13a2", "N m")               # its claw
    assert groups[("theta7c", "theta8c")] == ("body_7c..body_8c", "N m")         # neck
    assert len(groups) == 8


def test_one_panel_per_group(charmie, tmp_path):
    import matplotlib.pyplot as plt

    t = np.linspace(0.0, 1.0, 11)
    efforts = np.outer(t, np.arange(charmie.n_coordinates))
    forces = np.outer(t, np.arange(len(charmie.actuators)))
    plot_efforts(tmp_path / "efforts.png", t, charmie, efforts, forces, "test")
    assert (tmp_path / "efforts.png").stat().st_size > 10_000
    assert not plt.get_fignums()          # the figure was closed


def test_plot_series_one_panel(tmp_path):
    """analyze's position and reaction plots: one panel, one line per series, closed."""
    import matplotlib.pyplot as plt

    t = np.linspace(0.0, 1.0, 11)
    plot_series(tmp_path / "series.png", t, {"x [m]": t, "y [m]": t ** 2}, "position [m]", "test")
    assert (tmp_path / "series.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert (tmp_path / "series.png").stat().st_size > 10_000
    assert not plt.get_fignums()
