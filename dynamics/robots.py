"""Robots that come with dcol (``datasets/robots``) and with the ``example-robot-data`` package
(optional extra ``dcol[robots]``), loaded with their meshes resolved."""

import importlib.metadata
import os
from typing import Any

from .model import Model
from .urdf import load_urdf

__all__ = [
    "DATASET_ROBOTS",
    "EXAMPLE_ROBOTS",
    "dataset_robot_path",
    "load_dataset_robot",
    "example_robot_data_dir",
    "load_example_robot",
    "load_robot",
]

_DATASET_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "datasets", "robots")

DATASET_ROBOTS: dict[str, bool] = {
    "cartpole": False,
    "double_pendulum": False,
    "half_cheetah": False,
    "catapult": False,
    "jump_worm": False,
    "quadrotor": True,
    "box": True,
    "ground_plane": False,
}
"""dcol's own robots (datasets/robots, described in its README.md): name → whether it is loaded
with a floating base."""

EXAMPLE_ROBOTS: dict[str, tuple[str, bool]] = {
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "panda": ("panda_description/urdf/panda.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
    "talos_full": ("talos_data/robots/talos_full_v2.urdf", True),
    "anymal": ("anymal_b_simple_description/robots/anymal.urdf", True),
    "go1": ("go1_description/urdf/go1.urdf", True),
}
"""The robots load_example_robot knows (the ``robots`` extra): name → (URDF path under
example-robot-data's robots folder, whether it is loaded with a floating base)."""


def dataset_robot_path(name: str) -> str:
    """Path of one of dcol's own URDFs (a key of DATASET_ROBOTS)."""
    if name not in DATASET_ROBOTS:
        raise ValueError(f"unknown dataset robot {name!r}; choose from {sorted(DATASET_ROBOTS)}")
    return os.path.join(_DATASET_DIR, f"{name}.urdf")


def load_dataset_robot(name: str, **kwargs: Any) -> Model:
    """One of dcol's own robots as a Model, with its usual base (keywords go to load_urdf)."""
    kwargs.setdefault("floating_base", DATASET_ROBOTS.get(name, False))
    return load_urdf(dataset_robot_path(name), **kwargs)


def example_robot_data_dir() -> str:
    """The ``share`` folder of the installed example-robot-data package (it holds
    ``example-robot-data/robots/...``, the root its ``package://`` mesh URIs refer to)."""
    try:
        distribution = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        raise ValueError("example-robot-data is not installed: pip install 'dcol[robots]'") from None
    share = str(distribution.locate_file(os.path.join("cmeel.prefix", "share")))
    if not os.path.isdir(os.path.join(share, "example-robot-data", "robots")):
        raise ValueError(f"example-robot-data's robots folder is not under {share}")
    return share


def load_example_robot(name: str, **kwargs: Any) -> Model:
    """A robot of example-robot-data as a Model: a key of EXAMPLE_ROBOTS, or a URDF path relative
    to its robots folder (then pass floating_base yourself). Keywords go to load_urdf."""
    share = example_robot_data_dir()
    relative, floating = EXAMPLE_ROBOTS.get(name, (name, False))
    path = os.path.join(share, "example-robot-data", "robots", relative)
    if not os.path.isfile(path):
        raise ValueError(f"unknown example robot {name!r}: no {path}; choose from {sorted(EXAMPLE_ROBOTS)}")
    kwargs.setdefault("floating_base", floating)
    kwargs.setdefault("package_dirs", [share])
    return load_urdf(path, **kwargs)


def load_robot(name_or_path: str | os.PathLike[str], **kwargs: Any) -> Model:
    """A robot by name or file: the path of a URDF file, a key of DATASET_ROBOTS (dcol's own) or of
    EXAMPLE_ROBOTS (example-robot-data's), looked for in that order. Keywords go to load_urdf; a name
    gets its usual base, a file a fixed one unless floating_base=True."""
    text = os.fspath(name_or_path)
    if os.path.isfile(text):
        return load_urdf(text, **kwargs)
    if text in DATASET_ROBOTS:
        return load_dataset_robot(text, **kwargs)
    if text in EXAMPLE_ROBOTS:
        return load_example_robot(text, **kwargs)
    raise ValueError(
        f"unknown robot {text!r}: no such URDF file, and not one of dcol's robots {sorted(DATASET_ROBOTS)} "
        f"nor example-robot-data's {sorted(EXAMPLE_ROBOTS)}"
    )
