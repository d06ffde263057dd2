"""The robot's recordings: rosbag2 folders (MCAP or sqlite3, split, zstd-compressed), single
``.mcap`` and ``.db3`` files, read and checked (``open_recording``), and written as
``ros2 bag record -s mcap`` lays them out (``write_recording``). No ROS: the messages are
decoded from their CDR bytes with the recorded (or bundled) definitions."""
from .definitions import BUNDLED, JOINT_STATE, JOINT_STATE_DEFINITION, ODOMETRY, ODOMETRY_DEFINITION
from .metadata import RecordingError
from .rosbag2 import RecordedMessage, Recording, open_recording
from .storage import MAX_RECORDING_BYTES
from .writer import write_recording

__all__ = ["BUNDLED", "JOINT_STATE", "JOINT_STATE_DEFINITION", "MAX_RECORDING_BYTES",
           "ODOMETRY", "ODOMETRY_DEFINITION", "RecordedMessage", "Recording",
           "RecordingError", "open_recording", "write_recording"]
