"""``charmie-dynamics view``: serve a local web page (viser) showing the robot: an analyze motion
replayed in a loop, or the live robot from ROS 2 topics with ``--ros``."""
from __future__ import annotations

import argparse
import ipaddress
import math
import socket
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional
from urllib.parse import urlsplit

import numpy as np

from ..documents import bounded
from ..errors import InputError
from ..evaluators.evaluator import NonFiniteLoads
from ..evaluators.loop_evaluator import LoopEvaluator
from ..kinematics import forward_kinematics, inputs_from_dict, resolve_state
from ..kinematics.indirect import MechanismRangeError
from ..mechanisms.closed_chains import ClosedChain, LoopSingularityError
from ..model import load_model
from ..model.model import Model
from ..ros.common.outputs import wrench_bodies
from ..ros.tools.robot_inputs import (add_robot_input_arguments, robot_input_options_given,
                                      robot_inputs)
from ..trajectories import (LOOP_REFERENCES, MAX_DT, MIN_DT, MOTIONS, Trajectory, check_dt,
                            from_csv, inputs_from_csv, motion, node_motion)
from .drawing import Poses, loop_motion_poses, motion_poses, poses

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection
    from websockets.http11 import Request, Response

DEFAULT_CAMERA = "2.2,-1.6,1.4"
DEFAULT_LOOK_AT = "0,0,0.75"


def add_view_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("view")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--motion", choices=sorted(MOTIONS) + sorted(LOOP_REFERENCES),
                     default=None,
                     help="replay a reference motion in a loop (default: validation; "
                          "seed002-eq35 for a model with loops)")
    src.add_argument("--trajectory", type=Path, help="replay a trajectory CSV (see README)")
    src.add_argument("--ros", action="store_true",
                     help="live: poses from joint_states + actuator_states (+ odometry), read as "
                          "the dynamics node reads them (the options below), arrows from its "
                          "wrench_markers (needs rclpy)")
    add_robot_input_arguments(p)
    p.add_argument("--model", type=Path, default=None, help="model file (default: bundled CHARMIE)")
    p.add_argument("--dt", type=float, default=0.02,
                   help=f"sample period of --motion, s, in [{MIN_DT:g}, {MAX_DT:g}]")
    p.add_argument("--at", type=float, default=None, metavar="SECONDS",
                   help="start paused at this time of the motion (the page can play it)")
    p.add_argument("--wrench-body", action="append", default=None, metavar="BODY",
                   help="body whose joint force is drawn (repeatable; default the model's base "
                        "body, the first with mass: the floor load, CHARMIE's body_3, as the "
                        "dynamics node's wrench_joints)")
    p.add_argument("--marker-scale", type=float, default=0.002,
                   help="arrow length per newton, m/N (the dynamics node's marker_scale)")
    p.add_argument("--host", default="127.0.0.1", help="address to serve on (default: local only)")
    p.add_argument("--port", type=int, default=8080, help="port (0: any free port; a busy port "
                                                          "moves to the next free one)")
    p.add_argument("--camera-position", default=DEFAULT_CAMERA, metavar="X,Y,Z",
                   help=f"initial camera position, world frame, m (default {DEFAULT_CAMERA})")
    p.add_argument("--camera-look-at", default=DEFAULT_LOOK_AT, metavar="X,Y,Z",
                   help=f"point the camera looks at, m (default {DEFAULT_LOOK_AT})")
    p.add_argument("--camera-fov", type=float, default=50.0,
                   help="vertical field of view, degrees (default 50)")
    p.add_argument("--rate", type=float, default=30.0, help="page updates per second")
    p.add_argument("--duration", type=float, default=0.0,
                   help="stop after this many seconds (default 0: until Ctrl-C)")
    p.set_defaults(func=run_view)


def parse_point(option: str, text: str) -> tuple[float, float, float]:
    """``X,Y,Z``: three finite numbers."""
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise InputError(f"{option} {text!r}: expected X,Y,Z (three finite numbers, m)")
    return values


def _check(option: str, value: float, low: float, high: float, unit: str) -> None:
    if not low < value <= high:
        raise InputError(f"{option} {value!r}: expected a value in ({low:g}, {high:g}] {unit}")


