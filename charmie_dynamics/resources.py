"""Where the bundled files (models, parameter files) live: the ROS share directory when the
package is installed by colcon or pip, else the source tree."""
from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = "charmie_dynamics"


def share_directory() -> Path:
    """The package's share directory (ament index first, then the install prefix, then source)."""
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory(PACKAGE))
    except Exception:  # ament_index is absent without ROS, or the package is not indexed
        pass
    prefix_share = Path(sys.prefix) / "share" / PACKAGE
    if (prefix_share / "config").is_dir():
        return prefix_share
    return Path(__file__).resolve().parent.parent


def bundled_model() -> Path:
    """The bundled CHARMIE model file."""
    return share_directory() / "config" / "charmie.yaml"
