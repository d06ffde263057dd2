"""The Gymnasium environments (issue 38 items 1-2): Gymnasium's own checker on CHARMIE and the
five-bar, the ids made from their names alone, the vector environment equal to N single ones
to the last bit (autoresets and a robot that fails included), the reward and the ends on
hand-made states, and a robot left alone without gravity that does not move."""
from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import charmie_dynamics.envs  # noqa: F401 - registers the ids
from charmie_dynamics.envs.tracking import Tracking, TrackingEnv, VectorTrackingEnv

ROOT = Path(__file__).resolve().parents[1]
PUMA = ROOT / "config" / "examples" / "puma.yaml"
FIVE_BAR = ROOT / "config" / "examples" / "five_bar.yaml"


@pytest.mark.parametrize("env_id", ["CharmieTracking-v0", "CharmieReach-v0",
                                    "CharmieTrackingResidual-v0", "FiveBarTracking-v0"])
def test_gymnasiums_checker_passes(env_id):
    env = gym.make(env_id, render_mode="rgb_array").unwrapped
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=False)
    # Gymnasium's only warnings: the unbounded observation box (a mobile base's positions);
    # others (an old matplotlib's pyparsing deprecations while rendering) are not the env's
    checker = [str(w.message) for w in caught if "WARN:" in str(w.message)]
    assert checker and all("infinity" in text for text in checker), checker
    observation, _ = env.reset(seed=3)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert observation.dtype == np.float32 and env.observation_space.contains(observation)


