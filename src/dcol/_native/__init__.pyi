"""
Native core of dcol: cone solver, DCOL proximity, rigid-body dynamics, LCP solvers.
"""
from __future__ import annotations
import collections.abc
import enum
import numpy
import numpy.typing
import typing
from . import lcp
from . import dynamics
from . import planar
__all__: list[str] = ['CONE_MAX_CONES', 'CONE_MAX_ROWS', 'CONE_MAX_VARIABLES', 'ContactRule', 'MAX_FACES', 'ProximityResult', 'Shape', 'SolverSettings', 'Status', 'broadphase', 'contacts', 'distance_batch', 'dynamics', 'gjk_alpha', 'gjk_distance', 'gjk_distance_jacobian', 'lcp', 'orientation_array', 'planar', 'proximity', 'proximity_batch', 'proximity_derivatives', 'proximity_kernel_info', 'proximity_result_from_state', 'rotation_matrix', 'scene_contacts', 'shape_parameter_jacobian', 'solve_cone_program', 'support']
class Status(enum.IntEnum):
    """
    Outcome of an interior-point solve; SMOOTHED: exact proximity derivatives were asked for where none exists, and the smoothed ones are given (dcol.geom.derivatives).
    """
    MAX_ITERATIONS = ...
    NUMERICAL_ERROR = ...
    SMOOTHED = ...
    SOLVED = ...
    SOLVED_INACCURATE = ...
    @classmethod
    def __new__(cls, value):
        ...
    def __format__(self, format_spec):
        ...
    def __str__(self):
        ...
