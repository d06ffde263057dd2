from glob import glob

from setuptools import find_packages, setup

package_name = "charmie_dynamics"
console_scripts = [
    "charmie-dynamics = charmie_dynamics.cli.main:main",
    "model_loader = charmie_dynamics.ros.model_loader_node:main",
    "dynamics = charmie_dynamics.ros.dynamics_node:main",
    "trajectory_player = charmie_dynamics.ros.trajectory_player_node:main",
    "simulator = charmie_dynamics.ros.simulator_node:main",
    "trajectory_effort_proxy = charmie_dynamics.ros.trajectory_effort_proxy:main",
]
# setup.cfg (as `ros2 pkg create` writes it) sends every console script to
# <prefix>/lib/charmie_dynamics, where launch_ros and `ros2 run` look: nothing on PATH. The CLI
# alone also goes to <prefix>/bin as a data file, bin/charmie-dynamics (a plain Python script:
# a second entry point would land in lib/ too). A wheel (`pip install .`) ignores setup.cfg:
# there pip writes every console script to bin/, the CLI's over that data file, and
# `scripts/ros_path/setup_data.py link-executables` links lib/charmie_dynamics/<name> to them.
# The oldest versions the test suite passed on (Python 3.11, scripts/constraints-floor.txt,
# scripts/test_floors.sh: all but the pinocchio cross-checks needing pin 3). Python 3.10 is
# ROS 2 Humble's, whose apt has older ones (numpy 1.21,
# numba 0.55) and whose setuptools makes console scripts that refuse to start on an unmet
# requirement: there the names only, untested, and no numba (jit.py then runs plain Python and
# says how to install it). scipy: numba's np.dot calls its BLAS. matplotlib (analyze's and
# identify's plots) and tqdm (analyze's progress bar): the `plots` extra, off the robot's
# image; without them those commands say what to install, and no bar is drawn.
# mcap, mcap-ros2-support: the recordings of record/identify (rosbag2 folders, MCAP and
# sqlite3 alike: mcap_ros2 decodes the CDR of both); install_requires, not the test extra,
# because those commands need them at run time; not on Humble (no apt package: there a
# recording says how to install them, CSV logs work without them).
# joblib: `study --jobs` (1.3: results as a generator, for the progress bar); not on Humble
# (apt's 0.17 is too old: there --jobs says how to install it). dask[distributed]: `study
# --scheduler`, the `cluster` extra (and the test extra, for the LocalCluster test).
floors = {"numpy": "1.23.2", "numba": "0.57.0", "scipy": "1.9.2", "PyYAML": "6.0",
          "matplotlib": "3.6.0", "tqdm": "4.57.0", "mcap": "1.1.0", "mcap-ros2-support": "0.5.0",
          "joblib": "1.3.0"}
NOT_ON_HUMBLE = ("numba", "mcap", "mcap-ros2-support", "joblib")
OPTIONAL = ("matplotlib", "tqdm")
plots = [f"{name}>={floors[name]}" for name in OPTIONAL]
cluster = ["dask[distributed]>=2023.1.0"]
# gymnasium: the environments of charmie_dynamics.envs (1.1: the vector API's AutoresetMode);
# scikit-learn: `learn`'s training (the network runs on numpy alone); off the robot's image
learn = ["gymnasium>=1.1.0", "scikit-learn>=1.3.0"]
# the linters test/test_lint.py runs (ruff.toml, setup.cfg [isort])
lint = ["ruff>=0.16.9", "isort>=5.13.2"]

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
        ("share/" + package_name + "/config/studies", glob("config/studies/*.yaml")),
        ("bin", ["bin/charmie-dynamics"]),
    ],
    python_requires=">=3.10",
    install_requires=["setuptools"] + [f'{name}>={floor}; python_version >= "3.11"'
                                       for name, floor in floors.items() if name not in OPTIONAL]
                     + [f'{name}; python_version < "3.11"' for name in floors
                        if name not in NOT_ON_HUMBLE + OPTIONAL],
    # pytest < 9: scripts/ros_path.sh's launch_testing plugin needs it, and both venvs
    # install one pinned version (scripts/constraints-tested.txt); the plots' packages: the
    # suite runs the plot tests; rosbags: test/test_recordings.py's independent rosbag2
    # writer and reader (test only: charmie_dynamics/recordings/ reads bags without it)
    extras_require={"test": ["pytest>=7,<9", "pin>=2.6.20", "urdf-parser-py>=0.0.4",
                             "viser>=1.1", "example-robot-data", "rosbags>=0.11.9"]
                            + plots + cluster + learn + lint,
                    "view": ["viser>=1.1"],
                    "plots": plots,
                    "cluster": cluster,
                    "learn": learn},
    zip_safe=True,
    maintainer="charmie_dynamics developers",
    maintainer_email="charmie-dynamics@example.org",
    description="Multibody kinematics and dynamics of the CHARMIE mobile manipulator",
    license="Apache-2.0",
    entry_points={"console_scripts": console_scripts},
)
