from glob import glob

from setuptools import find_packages, setup

package_name = "charmie_dynamics"
console_scripts = [
    "charmie-dynamics = charmie_dynamics.cli.main:main",
    "model_loader = charmie_dynamics.ros.model_loader_node:main",
    "dynamics = charmie_dynamics.ros.dynamics_node:main",
    "trajectory_player = charmie_dynamics.ros.trajectory_player_node:main",
    "simulator = charmie_dynamics.ros.simulator_node:main",
]
# launch_ros and `ros2 run` look in <prefix>/lib/charmie_dynamics; pip and colcon put the
# console scripts in <prefix>/bin: libexec/<name> (a link to one launcher) runs bin/<name>
executables = ["libexec/" + script.split("=")[0].strip() for script in console_scripts]

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml") + glob("config/*.rviz")),
        ("share/" + package_name + "/config/examples", glob("config/examples/*.yaml")),
        ("lib/" + package_name, executables),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools", "numpy>=1.22", "PyYAML>=5.4", "matplotlib>=3.5", "numba>=0.59"],
    extras_require={"test": ["pytest>=7", "pin>=3.0", "scipy>=1.8", "urdf-parser-py>=0.0.4",
                             "viser>=1.1"],
                    "view": ["viser>=1.1"]},
    zip_safe=True,
    maintainer="charmie_dynamics developers",
    maintainer_email="charmie-dynamics@example.org",
    description="Multibody kinematics and dynamics of the CHARMIE mobile manipulator",
    license="Apache-2.0",
    entry_points={"console_scripts": console_scripts},
)
