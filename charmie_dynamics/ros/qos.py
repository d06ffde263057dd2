"""QoS profiles by meaning, as tf2_ros and robot_state_publisher choose them."""
from rclpy.qos import (DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy,
                       qos_profile_sensor_data)

#: /tf (tf2_ros.TransformBroadcaster): reliable, volatile, depth 100
TF = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
#: /tf_static, robot_description and the model: reliable, transient local, depth 1
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL, history=HistoryPolicy.KEEP_LAST)
#: measurements (joint_states, actuator_states, odometry): best effort, depth 5
SENSOR = qos_profile_sensor_data
#: computed outputs and commands: reliable, volatile, depth 10
OUTPUT = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.VOLATILE, history=HistoryPolicy.KEEP_LAST)