class SolverSettings:
    max_iter: int
    def __getstate__(self) -> tuple[float, float, float, int, float, float]:
        ...
    def __init__(self, feastol: typing.SupportsFloat | typing.SupportsIndex = 1e-09, abstol: typing.SupportsFloat | typing.SupportsIndex = 1e-08, reltol: typing.SupportsFloat | typing.SupportsIndex = 1e-08, max_iter: int = 50, barrier: typing.SupportsFloat | typing.SupportsIndex = 0.0, centrality_tol: typing.SupportsFloat | typing.SupportsIndex = 0.01) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: tuple) -> None:
        ...
    @property
    def abstol(self) -> float:
        ...
    @abstol.setter
    def abstol(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def barrier(self) -> float:
        ...
    @barrier.setter
    def barrier(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def centrality_tol(self) -> float:
        ...
    @centrality_tol.setter
    def centrality_tol(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def feastol(self) -> float:
        ...
    @feastol.setter
    def feastol(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    @property
    def reltol(self) -> float:
        ...
    @reltol.setter
    def reltol(self, arg1: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class Shape:
    @staticmethod
    def capsule(arg0: typing.SupportsFloat | typing.SupportsIndex, arg1: typing.SupportsFloat | typing.SupportsIndex) -> Shape:
        ...
    @staticmethod
    def cone(arg0: typing.SupportsFloat | typing.SupportsIndex, arg1: typing.SupportsFloat | typing.SupportsIndex) -> Shape:
        ...
    @staticmethod
    def cylinder(arg0: typing.SupportsFloat | typing.SupportsIndex, arg1: typing.SupportsFloat | typing.SupportsIndex) -> Shape:
        ...
    @staticmethod
    def ellipsoid(arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> Shape:
        ...
    @staticmethod
    def polygon(arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], arg2: typing.SupportsFloat | typing.SupportsIndex, arg3: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> Shape:
        ...
    @staticmethod
    def polytope(arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> Shape:
        ...
    @staticmethod
    def sphere(arg0: typing.SupportsFloat | typing.SupportsIndex) -> Shape:
        ...
    def set_frame(self, arg0: typing.SupportsFloat | typing.SupportsIndex, arg1: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], arg2: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
class ProximityResult:
    """
    Result of dcol.geom.proximity (DCOL §III).
    """
    @property
    def alpha(self) -> float:
        """minimum uniform scaling α"""
    @property
    def converged(self) -> bool:
        """status is SOLVED"""
    @property
    def distance(self) -> float:
        """‖p_a − p_b‖, DCOL eq. 30"""
    @property
    def iterations(self) -> int:
        """interior-point iterations"""
    @property
    def normal(self) -> numpy.typing.NDArray[numpy.float64]:
        """(3,) unit normal of the separating plane at x, from a to b (zero when α = 0)"""
    @property
    def p_a(self) -> numpy.typing.NDArray[numpy.float64]:
        """(3,) contact point on shape a, DCOL eq. 29"""
    @property
    def p_b(self) -> numpy.typing.NDArray[numpy.float64]:
        """(3,) contact point on shape b, DCOL eq. 29"""
    @property
    def status(self) -> Status:
        """the outcome of the solve"""
    @property
    def x(self) -> numpy.typing.NDArray[numpy.float64]:
        """(3,) intersection point of the scaled shapes, world frame"""
    @staticmethod
    def __reduce__(*args, **kwargs):
        """
        Pickles the result as its fields.
        """
    def __repr__(self):
        """
        Return repr(self).
        """
class ContactRule(enum.IntEnum):
    """
    How a contact's point and normal are defined.
    """
    DISTANCE = ...
    EDGE_EDGE = ...
    EDGE_POINT = ...
    FACE_POINT = ...
    POINT_EDGE = ...
    POINT_FACE = ...
    POINT_POINT = ...
    @classmethod
    def __new__(cls, value):
        ...
    def __format__(self, format_spec):
        ...
    def __str__(self):
        ...
def broadphase(shapes: typing.Any, body: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], r: typing.Any, q: typing.Any, margin: typing.SupportsFloat | typing.SupportsIndex) -> tuple:
    ...
def contacts(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any, margin: typing.SupportsFloat | typing.SupportsIndex, feature_tolerance: typing.SupportsFloat | typing.SupportsIndex, derivatives: bool, settings: SolverSettings) -> dict:
    ...
def distance_batch(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any, settings: SolverSettings, threads: typing.SupportsInt | typing.SupportsIndex, jacobian: bool, parameterization: str) -> dict:
    ...
def gjk_alpha(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any) -> typing.Any:
    """
    DCOL's alpha of two polytopes, spheres, capsules or polygons by a GJK ray cast, with its derivatives
    along rigid motions [dp_a, dtheta_a, dp_b, dtheta_b] (d_alpha (12,)) and the ray cast's iterations;
    None for other shapes or where it cannot answer.
    """
def gjk_distance(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any) -> dict:
    """
    Signed distance, witness points and normal (from a to b) of two shapes by GJK (apart) and EPA
    (overlapping: the minimum translation distance), cylinders, cones and ellipsoids by their support
    functions to a tolerance, and whether it converged (not for overlapping flat cores, such as two
    capsules).
    """
def gjk_distance_jacobian(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any) -> typing.Any:
    """
    Signed distance (GJK/EPA) and DCOL's alpha (by a GJK ray cast) of two polytopes, spheres,
    capsules or polygons, with their derivatives along rigid motions [dp_a, dtheta_a, dp_b, dtheta_b]
    (d_alpha, d_distance (12,), d_p_a, d_p_b, d_normal (3, 12)); None where GJK/EPA cannot answer.
    """
def orientation_array(q: typing.Any, name: str) -> numpy.typing.NDArray[numpy.float64]:
    """
    q as a float64 array, a scipy Rotation as its quaternions [w, x, y, z]; shape and values unchecked.
    """
def proximity(a, r_a, q_a, b, r_b, q_b, *, settings = None):
    """
    Minimum scaling α of shapes a and b at their body poses, with contact information.
    
    Parameters
    ----------
    a, b : dcol.geom shapes.
    r_a, r_b : (3,) body positions.
    q_a, q_b : (4,) quaternions ``[w, x, y, z]`` (any nonzero norm) or (3, 3) rotation matrices.
    settings : dcol.solvers.SolverSettings, optional tolerances and iteration limit.
    
    Returns
    -------
    ProximityResult with ``alpha`` (float), ``x`` (3,), ``p_a`` (3,), ``p_b`` (3,),
    ``distance`` (float, DCOL eq. 30: ‖p_a − p_b‖, measured along the line of the origins and positive
    under penetration too, so not a signed distance: use α to tell penetration),
    ``normal`` (3,) unit vector from a to b (zero when α = 0),
    ``status`` (dcol.solvers.Status), ``iterations`` (int), ``converged`` (bool).
    Outputs are always finite; a solve that did not converge says so in ``status``.
    """
def proximity_batch(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any, settings: SolverSettings, threads: typing.SupportsInt | typing.SupportsIndex, request: typing.SupportsInt | typing.SupportsIndex = 0, parameterization: str = 'rigid') -> dict:
    ...
def proximity_derivatives(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any, settings: SolverSettings, request: typing.SupportsInt | typing.SupportsIndex, parameterization: str) -> tuple:
    ...
def proximity_kernel_info() -> tuple[str, int]:
    """
    (name, lanes) of the proximity kernels this processor runs: the instruction sets they are compiled for and how many pose pairs a batch solves at once.
    """
def proximity_result_from_state(state: tuple) -> typing.Any:
    """
    The ProximityResult of a pickled state (ProximityResult.__reduce__).
    """
def rotation_matrix(q: typing.Any, name: str) -> numpy.typing.NDArray[numpy.float64]:
    ...
def scene_contacts(shapes: typing.Any, body: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], r: typing.Any, q: typing.Any, pairs: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], margin: typing.SupportsFloat | typing.SupportsIndex, feature_tolerance: typing.SupportsFloat | typing.SupportsIndex, derivatives: bool, settings: SolverSettings, threads: typing.SupportsInt | typing.SupportsIndex) -> dict:
    ...
def shape_parameter_jacobian(a: typing.Any, r_a: typing.Any, q_a: typing.Any, b: typing.Any, r_b: typing.Any, q_b: typing.Any, settings: SolverSettings) -> dict:
    ...
def solve_cone_program(c: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], G: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], h: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], l: typing.SupportsInt | typing.SupportsIndex, soc_dims: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], settings: SolverSettings) -> tuple:
    ...
def support(shape: typing.Any, r: typing.Any, q: typing.Any, direction: typing.Any) -> numpy.typing.NDArray[numpy.float64]:
    ...
CONE_MAX_CONES: int = 64
CONE_MAX_ROWS: int = 256
CONE_MAX_VARIABLES: int = 32
MAX_FACES: int = 500
