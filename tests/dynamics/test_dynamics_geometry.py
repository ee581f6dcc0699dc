"""URDF collision and visual geometry: shapes posed in their bodies, meshes resolved and loadable."""

import numpy as np
import pytest

import dcol.dynamics as dd
from dcol.geom import Box, Cylinder, Sphere, proximity


def _shapes(model, link):
    return [entry.shape for entry in model.collision_shapes if entry.link == link]


def test_box_and_cylinder_poses_of_the_double_pendulum():
    model = dd.load_dataset_robot("double_pendulum")
    (base,) = _shapes(model, "base")
    assert isinstance(base, Box) and np.allclose(base.half_extents, 0.05)
    (rod,) = _shapes(model, "link1")
    assert isinstance(rod, Cylinder) and rod.R == 0.03 and rod.L == 1.0
    # The URDF cylinder runs along the link's z from z = 0 to z = −1 (origin z = −0.5): its end faces,
    # at dcol's x = ±L/2, land there.
    ends = sorted(tuple(rod.offset_rotation @ [x, 0, 0] + rod.offset_position) for x in (-0.5, 0.5))
    assert np.allclose(ends, [[0, 0, -1.0], [0, 0, 0.0]])


def test_lumped_shapes_are_posed_in_the_body_frame():
    """The quadrotor's rotors hang on fixed joints: their discs sit where the joints put them."""
    model = dd.load_dataset_robot("quadrotor")
    assert model.nbodies == 1
    rotors = [entry for entry in model.collision_shapes if entry.link.startswith("rotor")]
    assert len(rotors) == 4 and all(entry.body == 0 for entry in rotors)
    q = dd.neutral(model)
    for entry in rotors:
        r, _ = dd.frame_placement(model, q, entry.link)
        assert np.allclose(entry.shape.offset_position, r)


def test_shapes_collide_where_the_links_are():
    """Proximity between two links' collision shapes posed by forward kinematics: the pendulum's
    two rods touch at the elbow."""
    model = dd.load_dataset_robot("double_pendulum")
    q = np.array([0.3, 1.0])
    poses = {link: dd.frame_placement(model, q, link) for link in ("link1", "link2")}
    (rod1,), (rod2,) = _shapes(model, "link1"), _shapes(model, "link2")
    result = proximity(rod1, *poses["link1"], rod2, *poses["link2"])
    assert result.alpha <= 1.0 + 1e-6
    far = dd.frame_placement(model, q, "link2")[0] + [0.0, 5.0, 0.0]
    assert proximity(rod1, *poses["link1"], Sphere(0.1), far, [1, 0, 0, 0]).alpha > 1.0


def test_meshes_of_an_example_robot_resolve_and_load():
    try:
        model = dd.load_example_robot("ur5")
    except ValueError as err:
        pytest.skip(str(err))
    meshes = [entry.shape for entry in model.collision_shapes if isinstance(entry.shape, dd.MeshGeometry)]
    assert meshes
    mesh = meshes[1].load()
    extent = mesh.bounds[1] - mesh.bounds[0]
    assert mesh.vertices.shape[0] > 10 and 0.01 < extent.max() < 1.0  # a UR5 link, in metres


def test_missing_mesh_file_names_the_link():
    urdf = """<robot name="r"><link name="base"><collision><geometry>
              <mesh filename="package://nowhere/mesh.stl"/></geometry></collision></link></robot>"""
    with pytest.raises(ValueError, match=r"link 'base'.*mesh\.stl"):
        dd.load_urdf(urdf)
    assert dd.load_urdf(urdf, geometry=False).nv == 0


def test_package_uris_resolve_through_package_dirs_then_ros_package_path(tmp_path, monkeypatch):
    """package://robot/... is looked up as DIR/robot/... in package_dirs first, then in the folders of
    ROS_PACKAGE_PATH in their order, as ROS and Pinocchio do."""
    import os
    import shutil

    source = os.path.join(os.path.dirname(dd.__file__), "..", "datasets", "meshes", "tetrahedron.stl")
    folders = {name: tmp_path / name for name in ("empty", "ros", "ros_later", "given")}
    for name in ("ros", "ros_later", "given"):
        (folders[name] / "robot" / "meshes").mkdir(parents=True)
        shutil.copy(source, folders[name] / "robot" / "meshes" / "part.stl")
    folders["empty"].mkdir()
    urdf = """<robot name="r"><link name="base"><collision><geometry>
              <mesh filename="package://robot/meshes/part.stl"/></geometry></collision></link></robot>"""

    def resolved(**kwargs):
        (entry,) = dd.load_urdf(urdf, **kwargs).collision_shapes
        return entry.shape.path

    monkeypatch.setenv("ROS_PACKAGE_PATH", os.pathsep.join(str(folders[n]) for n in ("empty", "ros", "ros_later")))
    assert resolved() == str(folders["ros"] / "robot" / "meshes" / "part.stl")
    assert resolved(package_dirs=[folders["given"]]) == str(folders["given"] / "robot" / "meshes" / "part.stl")
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    with pytest.raises(ValueError, match="pass package_dirs or set ROS_PACKAGE_PATH"):
        resolved()
