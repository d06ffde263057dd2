"""``charmie-dynamics view`` looked at as a person would: the page is served in a subprocess,
headless Chromium (Debian package ``chromium``) takes a screenshot, and the picture is checked
against forward kinematics: the right arm's blue links lie where the camera projects them,
and the reaction-force arrow and an actuator are drawn where they are computed.

The screenshot is kept in pytest's tmp path and copied to ``charmie_results/view_test.png``.
"""
from __future__ import annotations

import base64
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import rgb_to_hsv
from PIL import Image

from charmie_dynamics.cli.main import main
from charmie_dynamics.export.urdf import _CHAIN_COLOURS, _chains
from charmie_dynamics.kinematics import resolve_state
from charmie_dynamics.mechanisms.auxiliary import auxiliary_segments
from charmie_dynamics.trajectories import validation
from charmie_dynamics.view.drawing import ARROW_COLOUR, body_visuals

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 1000, 800
CAMERA = {"position": (1.7, -1.3, 1.2), "look_at": (0.1, 0.0, 0.75), "fov": 45.0}
AT, DT = 2.5, 0.02
# the page's overlays (viser's floating GUI panel top right, the "software WebGL" notice top
# left) lie in the top band; the robot is framed below it and only that part is analysed
OVERLAY_BAND = 170


def chromium() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.access(path, os.X_OK):
        pytest.fail("headless Chromium is needed to look at the page and is not installed: "
                    "apt-get install -y chromium (Debian 12 package)")
    return path


def project(points: np.ndarray) -> np.ndarray:
    """Pixel (column, row) of world points seen by the page's camera (three.js perspective,
    z up, the canvas filling the window)."""
    eye, target = np.array(CAMERA["position"]), np.array(CAMERA["look_at"])
    f = (target - eye) / np.linalg.norm(target - eye)
    r = np.cross(f, [0.0, 0.0, 1.0])
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    d = np.asarray(points) - eye
    focal = HEIGHT / 2 / np.tan(np.radians(CAMERA["fov"]) / 2)
    depth = d @ f
    return np.stack([WIDTH / 2 + focal * (d @ r) / depth, HEIGHT / 2 - focal * (d @ u) / depth],
                    axis=-1)


def hue_mask(hsv: np.ndarray, rgb: tuple[float, float, float], tolerance: float) -> np.ndarray:
    """Pixels of the hue of ``rgb`` (shading changes brightness, not hue), saturated."""
    hue = rgb_to_hsv(np.array(rgb, dtype=float).reshape(1, 3))[0, 0]
    distance = np.abs((hsv[..., 0] - hue + 0.5) % 1.0 - 0.5)
    return (distance < tolerance) & (hsv[..., 1] > 0.4) & (hsv[..., 2] > 0.2)


def near(mask: np.ndarray, pixel: np.ndarray, radius: int = 5) -> int:
    c, r = (int(round(v)) for v in pixel)
    return int(mask[max(r - radius, 0):r + radius + 1, max(c - radius, 0):c + radius + 1].sum())


#: columns of viser's GUI panel (top right); the robot is framed left of them
PANEL_COLUMNS = slice(660, None)


def robot_drawn(png: Path) -> bool:
    """Whether the picture is complete: the page fades in, and a screenshot taken before the
    fade ends (or before the meshes arrive) shows the robot washed out or not at all; early
    on, the GUI panel is still unfolding (its blue time slider hangs below the overlay band,
    seen with a washed-out robot twice under load). Judged by the amount of the right arm's
    and the arrow's full colours, of the actuators' near-black, and by no blue in the panel's
    columns below the band, not by where the robot's parts are."""
    rgb = np.asarray(Image.open(png).convert("RGB"), dtype=float) / 255.0
    hsv = rgb_to_hsv(rgb)
    blue = hue_mask(hsv, _CHAIN_COLOURS[2], 0.03)[OVERLAY_BAND:]
    arrow = hue_mask(hsv, np.array(ARROW_COLOUR) / 255, 0.04)[OVERLAY_BAND:].sum()
    dark = (rgb.max(axis=-1) < 0.3)[OVERLAY_BAND:].sum()
    return bool(blue.sum() > 300 and arrow > 20 and dark > 300
                and not blue[:, PANEL_COLUMNS].any())


