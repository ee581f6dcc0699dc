"""One status type and Python scalars on every single-pair result: a status is a member of
dcol.solvers.Status (or LCPStatus for the complementarity solvers), α, distances and residuals are
floats and iteration counts ints; batch results keep arrays (codes as int8)."""

import numpy as np
import pytest

import dcol.geom as dg
import dcol.solvers as ds

BOX = dg.Box([0.5, 0.3, 0.2])
IDENTITY = [1.0, 0.0, 0.0, 0.0]
PAIR = (BOX, [0.0, 0.0, 0.0], IDENTITY, BOX, [1.2, 0.1, 0.0], IDENTITY)

SINGLE = {
    "proximity": lambda: dg.proximity(*PAIR),
    "proximity_jacobian": lambda: dg.proximity_jacobian(*PAIR),
    "proximity_gradient": lambda: dg.proximity_gradient(*PAIR),
    "contact_jacobian": lambda: dg.contact_jacobian(*PAIR),
    "signed_distance": lambda: dg.signed_distance(*PAIR),
    "distance_jacobian": lambda: dg.distance_jacobian(*PAIR),
    "contacts": lambda: dg.contacts(*PAIR, margin=1.0),
    "solve_cone_program": lambda: ds.solve_cone_program([1.0, 1.0], -np.eye(2), [0.0, 0.0], {"l": 2, "q": []}),
    "solve_lcp": lambda: ds.solve_lcp(np.eye(2), -np.ones(2)),
    "solve_contact_ncp": lambda: ds.solve_contact_ncp(np.eye(3), np.array([0.0, 0.0, -1.0]), np.array([0.5])),
}


@pytest.mark.parametrize("name", sorted(SINGLE))
def test_single_results_carry_the_status_enum_and_python_scalars(name):
    result = SINGLE[name]()
    assert type(result.status) in (ds.Status, ds.LCPStatus), type(result.status)
    assert result.status.name == "SOLVED"
    for field in ("alpha", "distance", "residual"):
        if hasattr(result, field):
            assert type(getattr(result, field)) is float, field
    if hasattr(result, "iterations"):
        assert type(result.iterations) is int


def test_the_distance_of_one_pair_is_its_batch_of_one():
    single = dg.signed_distance(*PAIR)
    a, r_a, q_a, b, r_b, q_b = PAIR
    batch = dg.signed_distance_batch(a, [r_a], [q_a], b, [r_b], [q_b])
    assert batch.status.dtype == np.int8 and batch.distance.shape == (1,)
    assert single.distance == batch.distance[0] and single.status == batch.status[0]
    np.testing.assert_array_equal(single.p_a, batch.p_a[0])