def _camera(args: argparse.Namespace):
    from .scene import Camera
    position = parse_point("--camera-position", args.camera_position)
    look_at = parse_point("--camera-look-at", args.camera_look_at)
    if np.allclose(position, look_at):
        raise InputError("--camera-position and --camera-look-at: the same point, expected "
                         "two different points")
    _check("--camera-fov", args.camera_fov, 0.0, 170.0, "degrees")
    return Camera(position, look_at, args.camera_fov)


def _wrench_bodies(model: Model, names: Optional[list[str]]) -> list[int]:
    names = wrench_bodies(model, names or [])
    unknown = [n for n in names if n not in model.body_names]
    if unknown:
        raise InputError(f"--wrench-body {', '.join(unknown)}: not a body of {model.name} "
                         f"(bodies: {', '.join(model.body_names)})")
    return [model.body_index(n) for n in names]


def _trajectory(model: Model, args: argparse.Namespace) -> tuple[Trajectory, str]:
    if args.trajectory is not None:
        return from_csv(model, str(args.trajectory)), str(args.trajectory)
    name = args.motion or "validation"
    if name not in MOTIONS:
        raise InputError(f"--motion {name}: a motion of a model with loops; {model.name} has "
                         f"none, expected one of {', '.join(sorted(MOTIONS))}")
    # --dt and the model's limits checked as analyze checks them
    return motion(model, name, args.dt), f"motion '{name}'"


def _loop_poses(model: Model, args: argparse.Namespace, bodies: list[int]
                ) -> tuple[Poses, np.ndarray, str]:
    """A model with loops: its motion (``--trajectory`` of the independent coordinates, as
    ``analyze`` reads it, or a loop motion) drawn closed (drawing.loop_motion_poses); a
    sample whose loops cannot be solved is an :class:`InputError` naming it."""
    evaluator = LoopEvaluator(model)
    if args.trajectory is not None:
        source = str(args.trajectory)
        trajectory = inputs_from_csv(model, source, evaluator.input_names)
    else:
        name = args.motion or "seed002-eq35"
        check_dt(args.dt)
        trajectory, source = node_motion(model, name, args.dt), f"motion '{name}'"
    try:
        drawn = loop_motion_poses(evaluator, trajectory, bodies, args.marker_scale)
    except (LoopSingularityError, NonFiniteLoads, MechanismRangeError) as exc:
        k = exc.sample
        raise InputError(f"{source}: sample {k} (t = {trajectory.t[k]:.6g} s): {exc}") from None
    return drawn, trajectory.t, source


def _server(args: argparse.Namespace):
    try:
        import viser
    except ImportError as exc:
        raise InputError(f"view needs viser ({exc}): pip install 'charmie_dynamics[view]' "
                         "or pip install viser") from None
    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port}: expected 0..65535")
    _check_host(args.host)
    with _origin_checked_serve():
        server = viser.ViserServer(host=args.host, port=args.port, label="CHARMIE",
                                   verbose=False)
    server.gui.configure_theme(control_layout="floating", show_logo=False,
                               show_share_button=False)
    return server


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def origin_allowed(origin: str, host: str, port: int) -> bool:
    """Whether a browser page from ``origin`` may use the view served on ``port`` and reached
    as ``host`` (the request's Host header): the view's own page, at a loopback name or at
    the address typed (a LAN address with --host 0.0.0.0). A name other than localhost is
    refused: its DNS can point it at this machine (rebinding), an address cannot move."""
    try:
        page, reached = urlsplit(origin), urlsplit(f"//{host}")
        page_port = page.port or 80
        reached_host = reached.hostname
    except ValueError:                  # a port that is not a number
        return False
    if page.scheme != "http" or page_port != port or page.hostname is None:
        return False
    if page.hostname in LOOPBACK_NAMES:
        return True
    try:
        ipaddress.ip_address(page.hostname)
    except ValueError:
        return False
    return page.hostname == reached_host


