"""QoS profiles by meaning, as tf2_ros and robot_state_publisher choose them."""
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)

#: /tf (tf2_ros.TransformBroadcaster): reliable, volatile, depth 100
TF = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
#: /tf_static, robot_description and the model: reliable, transient local, depth 1
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL, history=HistoryPolicy.KEEP_LAST)
#: measurements published (sensor-data QoS: best effort, depth 5)
SENSOR = qos_profile_sensor_data
#: measurements read by the dynamics node: best effort, depth 1. Only the newest sample is
#: worth evaluating; a deeper queue makes an overloaded node evaluate old samples (latency
#: of several input periods, measured by benchmarks/bench_node.py)
NEWEST_SAMPLE = QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT,
                           durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
#: measurements merged joint by joint (several publishers on one topic): best effort, depth
#: 10, so that one publisher's sample is not replaced by another's before it is read
MERGED_SAMPLES = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT,
                            durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)


def joint_states_input(joint_state_policy: str) -> QoSProfile:
    """The dynamics node's joint_states subscription under ``joint_state_policy``: merged
    samples (merge) or the newest sample (strict)."""
    return MERGED_SAMPLES if joint_state_policy == "merge" else NEWEST_SAMPLE


#: computed outputs and commands: reliable, volatile, depth 10
OUTPUT = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