def screenshot_when_drawn(browser: str, url: str, png: Path, profile: Path,
                          deadline: float) -> bool:
    """Open ``url`` in headless Chromium and take its picture over the DevTools protocol
    every half second until :func:`robot_drawn` holds (True) or ``deadline`` s pass (False);
    the last picture is in ``png``."""
    from websockets.sync.client import connect

    proc = subprocess.Popen(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", "--remote-debugging-port=0",
         # WebGL without a GPU: SwiftShader through ANGLE
         "--use-gl=angle", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
         f"--window-size={WIDTH},{HEIGHT}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = None
        for line in proc.stderr:               # "DevTools listening on ws://127.0.0.1:N/..."
            match = re.search(r"DevTools listening on (ws://\S+)", line)
            if match:
                endpoint = match.group(1)
                break
        assert endpoint, "chromium did not open its DevTools endpoint"
        threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
        with connect(endpoint, max_size=None, open_timeout=60) as ws:
            ids = iter(range(1, 1_000_000))

            def call(method: str, session: str | None = None, **params):
                number = next(ids)
                ws.send(json.dumps({"id": number, "method": method, "params": params,
                                    **({"sessionId": session} if session else {})}))
                while True:
                    answer = json.loads(ws.recv(timeout=120))
                    if answer.get("id") == number:
                        assert "error" not in answer, answer
                        return answer["result"]

            target = call("Target.createTarget", url=url)["targetId"]
            session = call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            # the page's viewport exactly WIDTH x HEIGHT (the window's holds less); the page
            # lays itself out again
            call("Emulation.setDeviceMetricsOverride", session, width=WIDTH, height=HEIGHT,
                 deviceScaleFactor=1, mobile=False)
            end = time.monotonic() + deadline
            while True:
                shot = call("Page.captureScreenshot", session, format="png")
                png.write_bytes(base64.b64decode(shot["data"]))
                if robot_drawn(png):
                    return True
                if time.monotonic() > end:
                    return False
                time.sleep(0.5)
    finally:
        proc.kill()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def screenshot(tmp_path_factory) -> np.ndarray:
    browser = chromium()
    try:
        import viser  # noqa: F401
    except ImportError:
        pytest.fail("viser is not installed: pip install -e '.[view]'")
    tmp = tmp_path_factory.mktemp("view")
    point = ",".join(str(v) for v in CAMERA["position"])
    look_at = ",".join(str(v) for v in CAMERA["look_at"])
    server = subprocess.Popen(
        [sys.executable, "-m", "charmie_dynamics.cli.main", "view", "--port", "0",
         "--at", str(AT), "--dt", str(DT), f"--camera-position={point}",
         f"--camera-look-at={look_at}", "--camera-fov", str(CAMERA["fov"]), "--duration", "300"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stdout],
                     daemon=True).start()
    try:
        url, seen = None, []
        while url is None:
            try:
                line = lines.get(timeout=180)
            except queue.Empty:
                pytest.fail(f"the view did not start in 180 s: {''.join(seen)}")
            seen.append(line)
            match = re.search(r"serving (http://\S+)", line)
            url = match.group(1) if match else None
            if server.poll() is not None and url is None and lines.empty():
                pytest.fail(f"the view exited with {server.returncode}: {''.join(seen)}")
        png = tmp / "view.png"
        # The page draws once its websocket has brought the meshes and its fade-in is over:
        # seconds quiet, much longer on a busy machine (virtual-time budgets, tried before,
        # came too early under load). So the picture is taken again until it is complete
        # (robot_drawn), with a generous deadline; the tests below judge where things are.
        assert screenshot_when_drawn(browser, url + "/", png, tmp / "profile", deadline=240.0), \
            f"the view was not drawn completely in 240 s (last picture: {png})"
    finally:
        server.terminate()
        server.wait(timeout=30)
    results = ROOT / "charmie_results"
    results.mkdir(exist_ok=True)
    shutil.copy(png, results / "view_test.png")
    return np.asarray(Image.open(png).convert("RGB"), dtype=float) / 255.0


@pytest.fixture(scope="module")
def pose(charmie):
    """Forward kinematics and loads of the sample the page shows (--at 2.5 of validation)."""
    from charmie_dynamics.dynamics import inverse_dynamics
    traj = validation(charmie, DT)
    k = int(np.argmin(np.abs(traj.t - AT)))
    state = resolve_state(charmie, traj.x[k], traj.xd[k], traj.xdd[k])
    return inverse_dynamics(charmie, state)


@pytest.mark.slow
def test_screenshot_is_not_blank(screenshot):
    assert screenshot.shape == (HEIGHT, WIDTH, 3)
    drawn = np.abs(screenshot - np.median(screenshot.reshape(-1, 3), axis=0)).max(axis=-1) > 0.2
    assert drawn[OVERLAY_BAND:].mean() > 0.01, "almost nothing differs from the background"


@pytest.mark.slow
def test_a_picture_taken_too_early_is_not_complete(screenshot, tmp_path):
    """robot_drawn refuses the picture half faded in (as 0.6 of it over white), and with a
    blue control hanging below the overlay band in the panel's columns (the unfolding panel)."""
    faded = tmp_path / "faded.png"
    Image.fromarray(np.uint8(255 * (0.6 * screenshot + 0.4))).save(faded)
    assert not robot_drawn(faded)
    unfolding = screenshot.copy()
    unfolding[380:400, 780:860] = _CHAIN_COLOURS[2]
    Image.fromarray(np.uint8(np.round(255 * unfolding))).save(tmp_path / "unfolding.png")
    assert not robot_drawn(tmp_path / "unfolding.png")
    Image.fromarray(np.uint8(np.round(255 * screenshot))).save(tmp_path / "complete.png")
    assert robot_drawn(tmp_path / "complete.png")


@pytest.mark.slow
def test_right_arm_is_where_forward_kinematics_puts_it(screenshot, charmie, pose):
    fk = pose.placements
    chains = _chains(charmie)
    arm = [i for i, name in enumerate(charmie.body_names) if name.endswith(("b", "b1", "b2"))]
    assert {chains[i] for i in arm} == {2}
    # every visual of the arm: both ends of each cylinder, the centre of each sphere (world)
    ends = []
    for v in body_visuals(charmie):
        if v.body in arm:
            R, O = fk.rotation_world[v.body], fk.origin_world[v.body]
            axis = R @ _rotation_z(v.wxyz) * v.length / 2
            centre = O + R @ v.position
            ends += [centre - axis, centre + axis]
    pixels = project(np.array(ends))
    hsv = rgb_to_hsv(screenshot)
    blue = hue_mask(hsv, _CHAIN_COLOURS[2], 0.03)
    blue[:OVERLAY_BAND] = False
    assert pixels[:, 1].min() > OVERLAY_BAND + 10, "camera frames the arm under the overlays"
    rows, cols = np.nonzero(blue)
    assert len(rows) > 300, f"only {len(rows)} pixels of the arm's colour"
    # the drawn arm's bounds equal the projected ones, to a link's radius in pixels
    tolerance = 15
    drawn = np.array([cols.min(), rows.min(), cols.max(), rows.max()])
    expected = np.array([*pixels.min(axis=0), *pixels.max(axis=0)])
    assert np.all(np.abs(drawn - expected) < tolerance), (drawn, expected.round())
    # the joints of the arm (sphere centres) are blue where they are projected
    origins = project(fk.origin_world[arm])
    hits = [near(blue, p) > 0 for p in origins]
    assert np.mean(hits) > 0.8, list(zip(np.array(charmie.body_names)[arm], hits))


@pytest.mark.slow
def test_force_arrow_and_actuator_are_drawn_where_computed(screenshot, charmie, pose):
    hsv = rgb_to_hsv(screenshot)
    base = charmie.body_index("body_3")
    start = pose.placements.origin_world[base]
    tip = start + 0.002 * pose.joint_force_world[base]          # marker_scale 0.002 m/N
    arrow = hue_mask(hsv, np.array(ARROW_COLOUR) / 255, 0.04)
    head = project(tip - 0.01 * (tip - start) / np.linalg.norm(tip - start))
    assert near(arrow, head, 6) > 0, f"no arrow at {head.round()}"
    segment = {s.name: s for s in auxiliary_segments(charmie, pose.placements)}["act4"]
    dark = screenshot.max(axis=-1) < 0.3
    middle = project((segment.start + segment.end) / 2)
    assert near(dark, middle, 4) > 0, f"act4 not drawn at {middle.round()}"


def test_body_nodes_stay_children_of_the_robot():
    """Names with '/' (a body 'a' beside 'a/b') do not nest one body's frame in another's."""
    from charmie_dynamics.view.scene import body_node

    nodes = [body_node(n) for n in ("a", "a/b", "LFoot/FSR/HeelLeft_sensor", "a.b-c")]
    assert nodes == ["/robot/a", "/robot/a:b", "/robot/LFoot:FSR:HeelLeft_sensor", "/robot/a.b-c"]
    assert all(n.count("/") == 2 for n in nodes)


def _rotation_z(q: np.ndarray) -> np.ndarray:
    """z axis of the rotation of the quaternion (w, x, y, z)."""
    w, x, y, z = q
    return np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])


