"""What dcol's results and enumerations print: one line of bounded length whatever the size of the
result, that names the status, the sizes and the numbers a reader looks for."""

import enum

import numpy as np
import pytest

import dcol
import dcol.dynamics as dd
import dcol.geom as dg
import dcol.solvers as ds

LONGEST_REPR = 500  # characters: a line or two of a terminal
IDENTITY = [1.0, 0.0, 0.0, 0.0]


def _enumerations():
    """Every enumeration the public namespaces of dcol export."""
    found = set()
    for module in (dcol.geom, dcol.solvers, dcol.dynamics):
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, enum.Enum):
                found.add(value)
    return sorted(found, key=lambda kind: kind.__name__)


def test_every_enumeration_prints_its_name_not_its_number():
    enumerations = _enumerations()
    assert {ds.Status, ds.LCPStatus, ds.ContactMode, dg.ContactRule} <= set(enumerations)
    for kind in enumerations:
        for member in kind:
            expected = f"{kind.__name__}.{member.name}"
            assert str(member) == f"{member}" == expected, (kind, member)
            assert member == member.value  # still the code the batch arrays hold


def test_proximity_result_prints_its_status_by_name():
    result = dg.proximity(dg.Sphere(1.0), [0, 0, 0], IDENTITY, dg.Sphere(1.0), [3.0, 0, 0], IDENTITY)
    expected = f"ProximityResult(alpha=1.5, distance=1, status=Status.SOLVED, iterations={result.iterations})"
    assert repr(result) == expected


def test_a_contact_set_counts_its_contacts_by_rule():
    slab, box = dg.Box([2.0, 2.0, 0.1]), dg.Box([0.3, 0.2, 0.1])
    found = dg.contacts(slab, [0, 0, 0], IDENTITY, box, [0.2, 0, 0.21], IDENTITY, margin=0.02, derivatives=True)
    assert found.rules == [dg.ContactRule.FACE_POINT] * 4
    assert repr(found) == (
        "ContactSet(4 contacts: FACE_POINT ×4, separation 0.01 to 0.01, status=Status.SOLVED, derivatives=True)"
    )
    apart = dg.contacts(slab, [0, 0, 0], IDENTITY, box, [0.2, 0, 1.0], IDENTITY)
    assert repr(apart) == "ContactSet(0 contacts, status=Status.SOLVED, derivatives=False)"


def test_a_scene_with_many_contacts_prints_in_a_bounded_line():
    scene = dg.Scene()
    scene.add_body(dg.Box([10.0, 10.0, 0.1]))
    count = 40
    for _ in range(count):
        scene.add_body(dg.Box([0.1, 0.1, 0.1]))
    r = np.zeros((count + 1, 3))
    r[1:, 0] = np.arange(count) * 0.3 - 6.0
    r[1:, 2] = 0.2
    found = scene.contacts(r, np.tile(IDENTITY, (count + 1, 1)), margin=0.01)
    assert len(found) == 4 * count
    text = repr(found)
    assert len(text) < LONGEST_REPR and text.startswith(f"SceneContacts({4 * count} contacts: FACE_POINT ×")


@pytest.mark.parametrize("n", [2, ds.cone.MAX_VARIABLES])
def test_solutions_print_their_status_and_counts_not_their_arrays(n):
    """Bounded whatever the problem's size; the status by name and the scalars by value."""
    cone = ds.solve_cone_program(np.ones(n), -np.eye(n), np.zeros(n), {"l": n, "q": []})
    text = repr(cone)
    assert len(text) < LONGEST_REPR and "status=Status.SOLVED" in text and f"iterations={cone.iterations}" in text
    n *= 10  # the mixed LCP has no size limit
    mlcp = ds.solve_mlcp(np.eye(n), -np.ones(n), np.zeros((0, n)), np.zeros((0, 0)), np.zeros(0))
    text = repr(mlcp)
    assert len(text) < LONGEST_REPR and "status=LCPStatus.SOLVED" in text
    assert f"x=<float64 ({n},)>" in text
    A = np.eye(n) + 0.1 * np.ones((n, n))
    lcp = ds.solve_lcp(A, -np.ones(n))
    text = repr(lcp)
    assert len(text) < LONGEST_REPR and "status=LCPStatus.SOLVED" in text and f"f=<float64 ({n},)>" in text
    assert f"bounds=LCPBounds(lo=<float64 ({n},)>" in text
    ncp = ds.solve_contact_ncp(np.eye(3 * n), np.tile([0.0, 0.0, -1.0], n), 0.5)
    text = repr(ncp)
    assert len(text) < LONGEST_REPR and "status=LCPStatus.SOLVED" in text and f"modes=<int8 ({n},)>" in text


def test_batch_results_print_their_arrays_by_shape():
    n = 1000
    r_b = np.tile([3.0, 0.0, 0.0], (n, 1))
    identities = np.tile(IDENTITY, (n, 1))
    ball = dg.Sphere(1.0)
    for result in (
        dg.proximity_batch(ball, np.zeros((n, 3)), identities, ball, r_b, identities),
        dg.proximity_jacobian_batch(ball, np.zeros((n, 3)), identities, ball, r_b, identities),
        dg.signed_distance_batch(ball, np.zeros((n, 3)), identities, ball, r_b, identities),
    ):
        text = repr(result)
        assert len(text) < LONGEST_REPR and f"alpha=<float64 ({n},)>" in text and f"status=<int8 ({n},)>" in text


def test_single_results_print_their_scalars_and_small_arrays_by_value():
    ball = dg.Sphere(1.0)
    pair = (ball, [0, 0, 0], IDENTITY, ball, [3.0, 0, 0], IDENTITY)
    distance = dg.signed_distance(*pair)
    expected_start = "DistanceResult(distance=1, p_a=[1, 0, 0], p_b=[2, 0, 0], normal=[1, 0, 0]"
    assert repr(distance).startswith(expected_start)
    assert repr(distance).endswith(f"status=Status.SOLVED, iterations={distance.iterations})")
    jacobian = dg.proximity_jacobian(*pair)
    assert "jacobian=<float64 (4, 14)>" in repr(jacobian) and "status=Status.SOLVED" in repr(jacobian)


def test_a_model_prints_its_name_sizes_and_joints():
    cartpole = dd.load_dataset_robot("cartpole")
    assert repr(cartpole) == "Model('cartpole', nq=2, nv=2, nbodies=2, joints: slider (prismatic), hinge (revolute))"
    builder = dd.ModelBuilder(name="chain")
    parent = None
    for i in range(50):
        builder.add_body(f"link{i}", parent=parent, joint=f"joint{i}", kind="revolute", mass=1.0, inertia=np.eye(3))
        parent = f"link{i}"
    text = repr(builder.build())
    assert len(text) < LONGEST_REPR
    assert text.startswith("Model('chain', nq=50, nv=50, nbodies=50, joints: joint0 (revolute), joint1 (revolute)")
    assert text.endswith(", …, joint49 (revolute))")
    with pytest.raises(TypeError, match="name must be a str, got int"):
        dd.ModelBuilder(name=3)