def _refuse_foreign_origin(connection: ServerConnection, request: Request
                           ) -> Optional[Response]:
    """A 403 response for a request whose Origin header is another site's, else None. A
    request without Origin is not from a browser page (browsers always send it on a
    websocket handshake): a local program can send any Origin, so refusing it would
    protect nothing."""
    origin = request.headers.get("Origin")
    if origin is None or origin_allowed(origin, request.headers.get("Host", ""),
                                        connection.local_address[1]):
        return None
    return connection.respond(HTTPStatus.FORBIDDEN, f"Origin {bounded(origin, 80)} refused: "
                              "the view serves its own page only\n")


@contextmanager
def _origin_checked_serve() -> Iterator[None]:
    """viser gives websockets no list of origins: its ``serve`` is wrapped while a
    ViserServer starts (the constructor returns once its thread has called ``serve``), so
    that every request first passes :func:`_refuse_foreign_origin`."""
    import websockets.asyncio.server as ws_server
    serve = ws_server.serve

    def checked_serve(*args, **kwargs):
        inner = kwargs.get("process_request")

        def process_request(connection: ServerConnection, request: Request
                            ) -> Optional[Response]:
            refused = _refuse_foreign_origin(connection, request)
            return refused if refused is not None or inner is None else \
                inner(connection, request)
        return serve(*args, **{**kwargs, "process_request": process_request})
    ws_server.serve = checked_serve
    try:
        yield
    finally:
        ws_server.serve = serve


