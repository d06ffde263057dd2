"""Message definitions and the CDR decoder built from them.

A definition is rosbag2's ``ros2msg`` text: the type's own fields, then each dependency after
a line of 80 ``=`` as ``MSG: pkg/Type`` and its fields (what MCAP's Schema records and
sqlite3's ``message_definitions`` table hold). Bags recorded before Iron store none in
sqlite3: the two types CHARMIE's tools read are bundled here.
"""
from __future__ import annotations

from typing import Any, Callable

from ..documents import bounded
from .metadata import RecordingError

JOINT_STATE = "sensor_msgs/msg/JointState"
ODOMETRY = "nav_msgs/msg/Odometry"
_RULE = "=" * 80
_HEADER = f"""{_RULE}
MSG: std_msgs/Header
builtin_interfaces/Time stamp
string frame_id
{_RULE}
MSG: builtin_interfaces/Time
int32 sec
uint32 nanosec
"""
_VECTOR = """float64 x
float64 y
float64 z
"""
#: sensor_msgs/msg/JointState with its dependencies (Humble to Kilted alike)
JOINT_STATE_DEFINITION = """std_msgs/Header header
string[] name
float64[] position
float64[] velocity
float64[] effort
""" + _HEADER
#: nav_msgs/msg/Odometry with its dependencies
ODOMETRY_DEFINITION = f"""std_msgs/Header header
string child_frame_id
geometry_msgs/PoseWithCovariance pose
geometry_msgs/TwistWithCovariance twist
{_HEADER}{_RULE}
MSG: geometry_msgs/PoseWithCovariance
geometry_msgs/Pose pose
float64[36] covariance
{_RULE}
MSG: geometry_msgs/Pose
geometry_msgs/Point position
geometry_msgs/Quaternion orientation
{_RULE}
MSG: geometry_msgs/Point
{_VECTOR}{_RULE}
MSG: geometry_msgs/Quaternion
{_VECTOR}float64 w
{_RULE}
MSG: geometry_msgs/TwistWithCovariance
geometry_msgs/Twist twist
float64[36] covariance
{_RULE}
MSG: geometry_msgs/Twist
geometry_msgs/Vector3 linear
geometry_msgs/Vector3 angular
{_RULE}
MSG: geometry_msgs/Vector3
{_VECTOR}"""
BUNDLED = {JOINT_STATE: JOINT_STATE_DEFINITION, ODOMETRY: ODOMETRY_DEFINITION}


def decoder(where: str, type_: str, definition: tuple[str, str] | None, schema_id: int
            ) -> Callable[[bytes], Any]:
    """A function from a message's CDR bytes to an object with its fields as attributes
    (mcap_ros2's dynamic types), from the stored ``definition`` (encoding, text) or, where
    none is stored, the bundled one."""
    from .storage import lazy_import
    _, Schema, _, _, DecoderFactory = lazy_import(where, "mcap")
    if definition is None:
        if type_ not in BUNDLED:
            raise RecordingError(f"{where}: no message definition of {bounded(type_, 80)} in "
                                 "the recording, and none bundled: expected one of "
                                 f"{', '.join(BUNDLED)} or a bag that stores its definitions "
                                 "(rosbag2 Iron or newer, or MCAP)")
        definition = ("ros2msg", BUNDLED[type_])
    encoding, text = definition
    schema = Schema(id=schema_id, name=type_, encoding=encoding, data=text.encode())
    try:
        decode = DecoderFactory().decoder_for("cdr", schema)
    except Exception as exc:           # the definition parser's errors have no common base
        raise RecordingError(f"{where}: the definition of {bounded(type_, 80)} does not parse "
                             f"({type(exc).__name__}: {bounded(exc, 120)}), expected a "
                             "ros2msg text") from None
    if decode is None:
        raise RecordingError(f"{where}: definition encoding {bounded(encoding, 40)} of "
                             f"{bounded(type_, 80)}, expected ros2msg")
    return decode