@pytest.mark.parametrize("argv, message", [
    (["--camera-fov", "0"], "--camera-fov 0.0: expected a value in (0, 170]"),
    (["--camera-position", "1,2"], "--camera-position '1,2': expected X,Y,Z"),
    (["--at", "9"], "--at 9.0: expected a time in [0, 5] s"),
    (["--wrench-body", "body_99"], "--wrench-body body_99: not a body of"),
    (["--marker-scale", "nan"], "--marker-scale nan: expected a finite value >= 0"),
    (["--ros", "--at", "1"], "--at: only with a motion or a trajectory"),
    # issue 36: the robot's topics checked before the page is served
    (["--ros", "--joint-states", "bad topic"], "--joint-states 'bad topic': expected a topic "
                                               "name"),
    (["--ros", "--odometry", "//odom"], "--odometry '//odom': expected a topic name"),
    (["--ros", "--actuator-states", "/joint_states"], "--actuator-states /joint_states: also "
                                                      "given as --joint-states"),
    (["--joint-map", "map.yaml"], "--joint-map: only with --ros"),
    (["--max-joint-age", "0.5", "--actuator-states", "/a"],
     "--actuator-states, --max-joint-age: only with --ros"),
])
def test_bad_options_give_one_line_and_exit_1(argv, message, capsys):
    assert main(["view", "--duration", "0.1"] + argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("argv, message", [
    (["--dt", "0"], "--dt 0.0: expected a sample period in [0.001, 0.5] s"),
    (["--dt", "0.6"], "--dt 0.6: expected a sample period in [0.001, 0.5] s"),
])
def test_view_checks_dt_as_analyze_does(argv, message, capsys):
    assert main(["view", "--duration", "0.1"] + argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_view_refuses_a_motion_beyond_the_model_limits(tmp_path, capsys):
    """The model's velocity limits are checked as analyze checks them (trajectories.violation)."""
    slow = tmp_path / "slow.yaml"
    slow.write_text(re.sub(r"velocity: [0-9.eE+-]+", "velocity: 0.000001",
                           (ROOT / "config" / "charmie.yaml").read_text()))
    assert main(["view", "--duration", "0.1", "--model", str(slow), "--dt", "0.05"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "motion 'validation': sample " in err, err


def test_view_refuses_a_host_it_cannot_serve_on():
    """An address that does not resolve is one error line and exit 1, not a silent hang (viser
    takes every OSError for a busy port and retries forever)."""
    proc = subprocess.run([sys.executable, "-m", "charmie_dynamics.cli.main", "view", "--duration",
                           "1", "--host", "999.1.1.1", "--port", "0"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1 and "--host '999.1.1.1'" in proc.stderr, proc.stderr


FIVE_BAR = ROOT / "config" / "examples" / "five_bar.yaml"


def test_a_model_with_loops_is_drawn_closed_with_the_nodes_arrows():
    """Offline, a model with loops is drawn from its independent coordinates with the loops
    solved (before, its dependent coordinates stayed at 0 and the five-bar was drawn open):
    in every sample of eq. 35's motion the two distal links' tips meet, and each arrow is the
    joint force the dynamics node's LoopEvaluator gives for that sample."""
    from charmie_dynamics import load_model
    from charmie_dynamics.evaluators.loop_evaluator import LoopEvaluator
    from charmie_dynamics.trajectories import node_motion
    from charmie_dynamics.view.drawing import loop_motion_poses
    model = load_model(FIVE_BAR)
    motion = node_motion(model, "seed002-eq35", 0.5)
    bodies = [model.body_index("link1_1"), model.body_index("link2_2")]
    drawn = loop_motion_poses(LoopEvaluator(model), motion, bodies, 0.002)

    def tip(body: str, length: float) -> np.ndarray:
        k = model.body_index(body)
        w, x, y, z = np.moveaxis(drawn.body_wxyz[:, k], -1, 0)
        direction = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], -1)
        return drawn.body_position[:, k] + length * direction
    assert len(motion.t) == 41
    np.testing.assert_allclose(tip("link2_1", 1.1), tip("link2_2", 1.2), atol=1e-9)
    reference = LoopEvaluator(model)
    for i in (0, 20, 40):
        out = reference(motion.x[i], motion.xd[i], motion.xdd[i])
        force = out.loads.joint_force_world[bodies]
        np.testing.assert_allclose(drawn.arrows[i, :, 1] - drawn.arrows[i, :, 0], 0.002 * force,
                                   atol=1e-12)


def test_a_loop_motion_that_crosses_a_singular_configuration_is_one_error_line(tmp_path, capsys):
    """Both cranks turned through 180 deg: the view refuses the sample where the loop would
    change branch, naming the file and the sample, as analyze does; a motion of the other
    kind is refused with the motions the model takes."""
    a = np.radians([170.0, 172.0, 174.0, 176.0, 178.0, 182.0, 186.0])
    t = np.linspace(0.0, 0.6, len(a))
    csv = tmp_path / "turn.csv"
    csv.write_text("time,theta1_1,theta1_2\n" + "".join(
        f"{t[k]:.17g},{a[k]:.17g},{a[k]:.17g}\n" for k in range(len(t))))
    assert main(["view", "--duration", "0.1", "--model", str(FIVE_BAR), "--trajectory",
                 str(csv)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{csv}: sample " in err and "crossed a singular" in err, err
    assert main(["view", "--duration", "0.1", "--model", str(FIVE_BAR), "--motion",
                 "validation"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected one of seed002-eq35" in err, err