def _check_host(host: str) -> None:
    """Raise :class:`InputError` unless ``host`` resolves to an address this machine can
    serve on (viser takes every OSError for a busy port and retries the next one forever)."""
    try:
        infos = socket.getaddrinfo(host, 0, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        raise InputError(f"--host {host!r}: not a usable address ({bounded(exc)})") from None
    problem: Optional[BaseException] = None
    for family, kind, proto, _, address in infos:
        try:
            with socket.socket(family, kind, proto) as probe:
                probe.bind(address)
            return
        except OSError as exc:
            problem = exc
    raise InputError(f"--host {host!r}: cannot serve on this address ({bounded(problem)})")


def _scene(model: Model, args: argparse.Namespace, camera):
    """The web server and the robot's scene on it."""
    from .scene import RobotScene
    server = _server(args)
    return server, RobotScene(server, model, camera)


def run_view(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    camera = _camera(args)
    bodies = _wrench_bodies(model, args.wrench_body)
    if not (math.isfinite(args.marker_scale) and args.marker_scale >= 0):
        raise InputError(f"--marker-scale {args.marker_scale!r}: expected a finite value >= 0 m/N")
    _check("--rate", args.rate, 0.0, 120.0, "Hz")
    if not (math.isfinite(args.duration) and args.duration >= 0):
        raise InputError(f"--duration {args.duration!r}: expected a value >= 0 s (0: forever)")
    if args.ros:
        if args.at is not None:
            raise InputError("--at: only with a motion or a trajectory, not with --ros")
        return _run_ros(model, args, camera)
    given = robot_input_options_given(args)
    if given:
        raise InputError(f"{', '.join(given)}: only with --ros (the live robot's topics and "
                         "how they are merged)")
    if model.loops is not None:
        drawn, t, source = _loop_poses(model, args, bodies)
    else:
        trajectory, source = _trajectory(model, args)
        t = trajectory.t
        drawn = motion_poses(model, trajectory, bodies, args.marker_scale)
    if args.at is not None and not t[0] <= args.at <= t[-1]:
        raise InputError(f"--at {args.at!r}: expected a time in [{t[0]:g}, {t[-1]:g}] s "
                         f"({source})")
    server, scene = _scene(model, args, camera)
    _replay(server, scene, drawn, t, args, source)
    return 0


def _replay(server, scene, drawn: Poses, t: np.ndarray, args: argparse.Namespace,
            source: str) -> None:
    """Loop over the motion in real time while 'play' is ticked; the slider picks a time."""
    def sample(time_s: float) -> int:
        return int(np.argmin(np.abs(t - time_s)))

    start_time = t[0] if args.at is None else args.at
    step = float(np.min(np.diff(t))) if len(t) > 1 else 0.01
    play = server.gui.add_checkbox("play", args.at is None)
    slider = server.gui.add_slider("time [s]", float(t[0]), float(t[-1]), step, float(start_time))

    @slider.on_update
    def _(_event) -> None:
        if not play.value:                   # while playing, the loop below drives the pose
            scene.show(drawn, sample(slider.value))

    scene.show(drawn, sample(start_time))
    print(f"charmie-dynamics view: serving http://{args.host}:{server.get_port()} ({source}, "
          f"{len(t)} samples over {t[-1] - t[0]:.2f} s; Ctrl-C to stop)", flush=True)
    span = max(float(t[-1] - t[0]), step)
    began = time.monotonic()
    played_from, clock = float(start_time), time.monotonic()
    try:
        while args.duration <= 0 or time.monotonic() - began < args.duration:
            time.sleep(1.0 / args.rate)
            now = time.monotonic()
            if not play.value:
                played_from, clock = float(slider.value), now
                continue
            time_s = t[0] + (played_from - t[0] + now - clock) % span
            slider.value = float(time_s)
            scene.show(drawn, sample(time_s))
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


@dataclass(frozen=True)
class LivePose:
    """What ``view --ros`` reads and how it poses the model (:func:`live_pose`)."""

    inputs: tuple[str, ...]             # the names read, in the order ``coordinates`` takes
    ignored: tuple[str, ...]            # accepted and not read (a loop's dependent coordinates)
    start: np.ndarray                   # the inputs drawn until joint_states arrive
    coordinates: Callable[[np.ndarray], np.ndarray]       # inputs -> every coordinate


def live_pose(model: Model) -> LivePose:
    """The model's inputs, or for a model with loops its independent coordinates (the
    dependent ones ignored, as the dynamics node ignores them): such a model is drawn closed,
    its loops solved (``ClosedChain``) warm-started from the last pose; a solve that fails
    raises :class:`LoopSingularityError` and the next one starts from the assembled pose."""
    if model.loops is None:
        def tree(x: np.ndarray) -> np.ndarray:
            zero = np.zeros_like(x)
            return resolve_state(model, x, zero, zero).q
        return LivePose(model.input_names, (), inputs_from_dict(model)[0], tree)
    chain = ClosedChain.build(model)
    last = [chain.assembled]

    def closed(x: np.ndarray) -> np.ndarray:
        try:
            last[0] = chain.positions(x, chain.approach(x, last[0]))
        except LoopSingularityError:
            last[0] = chain.assembled
            raise
        return last[0]
    return LivePose(chain.independent_names, chain.dependent_names,
                    chain.assembled[chain.independent], closed)


def _run_ros(model: Model, args: argparse.Namespace, camera) -> int:
    try:
        from ..ros.tools.view_feed import check_topics, run_view_feed
    except ImportError as exc:
        raise InputError(f"view --ros needs ROS 2 (rclpy and the message packages): {exc}. "
                         "Run scripts/setup.sh or source a ROS 2 install.") from None
    topics, joint_map = robot_inputs(args, model)
    try:
        check_topics(topics)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    server, scene = _scene(model, args, camera)
    arrows = [np.zeros((0, 2, 3))]              # the newest wrench_markers, drawn with the pose
    live = live_pose(model)

    def show(x: np.ndarray) -> None:
        try:
            placements = forward_kinematics(model, live.coordinates(x))
            scene.show(poses(model, placements, arrows[0]), 0)
        except (MechanismRangeError, LoopSingularityError) as exc:
            # e.g. a balancer lever that cannot reach, loops that do not close
            print(f"charmie-dynamics view: pose not drawn: {exc}", file=sys.stderr)

    show(live.start)                            # until joint_states arrive
    print(f"charmie-dynamics view: serving http://{args.host}:{server.get_port()} (live from "
          f"{', '.join(topics.types())} and wrench_markers; Ctrl-C to stop)", flush=True)
    try:
        return run_view_feed(model, show, lambda points: arrows.__setitem__(0, points),
                             args.rate, args.duration, live.inputs, live.ignored, topics,
                             joint_map, args.max_joint_age)
    finally:
        server.stop()