def test_an_id_alone_makes_the_environments():
    """A training script that knows only the id (module:name) gets both environments."""
    script = ("import gymnasium as gym, numpy as np\n"
              "env = gym.make('charmie_dynamics.envs:CharmieReach-v0')\n"
              "o, _ = env.reset(seed=0)\n"
              "o, r, te, tr, _ = env.step(env.action_space.sample())\n"
              "v = gym.make_vec('charmie_dynamics.envs:CharmieReach-v0', num_envs=3,\n"
              "                 vectorization_mode='vector_entry_point')\n"
              "ov, _ = v.reset(seed=0)\n"
              "print(type(env.unwrapped).__name__, type(v).__name__, o.shape, ov.shape)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=ROOT, timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["TrackingEnv", "VectorTrackingEnv", "(84,)", "(3,", "84)"]


def _compare(vector: VectorTrackingEnv, singles: list[TrackingEnv], seed: int, steps: int,
             actions) -> int:
    """Steps both with the same actions; asserts equal bits; the episodes that ended."""
    observation, _ = vector.reset(seed=seed)
    alone = np.stack([env.reset(seed=seed + i)[0] for i, env in enumerate(singles)])
    np.testing.assert_array_equal(observation, alone)
    ended = np.zeros(len(singles), dtype=bool)
    episodes = 0
    for k in range(steps):
        a = actions(k)
        observation, reward, terminated, truncated, _ = vector.step(a)
        for i, env in enumerate(singles):
            if ended[i]:                      # next-step autoreset: the action is ignored
                o, r, te, tr = env.reset()[0], 0.0, False, False
            else:
                o, r, te, tr, _ = env.step(a[i])
            assert np.array_equal(o, observation[i]) and r == reward[i], (k, i)
            assert (te, tr) == (terminated[i], truncated[i]), (k, i)
            ended[i] = te or tr
            episodes += ended[i]
    return episodes


@pytest.mark.parametrize("options", [{"reference": "random", "episode_steps": 15},
                                     {"residual": True}])
def test_the_vector_env_is_n_single_envs_to_the_last_bit(options):
    count, rng = 5, np.random.default_rng(7)
    vector = VectorTrackingEnv(count, **options)
    singles = [TrackingEnv(**options) for _ in range(count)]
    n = vector.single_action_space.shape[0]
    episodes = _compare(vector, singles, 40, 45,
                        lambda k: rng.uniform(-0.3, 0.3, (count, n)).astype(np.float32))
    assert episodes >= count              # every robot ended at least one episode and restarted


def test_a_robot_that_cannot_go_on_stops_alone():
    """PUMA with an effort scale so large that full effort overflows: that robot's episode
    ends as failed, the others go on with the numbers they have alone."""
    options = {"model": str(PUMA), "effort_limit": 1e300, "reference": "validation"}
    vector = VectorTrackingEnv(3, **options)
    singles = [TrackingEnv(**options) for _ in range(3)]
    push = np.zeros((3, 6), dtype=np.float32)
    push[1] = 1.0
    _compare(vector, singles, 0, 3, lambda k: push)
    vector.reset(seed=0)
    _, _, terminated, _, info = vector.step(push)
    assert info["failed"].tolist() == [False, True, False] and terminated[1]
    assert np.all(np.isfinite(vector.task.plant.q))   # its last valid state is kept


def test_the_five_bar_vector_env_is_single_envs_too():
    options = {"model": str(FIVE_BAR), "reference": "seed002-eq35", "effort_limit": 20.0}
    vector = VectorTrackingEnv(2, **options)
    singles = [TrackingEnv(**options) for _ in range(2)]
    _compare(vector, singles, 1, 4, lambda k: np.full((2, 2), 0.1 * k, dtype=np.float32))


def test_the_reward_and_the_ends_on_hand_made_states():
    task = Tracking(None, 2)
    n, names = len(task.names), task.names
    x_ref = np.tile(task.reference.x[0], (2, 1))
    x, xd, effort = x_ref.copy(), np.zeros((2, n)), np.zeros((2, n))
    x[0, names.index("theta9a")] += 0.1                    # one error scale on one input
    effort[1, names.index("act4")] = task.limit[names.index("act4")]   # one input at its limit
    reward, lost = task.score(x, xd, x_ref, effort)
    np.testing.assert_allclose(reward, [-1.0 / n, -0.01 / n], rtol=1e-12)
    assert not lost.any()
    x[0, names.index("d1")] += 0.01 * 20.5                 # beyond 20 error scales
    xd[1, names.index("act5")] = 0.05 * 1.11               # 11 % above the velocity limit
    assert task.score(x, xd, x_ref, effort)[1].tolist() == [True, True]
    xd[1, names.index("act5")] = 0.05 * 1.09
    assert task.score(x, xd, x_ref, effort)[1].tolist() == [True, False]


def test_a_csv_reference_truncates_at_its_end(tmp_path):
    reference = tmp_path / "reference.csv"
    reference.write_text("time,theta1\n0,0\n0.05,0.01\n")
    env = TrackingEnv(str(PUMA), reference=str(reference), effort_limit=50.0)
    env.reset(seed=0)
    ends = [env.step(np.zeros(6, dtype=np.float32))[2:4] for _ in range(5)]
    assert ends == [(False, False)] * 4 + [(False, True)]


def test_without_gravity_or_effort_nothing_moves(tmp_path):
    """Energy sanity: PUMA (no springs) at rest without gravity, zero action: every position
    and rate stays exactly where it was (a force from nowhere would show)."""
    model = tmp_path / "puma_no_gravity.yaml"
    model.write_text(PUMA.read_text().replace("gravity: [0, 0, -9.81]", "gravity: [0, 0, 0]"))
    env = TrackingEnv(str(model), effort_limit=50.0)
    start, _ = env.reset(seed=0)
    for _ in range(20):
        observation, *_ = env.step(np.zeros(6, dtype=np.float32))
    np.testing.assert_array_equal(observation[:12], start[:12])
    assert not observation[6:12].any()


def test_bad_options_name_the_option():
    with pytest.raises(ValueError, match="effort_limit: the model gives no effort limit"):
        TrackingEnv(str(PUMA))
    with pytest.raises(ValueError, match="control_dt: got 0.01, expected a whole number"):
        TrackingEnv(dt=0.003)
    with pytest.raises(ValueError, match="reference 'random': five_bar has loops"):
        TrackingEnv(str(FIVE_BAR), reference="random", effort_limit=1.0)
    with pytest.raises(ValueError, match="target_span: got 1.5"):
        TrackingEnv(reference="random", target_span=1.5)


@pytest.fixture(scope="module")
def small_dataset(tmp_path_factory):
    """20,000 CHARMIE states with the efforts a feedforward learns (charmie-dynamics dataset)."""
    out = tmp_path_factory.mktemp("learn") / "data"
    done = subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", "dataset", "--out",
                           str(out), "--samples", "20000", "--chunk-size", "10000", "--seed", "5"],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert done.returncode == 0, done.stderr
    return out


def test_a_small_learned_feedforward_beats_pd_alone_on_an_unseen_reach(small_dataset, tmp_path):
    """Issue 38 item 3 at small size, seeded: a 32x32 network trained for 20 passes on 20,000
    random states (none on the reach) cuts PD alone's RMS tracking error on a random reach by
    more than a quarter (0.95 against 1.50 error scales when written);
    the model's own feedforward does better still (it is what the network approximates)."""
    from charmie_dynamics.envs.compare import compare
    from charmie_dynamics.envs.learned import train
    from charmie_dynamics.feedforward_network import LearnedFeedforward
    from charmie_dynamics.model import read_model_file
    from charmie_dynamics.model.reader import model_hash
    from charmie_dynamics.resources import bundled_model
    model, text = read_model_file(bundled_model())
    network = train(model, model_hash(text), small_dataset, (32, 32), 20, seed=0)
    network.save(tmp_path / "net.npz")
    loaded = LearnedFeedforward.load(tmp_path / "net.npz", model.input_names)
    x = np.random.default_rng(0).normal(size=(4, 3 * len(model.input_names)))
    np.testing.assert_array_equal(loaded(*np.split(x, 3, axis=1)), network(*np.split(x, 3, axis=1)))
    task = Tracking(model, 1, reference="random", episode_steps=200, max_error=np.inf,
                    velocity_margin=np.inf)
    runs = {r.source: r for r in compare(task, loaded, seed=1, bandwidth=4.0)}
    assert not any(r.lost for r in runs.values())
    assert runs["pd+learned"].rms_error < 0.75 * runs["pd"].rms_error, runs
    assert runs["pd+model"].rms_error < runs["pd+learned"].rms_error, runs


def test_a_network_for_other_inputs_is_refused(tmp_path):
    from charmie_dynamics.feedforward_network import LearnedFeedforward, LearnedFeedforwardError
    n = 2
    network = LearnedFeedforward("five_bar", "0" * 16, ("a", "b"), np.zeros(3 * n),
                                 np.ones(3 * n), np.zeros(n), np.ones(n),
                                 (np.zeros((3 * n, 4)), np.zeros((4, n))),
                                 (np.zeros(4), np.zeros(n)))
    network.save(tmp_path / "net.npz")
    with pytest.raises(LearnedFeedforwardError, match=r"net.npz: names: got 2 inputs \(a, b\), "
                                                      r"expected the model's 3 \(a, b, c\)"):
        LearnedFeedforward.load(tmp_path / "net.npz", ("a", "b", "c"))
    (tmp_path / "bad.npz").write_bytes(b"not a network")
    with pytest.raises(LearnedFeedforwardError, match="bad.npz: cannot read the network"):
        LearnedFeedforward.load(tmp_path / "bad.npz")


def test_learn_trains_compares_and_writes_the_table(small_dataset, tmp_path):
    out = tmp_path / "learned"
    done = subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", "learn", "--data",
                           str(small_dataset), "--out", str(out), "--hidden", "16",
                           "--epochs", "3"],
                          capture_output=True, text=True, cwd=ROOT, timeout=1800)
    assert done.returncode == 0, done.stderr
    rows = (out / "comparison.csv").read_text().splitlines()
    assert rows[0] == "motion,source,rms_error,peak_error,rms_effort,steps,lost"
    assert len(rows) == 1 + 5 * 3 and (out / "feedforward.npz").is_file()
    assert "pd+learned" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == ["comparison.csv", "comparison.png",
                                                     "feedforward.npz"]
    assert (out / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the file is what the dynamics node's learned source takes for the bundled model
    from charmie_dynamics.feedforward_network import LearnedFeedforward
    from charmie_dynamics.model import load_model
    from charmie_dynamics.resources import bundled_model
    from charmie_dynamics.ros.dynamics_parts.learned_source import LearnedSource
    model = load_model(bundled_model())
    limits = np.full(len(model.input_names), 1.0)
    source = LearnedSource.of(LearnedFeedforward.load(out / "feedforward.npz"), "net",
                              model.input_names, model.name, limits, 0.05)
    assert source.network.names == tuple(model.input_names)


def test_an_action_of_the_wrong_shape_or_not_finite_is_refused():
    env = TrackingEnv()
    with pytest.raises(gym.error.ResetNeeded, match=r"step: called before reset\(\)"):
        env.step(np.zeros(21, dtype=np.float32))
    with pytest.raises(gym.error.ResetNeeded):
        VectorTrackingEnv(2).step(np.zeros((2, 21), dtype=np.float32))
    env.reset(seed=0)
    with pytest.raises(ValueError,
                       match=r"action: got shape \(20,\) of float32, expected \(1, 21\)"):
        env.step(np.zeros(20, dtype=np.float32))
    action = np.zeros(21, dtype=np.float32)
    action[3] = np.nan
    with pytest.raises(ValueError, match="action: robot 0, input act4: got nan"):
        env.step(action)


def test_options_out_of_range_name_the_option():
    for options, text in (({"num_envs": 0}, "num_envs: got 0"),
                          ({"dt": 1e-12}, "dt: got 1e-12"),
                          ({"error_scale": {"angular": 0.0}}, "error_scale: got 'angular': 0.0"),
                          ({"max_error": float("nan")}, "max_error: got nan"),
                          ({"reference": "validaton"}, "reference: got 'validaton', expected one")):
        count = options.pop("num_envs", 1)
        with pytest.raises(ValueError, match=text):
            VectorTrackingEnv(count, **options)
    vector = VectorTrackingEnv(3)
    with pytest.raises(ValueError, match="seed: got 2 seeds, expected one integer or 3"):
        vector.reset(seed=[1, 2])


def test_a_random_reach_never_asks_for_more_than_the_velocity_limits():
    """A robot following its reach exactly is never lost: the ramp's peak rate stays within
    the inputs' velocity limits (the target is pulled in where it would not)."""
    task = Tracking(None, 1, reference="random", episode_steps=200)
    rng = np.random.default_rng(0)
    for _ in range(100):
        task.reference.draw(0, rng)
        samples = [task.reference.at(np.array([k])) for k in range(task.reference.steps + 1)]
        x, xd = (np.concatenate([sample[i] for sample in samples]) for i in (0, 1))
        assert not task.score(x, xd, x, np.zeros_like(x))[1].any()
