// GJK and EPA on the cores of two shapes (gjk.hpp).
#include "geometry/gjk.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <type_traits>

#include "core/dual.hpp"
#include "geometry/support.hpp"

namespace dcol::geometry {

namespace {

using Vec3 = Vec3T<double>;

// A point of the Minkowski difference, w = p_a − p_b, with the points of the two cores it came from and
// their indices among the cores' points (−1 for a round core's support point).
struct SupportPoint {
  Vec3 w, pa, pb;
  int ia = -1, ib = -1;
};

inline bool same(const Vec3& p, const Vec3& q) { return p[0] == q[0] && p[1] == q[1] && p[2] == q[2]; }

// The two cores' points in coordinates centred between the shapes and scaled by a power of two near
// their spread (their frames' distance or their own size, the larger), so that squared lengths
// neither overflow for shapes 10¹⁵⁵ m apart nor lose the shapes to the size of their coordinates.
struct VertexSets {
  const Core& core_a;
  const Core& core_b;
  double center[3];
  double scale;

  VertexSets(const Core& a, const Core& b) : core_a(a), core_b(b) {
    double spread = 0.0;
    for (int k = 0; k < 3; ++k) {
      center[k] = 0.5 * a.frame.r[k] + 0.5 * b.frame.r[k];
      spread = std::max(spread, std::abs(0.5 * a.frame.r[k] - 0.5 * b.frame.r[k]));
    }
    for (const Core* c : {&a, &b}) {
      if (c->adjacency)
        spread = std::max(spread, c->adjacency->coordinate_bound);
      else
        for (int i = 0; i < c->count * c->dim; ++i) spread = std::max(spread, std::abs(c->points()[i]));
      if (c->round) spread = std::max(spread, c->round->length_scale);
    }
    scale = spread > 0.0 ? std::ldexp(1.0, std::ilogb(spread)) : 1.0;
  }

  Vec3 world(const Core& c, int i) const {
    const double* v = c.points() + c.dim * i;
    const double y[3] = {v[0], v[1], c.dim == 3 ? v[2] : 0.0};
    return world_of(c, y);
  }
  // The world point (in these coordinates) of the point y of the core's frame.
  Vec3 world_of(const Core& c, const double* y) const {
    Vec3 out;
    for (int k = 0; k < 3; ++k)
      out[k] = (c.frame.r[k] - center[k]) / scale +
               (c.frame.Q.m[k][0] * y[0] + c.frame.Q.m[k][1] * y[1] + c.frame.Q.m[k][2] * y[2]) / scale;
    return out;
  }
  // The vertex of a polytope with adjacency farthest along the shape-frame direction `local` by hill climbing
  // from its cell's vertex (vertex_adjacency.hpp), or −1 where the climb ends at a vertex that is not a corner.
  static int climb(const Core& c, const double* local) {
    const VertexAdjacency& graph = *c.adjacency;
    const double* v = c.points();
    int best = graph.cell_support[direction_cell(local)];
    double best_value = local[0] * v[3 * best] + local[1] * v[3 * best + 1] + local[2] * v[3 * best + 2];
    // Tied vertices (a face or an edge normal to the direction) share a face, so are each other's neighbours:
    // the last pass, around the top, finds the first of them, as the scan takes it, whatever way the climb came.
    int first_tied = best;
    for (int from = -1; from != best;) {
      from = best, first_tied = best;
      for (int k = graph.start[from]; k < graph.start[from + 1]; ++k) {
        const int j = graph.neighbours[k];
        const double* w = v + 3 * j;
        const double h = local[0] * w[0] + local[1] * w[1] + local[2] * w[2];
        if (h > best_value)
          best_value = h, best = first_tied = j;
        else if (h == best_value && j < first_tied)
          first_tied = j;
      }
    }
    best = first_tied;
    return graph.climbable[best] ? best : -1;
  }
  // Index of the core point farthest along the world direction d.
  static int farthest(const Core& c, const Vec3& d) {
    const Pose& f = c.frame;
    double local[3];
    for (int j = 0; j < 3; ++j) local[j] = f.Q.m[0][j] * d[0] + f.Q.m[1][j] * d[1] + f.Q.m[2][j] * d[2];
    const double* v = c.points();
    if (c.adjacency) {
      const int climbed = climb(c, local);
      if (climbed >= 0) return climbed;
    }
    int best = 0;
    double best_value = -INFINITY;
    // The two point dimensions apart, so that the inner product is unrolled (the hot loop of GJK on meshes).
    if (c.dim == 3) {
      for (int i = 0; i < c.count; ++i, v += 3) {
        const double h = local[0] * v[0] + local[1] * v[1] + local[2] * v[2];
        if (h > best_value) best_value = h, best = i;
      }
    } else {
      for (int i = 0; i < c.count; ++i, v += 2) {
        const double h = local[0] * v[0] + local[1] * v[1];
        if (h > best_value) best_value = h, best = i;
      }
    }
    return best;
  }
  // The core's point farthest along the world direction d: a vertex, or a round shape's support point.
  Vec3 support_of(const Core& c, const Vec3& d) const {
    if (!c.round) return world(c, farthest(c, d));
    double local[3], y[3];
    for (int j = 0; j < 3; ++j)
      local[j] = c.frame.Q.m[0][j] * d[0] + c.frame.Q.m[1][j] * d[1] + c.frame.Q.m[2][j] * d[2];
    detail::body_support(*c.round, local, y);
    return world_of(c, y);
  }
  // A point inside the core: its first point, or a round shape's centre.
  Vec3 inner(const Core& c) const {
    const double origin[3] = {0.0, 0.0, 0.0};
    return c.round ? world_of(c, origin) : world(c, 0);
  }

  // M's farthest point along d: a's farthest along d minus b's farthest along −d.
  SupportPoint support(const Vec3& d) const {
    const int ia = core_a.round ? -1 : farthest(core_a, d), ib = core_b.round ? -1 : farthest(core_b, -1.0 * d);
    const Vec3 pa = ia >= 0 ? world(core_a, ia) : support_of(core_a, d);
    const Vec3 pb = ib >= 0 ? world(core_b, ib) : support_of(core_b, -1.0 * d);
    return {pa - pb, pa, pb, ia, ib};
  }
  // The support point of M made of the cores' points ia and ib.
  SupportPoint pair(int ia, int ib) const {
    const Vec3 pa = world(core_a, ia), pb = world(core_b, ib);
    return {pa - pb, pa, pb, ia, ib};
  }

  // A round core's support point p (these coordinates) in the core's shape frame.
  void local_of(const Core& c, const Vec3& p, double* y) const {
    double offset[3];
    for (int k = 0; k < 3; ++k) offset[k] = scale * p[k] + center[k] - c.frame.r[k];
    for (int j = 0; j < 3; ++j)
      y[j] = c.frame.Q.m[0][j] * offset[0] + c.frame.Q.m[1][j] * offset[1] + c.frame.Q.m[2][j] * offset[2];
  }

  // The witness points of barycentric weights on support points.
  void witnesses(const SupportPoint* s, const double* weight, int n, double* p_a, double* p_b) const {
    Vec3 pa{{0.0, 0.0, 0.0}}, pb{{0.0, 0.0, 0.0}};
    for (int k = 0; k < n; ++k) {
      pa = pa + weight[k] * s[k].pa;
      pb = pb + weight[k] * s[k].pb;
    }
    for (int i = 0; i < 3; ++i) p_a[i] = pa[i], p_b[i] = pb[i];
  }
};

// A sub-simplex of up to 4 points as a mask: its size and its points' indices in ascending order.
struct SubSimplex {
  int size = 0;
  int index[4] = {0, 0, 0, 0};
};
constexpr std::array<SubSimplex, 16> sub_simplices() {
  std::array<SubSimplex, 16> table{};
  for (int mask = 0; mask < 16; ++mask)
    for (int i = 0; i < 4; ++i)
      if (mask & (1 << i)) table[mask].index[table[mask].size++] = i;
  return table;
}
constexpr std::array<SubSimplex, 16> kSubSimplices = sub_simplices();

// The barycentric weights w (K of them) of the origin's projection onto the affine hull of the sub-simplex whose
// points are `index` (ascending), from closest_on_simplex's shared products: x = p0 + Σ t_i (p_i − p0) closest to
// the origin, (EᵀE) t = −Eᵀ p0, by elimination with pivoting; false where the sub-simplex is degenerate.
template <int K>
bool affine_weights(const double (*gram)[4][4], const double (*moment)[4], const int* index, double* w) {
  const int lowest = index[0];
  double G[3][4], scale = 0.0;
  for (int r = 0; r + 1 < K; ++r) {
    for (int c = 0; c + 1 < K; ++c) G[r][c] = gram[lowest][index[r + 1]][index[c + 1]];
    G[r][K - 1] = moment[lowest][index[r + 1]];
    scale = std::max(scale, G[r][r]);
  }
  for (int c = 0; c + 1 < K; ++c) {
    int pivot = c;
    for (int r = c + 1; r + 1 < K; ++r)
      if (std::abs(G[r][c]) > std::abs(G[pivot][c])) pivot = r;
    if (pivot != c) std::swap(G[c], G[pivot]);
    if (std::abs(G[c][c]) <= 1e-13 * scale) return false;
    for (int r = 0; r + 1 < K; ++r) {
      if (r == c) continue;
      const double f = G[r][c] / G[c][c];
      for (int j = c; j < K; ++j) G[r][j] -= f * G[c][j];
    }
  }
  double first = 1.0;
  for (int r = 0; r + 1 < K; ++r) first -= (w[r + 1] = G[r][K - 1] / G[r][r]);
  w[0] = first;
  return true;
}

// Barycentric weights of the point of the hull of simplex s (n ≤ 4 points) closest to the origin;
// false if only the full simplex holds it (the origin inside a tetrahedron, or on the hull of a
// lower one). Every sub-simplex is tried: the closest point is the projection of the origin onto the
// affine hull of the face whose relative interior holds it, the one of least norm among those whose
// weights are all nonnegative. Degenerate sub-simplices are skipped (their points lie on a smaller one).
// With `required` (a mask of points) only the sub-simplices holding those points are tried; where none of them
// qualifies, `closest` stays as given and the weights are 0.
bool closest_on_simplex(const SupportPoint* s, int n, double* weight, Vec3& closest, int required = 0) {
  double best = INFINITY;
  int best_mask = 0;
  double best_weight[4] = {0, 0, 0, 0};
  // The sub-simplices' normal equations below from products shared between them: with p_i a sub-simplex's first
  // point, gram[i][j][l] = (p_j − p_i)·(p_l − p_i) and moment[i][j] = −(p_j − p_i)·p_i (j, l > i).
  double gram[3][4][4], moment[3][4];
  for (int i = 0; i + 1 < n; ++i) {
    Vec3 edge[4];
    for (int j = i + 1; j < n; ++j) {
      edge[j] = s[j].w - s[i].w;
      moment[i][j] = -dot(edge[j], s[i].w);
      for (int l = i + 1; l <= j; ++l) gram[i][j][l] = gram[i][l][j] = dot(edge[j], edge[l]);
    }
  }
  for (int mask = 1; mask < (1 << n); ++mask) {
    if ((mask & required) != required) continue;
    const int k = kSubSimplices[mask].size;
    const int* index = kSubSimplices[mask].index;
    double w[4];
    bool solved = false;
    switch (k) {  // the size a constant of each solve, whose loops the compiler unrolls
      case 1:
        solved = affine_weights<1>(gram, moment, index, w);
        break;
      case 2:
        solved = affine_weights<2>(gram, moment, index, w);
        break;
      case 3:
        solved = affine_weights<3>(gram, moment, index, w);
        break;
      default:
        solved = affine_weights<4>(gram, moment, index, w);
        break;
    }
    if (!solved) continue;
    if (std::any_of(w, w + k, [](double x) { return x < 0.0; })) continue;
    Vec3 x{{0.0, 0.0, 0.0}};
    for (int i = 0; i < k; ++i) x = x + w[i] * s[index[i]].w;
    const double d2 = dot(x, x);
    if (d2 < best) {
      best = d2, best_mask = mask, closest = x;
      for (int i = 0; i < 4; ++i) best_weight[i] = 0.0;
      for (int i = 0; i < k; ++i) best_weight[index[i]] = w[i];
    }
  }
  for (int i = 0; i < n; ++i) weight[i] = best_weight[i];
  return best_mask != (1 << n) - 1 || n < 4;
}

// Keeps the points of s with positive weight.
int drop_unused(SupportPoint* s, double* weight, int n) {
  int kept = 0;
  for (int i = 0; i < n; ++i)
    if (weight[i] > 0.0) s[kept] = s[i], weight[kept++] = weight[i];
  return kept;
}

// Keeps the final simplex's core point indices in out, for the derivatives and for a warm start, and round
// cores' support points, for refine_round_distance.
void record_simplex(const VertexSets& sets, const SupportPoint* s, int n, GjkDistance& out) {
  out.simplex_size = n;
  for (int k = 0; k < n; ++k) {
    out.vertex_a[k] = s[k].ia, out.vertex_b[k] = s[k].ib;
    if (sets.core_a.round) sets.local_of(sets.core_a, s[k].pa, out.round_a[k]);
    if (sets.core_b.round) sets.local_of(sets.core_b, s[k].pb, out.round_b[k]);
  }
}

constexpr int kMaxGjkIterations = 64;
// A round core's support points are no finite set: GJK and EPA approach its surface and stop when a
// step gains less than kRoundGjkTolerance of the distance (GJK) or kRoundEpaTolerance of M's extent
// (EPA, whose polytope needs many more points on a curved surface than GJK's simplex).
constexpr double kRoundGjkTolerance = 1e-10, kRoundEpaTolerance = 1e-8;
constexpr int kMaxEpaPoints = 128;
constexpr int kMaxEpaFaces = 2 * kMaxEpaPoints;

struct EpaFace {
  int v[3];
  Vec3 normal;      // outward unit normal
  double distance;  // of its plane from the origin (≥ 0 with the origin inside)
};

// Grows a tetrahedron (whose closed hull holds the origin) to M's face nearest the origin.
void expanding_polytope(const VertexSets& sets, const SupportPoint* tetrahedron, double tiny, GjkDistance& out) {
  SupportPoint points[kMaxEpaPoints];
  EpaFace faces[kMaxEpaFaces];
  int num_points = 4, num_faces = 0;
  std::copy(tetrahedron, tetrahedron + 4, points);
  auto make_face = [&](int i, int j, int k) {
    EpaFace f{{i, j, k}, cross(points[j].w - points[i].w, points[k].w - points[i].w), INFINITY};
    const double area = norm(f.normal);
    if (area > 0.0) {
      f.normal = (1.0 / area) * f.normal;
      f.distance = std::max(dot(f.normal, points[i].w), 0.0);  // the origin on a face: rounding below 0
    }
    faces[num_faces++] = f;
  };
  const Vec3 centroid = 0.25 * (points[0].w + points[1].w + points[2].w + points[3].w);
  const int corners[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 3, 2}};
  const bool flip = dot(cross(points[1].w - points[0].w, points[2].w - points[0].w), centroid - points[0].w) > 0.0;
  for (const auto& c : corners) flip ? make_face(c[0], c[2], c[1]) : make_face(c[0], c[1], c[2]);

  // The origin's projection onto a face, in barycentric weights of its corners: the witnesses.
  auto finish = [&](const EpaFace& face, bool converged) {
    const SupportPoint s[3] = {points[face.v[0]], points[face.v[1]], points[face.v[2]]};
    const Vec3 q = face.distance * face.normal;
    const Vec3 n = cross(s[1].w - s[0].w, s[2].w - s[0].w);
    const double inv = 1.0 / dot(n, n);
    double weight[3];
    weight[1] = dot(cross(q - s[0].w, s[2].w - s[0].w), n) * inv;
    weight[2] = dot(cross(s[1].w - s[0].w, q - s[0].w), n) * inv;
    weight[0] = 1.0 - weight[1] - weight[2];
    sets.witnesses(s, weight, 3, out.p_a, out.p_b);
    for (int i = 0; i < 3; ++i) out.normal[i] = face.normal[i];
    out.distance = -face.distance;
    out.converged = converged;
    record_simplex(sets, s, 3, out);
  };
  int edges[3 * kMaxEpaFaces][2];
  bool visible[kMaxEpaFaces];
  for (;;) {
    int nearest = 0;
    for (int f = 1; f < num_faces; ++f)
      if (faces[f].distance < faces[nearest].distance) nearest = f;
    const SupportPoint w = sets.support(faces[nearest].normal);
    if (dot(w.w, faces[nearest].normal) - faces[nearest].distance <= tiny) return finish(faces[nearest], true);
    if (num_points == kMaxEpaPoints) return finish(faces[nearest], false);
    // Faces that see w go; the horizon (their edges not shared between two of them) is closed by
    // triangles to w, which keep the faces' outward orientation. Degenerate faces always go.
    points[num_points] = w;
    int num_edges = 0, kept = 0;
    for (int f = 0; f < num_faces; ++f) {
      const EpaFace& g = faces[f];
      visible[f] = g.distance == INFINITY || dot(g.normal, w.w - points[g.v[0]].w) > tiny;
      if (!visible[f]) {
        ++kept;
        continue;
      }
      for (int e = 0; e < 3; ++e) {
        const int u = g.v[e], v = g.v[(e + 1) % 3];
        int shared = -1;
        for (int k = 0; k < num_edges && shared < 0; ++k)
          if (edges[k][0] == v && edges[k][1] == u) shared = k;
        if (shared >= 0) {
          edges[shared][0] = edges[num_edges - 1][0], edges[shared][1] = edges[num_edges - 1][1];
          --num_edges;
        } else {
          edges[num_edges][0] = u, edges[num_edges][1] = v, ++num_edges;
        }
      }
    }
    if (kept + num_edges > kMaxEpaFaces) return finish(faces[nearest], false);
    kept = 0;
    for (int f = 0; f < num_faces; ++f)
      if (!visible[f]) faces[kept++] = faces[f];
    num_faces = kept;
    for (int k = 0; k < num_edges; ++k) make_face(edges[k][0], edges[k][1], num_points);
    ++num_points;
  }
}

// The simplex a previous solve ended on (GjkDistance's vertices), at the sets' poses, reduced to its
// sub-simplex nearest the origin: its size (0 where it has no point or none off a degenerate hull),
// with the weights and the nearest point v.
int warm_simplex(const VertexSets& sets, int size, const int* vertex_a, const int* vertex_b, SupportPoint* simplex,
                 double* weight, Vec3& v) {
  for (int k = 0; k < size; ++k) simplex[k] = sets.pair(vertex_a[k], vertex_b[k]);
  if (size == 0 || size == 4 || !closest_on_simplex(simplex, size, weight, v)) return 0;
  return drop_unused(simplex, weight, size);
}

// The signed distance of the cores (radii left out), in the sets' coordinates, GJK starting from the
// simplex of `previous` if given (the same cores at nearby poses, whose features are likely the same);
// `extent` (world units), if positive, is M's (GjkDistance::extent), else it is measured.
void core_distance(const VertexSets& sets, GjkDistance& out, const GjkDistance* previous, double extent) {
  int warm_size = 0, warm_a[4], warm_b[4];
  const bool round = sets.core_a.round || sets.core_b.round;
  if (previous && previous->converged && !round) {  // a round core's support points have no index
    warm_size = previous->simplex_size;
    std::copy_n(previous->vertex_a, 4, warm_a);
    std::copy_n(previous->vertex_b, 4, warm_b);
  }
  out = GjkDistance{};
  // Rounding scale: the extent of M.
  extent /= sets.scale;
  if (!(extent > 0.0))
    for (int axis = 0; axis < 3; ++axis) {
      Vec3 u{{0.0, 0.0, 0.0}};
      u[axis] = 1.0;
      extent = std::max(extent, dot(sets.support(u).w - sets.support(-1.0 * u).w, u));
    }
  out.extent = extent;
  const double tiny = 1e-13 * extent;
  const double gjk_tolerance = round ? kRoundGjkTolerance : 1e-12;
  const double epa_tolerance = round ? kRoundEpaTolerance * extent : tiny;

  SupportPoint simplex[4];
  double weight[4] = {1.0, 0.0, 0.0, 0.0};
  Vec3 v;
  int n = warm_simplex(sets, warm_size, warm_a, warm_b, simplex, weight, v);
  if (n == 0) {
    simplex[0] = sets.support(sets.inner(sets.core_a) - sets.inner(sets.core_b));
    weight[0] = 1.0;
    n = 1;
    v = simplex[0].w;
  }
  bool inside = false, converged = false;
  for (int iteration = 0; iteration < kMaxGjkIterations; ++iteration) {
    if (norm(v) <= tiny) {  // touching or overlapping: the origin on the simplex
      inside = true;
      break;
    }
    const SupportPoint w = sets.support(-1.0 * v);
    // No support point beyond the plane through v, to rounding: v is M's point closest to the origin.
    const bool repeated =
        std::any_of(simplex, simplex + n, [&](const SupportPoint& s) { return same(s.pa, w.pa) && same(s.pb, w.pb); });
    if (repeated || dot(v, v) - dot(v, w.w) <= gjk_tolerance * dot(v, v)) {
      converged = true;
      break;
    }
    SupportPoint next[4];
    double next_weight[4];
    Vec3 next_v = v;
    std::copy(simplex, simplex + n, next);
    next[n] = w;
    // Only the sub-simplices holding w: the others are the simplex's own, whose nearest point to the origin is
    // v (they were all tried when v was found, by the same arithmetic), so they cannot shorten v; where none
    // holding w does either, next_v stays v and the step ends GJK below, as one of them would have.
    if (!closest_on_simplex(next, n + 1, next_weight, next_v, 1 << n)) {
      std::copy(next, next + n + 1, simplex);
      ++n;
      inside = true;
      break;
    }
    // A step that does not shorten v has reached rounding: the last simplex stays.
    if (dot(next_v, next_v) >= dot(v, v)) {
      converged = true;
      break;
    }
    std::copy(next, next + n + 1, simplex);
    std::copy(next_weight, next_weight + n + 1, weight);
    v = next_v;
    n = drop_unused(simplex, weight, n + 1);
  }
  if (!inside) {  // apart (or the iteration limit: the last iterate)
    const double length = norm(v);
    sets.witnesses(simplex, weight, n, out.p_a, out.p_b);
    // On a face of M (a face of one shape against a vertex of the other, or two crossing edges) the
    // face's normal, which stays exact as the shapes come to touch, where v's direction is rounding.
    Vec3 normal = (-1.0 / length) * v;
    if (n == 3) {
      const Vec3 m = cross(simplex[1].w - simplex[0].w, simplex[2].w - simplex[0].w);
      normal = (dot(m, normal) >= 0.0 ? 1.0 : -1.0) / norm(m) * m;
    }
    for (int i = 0; i < 3; ++i) out.normal[i] = normal[i];
    out.distance = length;
    out.converged = converged;
    record_simplex(sets, simplex, n, out);
    return;
  }
  // A simplex holding the origin, grown to a tetrahedron by support points off its affine hull.
  while (n < 4) {
    double best_offset = 0.0;
    for (int axis = 0; axis < (n == 3 ? 1 : 3); ++axis) {  // a triangle has one normal to try
      Vec3 e{{0.0, 0.0, 0.0}};
      e[axis] = 1.0;
      Vec3 d = e;  // off the point, the segment's line, the triangle's plane
      if (n == 2) d = cross(simplex[1].w - simplex[0].w, e);
      if (n == 3) d = cross(simplex[1].w - simplex[0].w, simplex[2].w - simplex[0].w);
      if (norm(d) == 0.0) continue;
      for (double sign : {1.0, -1.0}) {
        const SupportPoint s = sets.support(sign * d);
        // The distance of s from the simplex's affine hull.
        Vec3 off = s.w - simplex[0].w;
        if (n >= 2) {
          const Vec3 u = simplex[1].w - simplex[0].w;
          if (n == 2)
            off = off - (dot(off, u) / dot(u, u)) * u;
          else {
            const Vec3 m = cross(u, simplex[2].w - simplex[0].w);
            off = (dot(off, m) / dot(m, m)) * m;
          }
        }
        if (norm(off) > best_offset) best_offset = norm(off), simplex[n] = s;
      }
    }
    if (best_offset <= tiny) return;  // M is flat: no polytope of three dimensions
    ++n;
  }
  expanding_polytope(sets, simplex, epa_tolerance, out);
}

}  // namespace

bool shape_core(const Shape& sh, const Pose& body, Core& out) {
  out = Core{};
  out.frame = shape_frame(sh, body);
  switch (sh.kind) {
    case ShapeKind::polytope:
    case ShapeKind::polygon:
      out.shape_points = sh.vertices.data();
      out.count = sh.num_vertices;
      out.dim = sh.kind == ShapeKind::polytope ? 3 : 2;
      out.radius = sh.kind == ShapeKind::polytope ? 0.0 : sh.R;
      return true;
    case ShapeKind::sphere:
      out.count = 1;
      out.radius = sh.R;
      return true;
    case ShapeKind::capsule:
      out.own[0] = -0.5 * sh.L, out.own[3] = 0.5 * sh.L;
      out.count = 2;
      out.radius = sh.R;
      return true;
    case ShapeKind::cylinder:
    case ShapeKind::cone:
    case ShapeKind::ellipsoid:
      out.round = &sh;
      return true;
  }
  return false;
}

void gjk_distance(const Core& a, const Core& b, GjkDistance& out, const GjkDistance* previous, double extent) {
  const VertexSets sets(a, b);
  core_distance(sets, out, previous, extent);
  out.extent *= sets.scale;
  // Back to world coordinates; the inflated shapes' witnesses lie their radii beyond the cores'
  // along the normal.
  out.distance = sets.scale * out.distance - (a.radius + b.radius);
  for (int i = 0; i < 3; ++i) {
    out.p_a[i] = sets.center[i] + sets.scale * out.p_a[i] + a.radius * out.normal[i];
    out.p_b[i] = sets.center[i] + sets.scale * out.p_b[i] - b.radius * out.normal[i];
  }
}

namespace {

// Core point i of c in world coordinates.
Vec3 core_point(const Core& c, int i) {
  const double* v = c.points() + c.dim * i;
  const double y[3] = {v[0], v[1], c.dim == 3 ? v[2] : 0.0};
  Vec3 out;
  for (int k = 0; k < 3; ++k)
    out[k] = c.frame.r[k] + c.frame.Q.m[k][0] * y[0] + c.frame.Q.m[k][1] * y[1] + c.frame.Q.m[k][2] * y[2];
  return out;
}

// A core's point farthest along the world direction n, relative to its frame's origin (world axes),
// with its index among the core's points (−1 for a round core's support point); the radius left out.
Vec3 centred_support(const Core& c, const Vec3& n, int& index) {
  const auto& Q = c.frame.Q.m;
  double y[3] = {0.0, 0.0, 0.0};
  index = -1;
  if (c.round) {
    double local[3];
    for (int j = 0; j < 3; ++j) local[j] = Q[0][j] * n[0] + Q[1][j] * n[1] + Q[2][j] * n[2];
    detail::body_support(*c.round, local, y);
  } else {
    index = VertexSets::farthest(c, n);
    const double* v = c.points() + c.dim * index;
    for (int j = 0; j < c.dim; ++j) y[j] = v[j];
  }
  Vec3 out;
  for (int k = 0; k < 3; ++k) out[k] = Q[k][0] * y[0] + Q[k][1] * y[1] + Q[k][2] * y[2];
  return out;
}

}  // namespace

void core_widths(const Core& c, double* widths) {
  for (int k = 0; k < 3; ++k) {
    Vec3 axis{{0.0, 0.0, 0.0}};
    axis[k] = 1.0;
    int index;
    widths[k] = centred_support(c, axis, index)[k] - centred_support(c, -1.0 * axis, index)[k];
  }
}

namespace {

// A vector of world axes in the core's shape frame.
void in_shape_frame(const Core& c, const Vec3& v, double* y) {
  const auto& Q = c.frame.Q.m;
  for (int j = 0; j < 3; ++j) y[j] = Q[0][j] * v[0] + Q[1][j] * v[1] + Q[2][j] * v[2];
}

// D's core point farthest along n, D = A₀ ⊕ (−B₀) with A₀, B₀ the cores about their frames' origins:
// w is the point of D, pa and pb the points of A₀ and B₀ it is made of.
SupportPoint centred_difference_support(const Core& a, const Core& b, const Vec3& n) {
  SupportPoint s;
  s.pa = centred_support(a, n, s.ia);
  s.pb = centred_support(b, -1.0 * n, s.ib);
  s.w = s.pa - s.pb;
  return s;
}

constexpr int kMaxRayIterations = 128;
// The ray cast approaches a round core's surface to this fraction of D's extent: near grazing exits it gains
// slowly, and the features it ends on are refined to rounding after it (refine_round_scaling).
constexpr double kRoundCastTolerance = 1e-8;

using Dual12 = Dual<12>;
using DualVec3 = Vec3T<Dual12>;

// A point of a body (side 0: a, 1: b) with origin `origin`, with its derivatives along the body's rigid
// motion: δp + δθ × (p − origin).
DualVec3 moving_point(const Vec3& p, const double* origin, int side) {
  DualVec3 out;
  double lever[3];
  for (int i = 0; i < 3; ++i) {
    out[i] = Dual12(p[i]);
    out[i].d[6 * side + i] = 1.0;
    lever[i] = p[i] - origin[i];
  }
  double* rot[3] = {out[0].d + 6 * side + 3, out[1].d + 6 * side + 3, out[2].d + 6 * side + 3};
  rot[0][1] += lever[2], rot[0][2] -= lever[1];
  rot[1][2] += lever[0], rot[1][0] -= lever[2];
  rot[2][0] += lever[1], rot[2][1] -= lever[0];
  return out;
}

void copy_derivatives(const Dual12& value, double* row) { std::copy(value.d, value.d + 12, row); }

}  // namespace

// The ray cast ended on a triangle of D's core points at μ u: where the ray leaves D through a face, the
// exact μ and the face's normal and weights, by portal refinement (XenoCollide's MPR): while a support
// point lies beyond the triangle's plane, it replaces the corner whose removal keeps the ray crossing the
// triangle. This ends μ on the face also where nearly coplanar faces (a mesh's hull) stalled the cast short
// of it; where the ray crosses no such triangle, μ, the normal and the weights stay (false).
bool exit_face(const Core& a, const Core& b, const Vec3& u, double tolerance, SupportPoint* simplex, double* weight,
               double& mu, Vec3& normal) {
  SupportPoint portal[3] = {simplex[0], simplex[1], simplex[2]};
  // Whether the ray's line crosses the triangle p, q, r (the signed volumes with u agree).
  auto crossed = [&](const Vec3& p, const Vec3& q, const Vec3& r) {
    const double s1 = dot(u, cross(p, q)), s2 = dot(u, cross(q, r)), s3 = dot(u, cross(r, p));
    return (s1 >= 0.0 && s2 >= 0.0 && s3 >= 0.0) || (s1 <= 0.0 && s2 <= 0.0 && s3 <= 0.0);
  };
  if (!crossed(portal[0].w, portal[1].w, portal[2].w)) return false;
  for (int step = 0; step < kMaxRayIterations; ++step) {
    const Vec3 e1 = portal[1].w - portal[0].w, e2 = portal[2].w - portal[0].w;
    Vec3 m = cross(e1, e2);
    if (dot(m, u) < 0.0) m = -1.0 * m;
    const double length = norm(m), along = dot(m, u), plane = dot(m, portal[0].w);
    if (!(length > 0.0 && along > 0.0)) return false;
    const SupportPoint p = centred_difference_support(a, b, m);
    if (dot(m, p.w) - plane <= tolerance * length) {
      normal = (1.0 / length) * m;
      mu = plane / along;
      const Vec3 x = mu * u - portal[0].w;
      const double inv = 1.0 / (length * length), sign = dot(cross(e1, e2), m) > 0.0 ? 1.0 : -1.0;
      weight[1] = sign * dot(cross(x, e2), m) * inv;
      weight[2] = sign * dot(cross(e1, x), m) * inv;
      weight[0] = 1.0 - weight[1] - weight[2];
      std::copy(portal, portal + 3, simplex);
      return true;
    }
    int replaced = -1;
    for (int k = 0; k < 3 && replaced < 0; ++k)
      if (crossed(k == 0 ? p.w : portal[0].w, k == 1 ? p.w : portal[1].w, k == 2 ? p.w : portal[2].w)) replaced = k;
    if (replaced < 0) return false;
    portal[replaced] = p;
  }
  return false;
}

// A portal of D for the ray {μ u : μ > 0}: a triangle of D's points whose cone from the origin holds u, by
// XenoCollide's portal discovery (Snethen 2008) with the origin as its interior point, for exit_face to refine to
// the face the ray leaves D through. A ray crossing a triangle of D's points meets D, and the refined face is its
// exit (its outward normal leans along u), whether or not the origin is in D; false where a support plane in the
// search does not pass beyond the origin or the search degenerates, for the ray cast to decide.
bool discover_portal(const Core& a, const Core& b, const Vec3& u, const SupportPoint& along, SupportPoint* portal) {
  portal[0] = along;
  Vec3 n = cross(along.w, u);  // normal to the plane of the origin, the support along u and the ray
  if (!(norm(n) > 0.0)) return false;
  portal[1] = centred_difference_support(a, b, n);
  if (!(dot(portal[1].w, n) > 0.0)) return false;
  n = cross(portal[0].w, portal[1].w);
  if (dot(n, u) < 0.0) {
    std::swap(portal[0], portal[1]);
    n = -1.0 * n;
  }
  for (int step = 0; step < kMaxRayIterations; ++step) {
    if (!(norm(n) > 0.0)) return false;
    const SupportPoint p = centred_difference_support(a, b, n);
    if (!(dot(p.w, n) > 0.0)) return false;
    if (dot(cross(portal[0].w, p.w), u) > 0.0) {  // u beyond the plane of the origin, portal[0] and p
      portal[1] = p;
      n = cross(portal[0].w, p.w);
    } else if (dot(cross(p.w, portal[1].w), u) > 0.0) {  // beyond that of the origin, p and portal[1]
      portal[0] = p;
      n = cross(p.w, portal[1].w);
    } else {
      portal[2] = p;
      return true;
    }
  }
  return false;
}

void gjk_scaling(const Core& a, const Core& b, GjkScaling& out) {
  out = GjkScaling{};
  Vec3 u;
  for (int k = 0; k < 3; ++k) u[k] = b.frame.r[k] - a.frame.r[k];
  const double length = norm(u);
  if (!(length > 0.0)) return;
  u = (1.0 / length) * u;
  // The ray cast (van den Bergen 2004) along −u from the point μ u of D's supporting plane normal to u,
  // against D's core point set C (its support points) inflated by R: every step either moves μ down to
  // the plane, normal to the separating direction v from conv(simplex) to μ u, through C's support point
  // along v (lifted by R), or adds that point to the simplex, until μ u is within R (and rounding) of C.
  // μ only moves to supporting planes of D, so it never passes the exit.
  const double R = a.radius + b.radius;
  const bool round = a.round || b.round;
  SupportPoint simplex[4];
  double weight[4] = {1.0, 0.0, 0.0, 0.0};
  simplex[0] = centred_difference_support(a, b, u);
  double mu = dot(u, simplex[0].w) + R;
  if (!(mu > 0.0)) return;  // D lies behind the plane through the origin normal to d: the ray misses it
  // Rounding scale: D's extent along the ray; round cores' support points approach their surfaces only to
  // a tolerance, as in gjk_distance.
  const double extent = mu - dot(u, centred_difference_support(a, b, -1.0 * u).w) + R;
  const double tolerance = (round ? kRoundCastTolerance : 1e-13) * extent;
  // The ray point x = μ u less its nearest point on the simplex's hull.
  Vec3 normal = u, offset = mu * u - simplex[0].w;
  int n = 1;
  // Two polytopes: the exit face by portal discovery and refinement (a support point a step, no sub-simplex
  // search), where they find one; else the cast.
  bool on_face = false;
  if (!round && R == 0.0 && a.dim == 3 && b.dim == 3) {
    SupportPoint portal[3];
    double portal_mu = mu, portal_weight[3];
    Vec3 portal_normal = u;
    if (discover_portal(a, b, u, simplex[0], portal) &&
        exit_face(a, b, u, tolerance, portal, portal_weight, portal_mu, portal_normal)) {
      on_face = true, n = 3, mu = portal_mu, normal = portal_normal;
      std::copy(portal, portal + 3, simplex);
      std::copy(portal_weight, portal_weight + 3, weight);
    }
  }
  for (; !on_face && out.steps < kMaxRayIterations; ++out.steps) {
    const Vec3 x = mu * u;
    Vec3 v = offset;
    const double distance = norm(v);
    if (distance - R <= tolerance) break;
    v = (1.0 / distance) * v;
    const SupportPoint p = centred_difference_support(a, b, v);
    const double beyond = dot(v, x - p.w) - R;  // x's height over D's supporting plane normal to v
    if (beyond > 0.0) {
      const double approach = dot(v, u);
      if (!(approach > 0.0)) return;  // the plane separates the whole ray from D
      mu -= beyond / approach;
      if (!(mu > 0.0)) return;
      normal = v;
    } else if (distance - R - beyond <= tolerance ||
               std::any_of(simplex, simplex + n, [&](const SupportPoint& s) { return same(s.w, p.w); })) {
      break;  // no point of C nearer to x than the simplex's, to rounding: x is on D
    }
    // The simplex's points relative to the new x: its nearest point to x, by closest_on_simplex on x − w.
    SupportPoint next[4];
    double next_weight[4];
    std::copy(simplex, simplex + n, next);
    next[n] = p;
    const Vec3 ray_point = mu * u;
    SupportPoint relative[4];
    for (int k = 0; k <= n; ++k) relative[k] = next[k], relative[k].w = ray_point - next[k].w;
    // Without a clip x stays: the simplex's nearest point to it was the old one, nearer ones hold p (GJK's
    // argument), and a step that finds none nearer ends the cast below, so only sub-simplices with p are tried.
    Vec3 next_offset = offset;  // where no sub-simplex with p is nearer (none found), the cast ends below
    if (!closest_on_simplex(relative, n + 1, next_weight, next_offset, beyond > 0.0 ? 0 : 1 << n)) {
      offset = Vec3{{0.0, 0.0, 0.0}};  // x on the simplex's hull (a tetrahedron): x is on D's core
      std::copy(next_weight, next_weight + n + 1, weight);
      std::copy(next, next + n + 1, simplex);
      ++n;
      break;
    }
    // Without a clip, a step that does not bring the simplex nearer to x has reached rounding.
    if (beyond <= 0.0 && norm(next_offset) >= distance) break;
    offset = next_offset;
    std::copy(next, next + n + 1, simplex);
    std::copy(next_weight, next_weight + n + 1, weight);
    n = drop_unused(simplex, weight, n + 1);
  }
  if (out.steps == kMaxRayIterations) return;
  // The normal (the portal's face already has it): the separating direction itself where D's core stays R away
  // (inflated cores), else a face of D where the simplex is a triangle, else the last supporting plane the ray
  // point was moved to.
  if (!on_face && R > 0.0 && norm(offset) > 0.0) {
    normal = (1.0 / norm(offset)) * offset;
  } else if (!on_face && n == 3) {
    exit_face(a, b, u, tolerance, simplex, weight, mu, normal);
  }
  // The touching point of the shapes scaled by α: r_a + α a₀ with a₀ the witness on A₀ (inflated).
  out.alpha = length / mu;
  out.support_gap = mu * dot(normal, u);  // h_D(normal), the plane through μ u
  Vec3 witness_a{{0.0, 0.0, 0.0}};
  for (int k = 0; k < n; ++k) witness_a = witness_a + weight[k] * simplex[k].pa;
  for (int k = 0; k < 3; ++k) {
    out.normal[k] = normal[k];
    out.x[k] = a.frame.r[k] + out.alpha * (witness_a[k] + a.radius * normal[k]);
  }
  out.simplex_size = n;
  for (int k = 0; k < n; ++k) {
    out.vertex_a[k] = simplex[k].ia, out.vertex_b[k] = simplex[k].ib;
    if (a.round) in_shape_frame(a, simplex[k].pa, out.round_a[k]);
    if (b.round) in_shape_frame(b, simplex[k].pb, out.round_b[k]);
  }
  out.converged = true;
}

void gjk_scaling_gradient(const GjkScaling& s, const double* origin_a, const double* origin_b, double* gradient) {
  const Vec3 n{{s.normal[0], s.normal[1], s.normal[2]}};
  const double inv = 1.0 / s.support_gap;
  const Vec3 lever_a{{s.x[0] - origin_a[0], s.x[1] - origin_a[1], s.x[2] - origin_a[2]}};
  const Vec3 lever_b{{s.x[0] - origin_b[0], s.x[1] - origin_b[1], s.x[2] - origin_b[2]}};
  const Vec3 moment_a = cross(lever_a, n), moment_b = cross(lever_b, n);
  for (int k = 0; k < 3; ++k) {
    gradient[k] = -inv * n[k];
    gradient[3 + k] = -inv * moment_a[k];
    gradient[6 + k] = inv * n[k];
    gradient[9 + k] = inv * moment_b[k];
  }
}

namespace {

// The witness points (radii left out) and the unit normal of the origin's projection onto the affine hull of
// the support points w_k = pa_k − pb_k (n ≤ 3) GJK or EPA ended on, with T = Dual12 their derivatives through that
// projection: the normal as gjk_distance takes it, the triangle's (oriented as `reference`), else the witnesses'
// direction (apart: a vertex or an edge of the difference, at a positive distance).
template <class T>
void simplex_witnesses(const Vec3T<T>* pa, const Vec3T<T>* pb, int n, const double* reference, Vec3T<T>& witness_a,
                       Vec3T<T>& witness_b, Vec3T<T>& normal) {
  Vec3T<T> w[3];
  for (int k = 0; k < n; ++k) w[k] = pa[k] - pb[k];
  // Barycentric weights of the origin's projection onto the affine hull of w (n ≤ 3 points).
  T weight[3] = {T(1.0), T(0.0), T(0.0)};
  if (n == 2) {
    const Vec3T<T> e = w[1] - w[0];
    weight[1] = -dot(w[0], e) / dot(e, e);
    weight[0] = 1.0 - weight[1];
  } else if (n == 3) {
    const Vec3T<T> e1 = w[1] - w[0], e2 = w[2] - w[0];
    const T g11 = dot(e1, e1), g12 = dot(e1, e2), g22 = dot(e2, e2), r1 = -dot(e1, w[0]), r2 = -dot(e2, w[0]);
    const T det = g11 * g22 - g12 * g12;
    weight[1] = (r1 * g22 - r2 * g12) / det;
    weight[2] = (g11 * r2 - g12 * r1) / det;
    weight[0] = 1.0 - weight[1] - weight[2];
  }
  witness_a = Vec3T<T>{{T(0.0), T(0.0), T(0.0)}}, witness_b = witness_a;
  for (int k = 0; k < n; ++k) {
    witness_a = witness_a + weight[k] * pa[k];
    witness_b = witness_b + weight[k] * pb[k];
  }
  normal = witness_b - witness_a;
  if (n == 3) normal = cross(w[1] - w[0], w[2] - w[0]);
  const double orientation =
      value_of(normal[0]) * reference[0] + value_of(normal[1]) * reference[1] + value_of(normal[2]) * reference[2] >=
              0.0
          ? 1.0
          : -1.0;
  normal = (orientation / norm(normal)) * normal;
}

}  // namespace

void gjk_distance_jacobian(const Core& a, const Core& b, const GjkDistance& d, const double* origin_a,
                           const double* origin_b, DistanceJacobian& jac) {
  const int n = d.simplex_size;
  DualVec3 pa[3], pb[3], witness_a, witness_b, normal;
  for (int k = 0; k < n; ++k) {
    pa[k] = moving_point(core_point(a, d.vertex_a[k]), origin_a, 0);
    pb[k] = moving_point(core_point(b, d.vertex_b[k]), origin_b, 1);
  }
  simplex_witnesses(pa, pb, n, d.normal, witness_a, witness_b, normal);
  const Dual12 distance = dot(normal, witness_b - witness_a);
  copy_derivatives(distance, jac.distance);  // the radii are constants
  for (int i = 0; i < 3; ++i) {
    copy_derivatives(witness_a[i] + a.radius * normal[i], jac.p_a[i]);
    copy_derivatives(witness_b[i] - b.radius * normal[i], jac.p_b[i]);
    copy_derivatives(normal[i], jac.normal[i]);
  }
}

namespace {

// Round cores made exact. A cylinder's support point along a direction is in closed form: the rim point of
// the cap the direction leans to, R u_⊥/|u_⊥| about the axis (shape x). GJK, EPA and the ray cast approach
// the cylinder's surface only to a tolerance, and their normal only to its square root; but the features
// they end on are known: a simplex point of a cylinder either follows the normal (a rim point, or with the
// other cap's a side line) or stays (points of a cap's face). With the features fixed, the normal is the
// root of a smooth equation in two tangent coordinates s (n = (n₀ + s₁ t₁ + s₂ t₂)/|·|), which Newton's method
// solves to rounding from the tolerance's estimate, and whose derivatives follow by the implicit function
// theorem: ds = −G_s⁻¹ G_p dp, G_s in forward mode over s (Dual2), G_p over the rigid motions (Dual12).

using Dual2 = Dual<2>;

// Chord, as a fraction of the radius, within which a cap's simplex points are one rim point (GJK's and the
// ray cast's tolerances leave them about its square root apart; the points of a cap's face are as far apart
// as the face's extent).
constexpr double kFollowingChord = 1e-3;
constexpr int kMaxRefinements = 16;
// Newton's method has converged when its step (in radians of the normal) is below this: rounding.
constexpr double kNewtonStep = 1e-13;
// A simplex's 4 pairs of points with those complete_features adds on either side.
constexpr int kMaxFeaturePairs = 24;
// The refined normal's supports may exceed the features' by rounding only: this fraction of the cores' extent
// (the distance) or of h_D (α).
constexpr double kSupportTolerance = 1e-9;

// A core's point of a final simplex: a fixed point of its shape frame (a vertex; a point of a cylinder's cap
// face), or a cylinder's rim point that follows the normal, on the cap at axial coordinate local[0].
struct FeaturePoint {
  bool follows = false;
  double local[3] = {0.0, 0.0, 0.0};
};

bool same_feature(const FeaturePoint& p, const FeaturePoint& q) {
  if (p.follows != q.follows || p.local[0] != q.local[0]) return false;
  return p.follows || (p.local[1] == q.local[1] && p.local[2] == q.local[2]);
}

// Whether a core's features are known: a point set, or a cylinder.
bool refinable(const Core& c) { return !c.round || c.round->kind == ShapeKind::cylinder; }

// The feature points of a core's n simplex points (point indices `vertex`, or a round core's support points
// `round` in its shape frame). A cylinder's points, by cap (axial coordinate ±L/2, or 0: the middle of the side,
// where the direction was normal to the axis), follow the normal where all of a cap's are one rim point,
// within kFollowingChord, away from the cap's centre; with `rim_only` wherever they are away from it (the second
// guess, where GJK stopped with a rim point's neighbours farther apart).
void feature_points(const Core& c, int n, const int* vertex, const double (*round)[3], bool rim_only,
                    FeaturePoint* out) {
  for (int k = 0; k < n; ++k) {
    out[k] = FeaturePoint{};
    if (!c.round) {
      const double* v = c.points() + c.dim * vertex[k];
      for (int j = 0; j < c.dim; ++j) out[k].local[j] = v[j];
      continue;
    }
    const double half = 0.5 * c.round->L;
    out[k].local[0] = round[k][0] > 0.5 * half ? half : (round[k][0] < -0.5 * half ? -half : 0.0);
    out[k].local[1] = round[k][1], out[k].local[2] = round[k][2];
  }
  if (!c.round) return;
  const double R = c.round->R;
  for (int k = 0; k < n; ++k) {
    bool follows = std::hypot(out[k].local[1], out[k].local[2]) > 0.5 * R;
    for (int j = 0; j < n && follows && !rim_only; ++j)
      if (out[j].local[0] == out[k].local[0] &&
          std::hypot(out[j].local[1] - out[k].local[1], out[j].local[2] - out[k].local[2]) > kFollowingChord * R)
        follows = false;
    out[k].follows = follows;
  }
}

// Completes a cylinder's features (`mine`, paired with the other core's `other`, n pairs), which a simplex may
// carry only part of where GJK stopped at its tolerance or the direction was special: a cap's points that do
// not follow the normal are points of its face (a chord of it, or its centre where the direction was the axis)
// and become three corners of the face, a third of a turn apart; a point that follows the normal on the middle
// of the side (where the direction was normal to the axis) becomes the side line, its two caps' rim points.
// Pairs added take the other core's point of the feature's first pair. The new count.
int complete_features(const Core& c, FeaturePoint* mine, FeaturePoint* other, int n) {
  if (!c.round) return n;
  const double half = 0.5 * c.round->L, R = c.round->R;
  const int given = n;
  for (const double axial : {-half, half}) {
    int first = -1, corners = 0;
    auto corner = [&](int j) {
      const double turn = 2.0 * M_PI * (j % 3) / 3.0;
      return FeaturePoint{false, {axial, R * std::cos(turn), R * std::sin(turn)}};
    };
    for (int k = 0; k < given; ++k)
      if (!mine[k].follows && mine[k].local[0] == axial) {
        if (first < 0) first = k;
        mine[k] = corner(corners++);
      }
    for (; first >= 0 && corners < 3; ++corners) mine[n] = corner(corners), other[n] = other[first], ++n;
  }
  for (int k = 0; k < given; ++k)
    if (mine[k].follows && mine[k].local[0] == 0.0) {
      mine[k].local[0] = half;
      mine[n] = mine[k], mine[n].local[0] = -half, other[n] = other[k], ++n;
    }
  return n;
}

// Drops repeated pairs of feature points (pairs of a's and b's the same).
int distinct_pairs(FeaturePoint* fa, FeaturePoint* fb, int n) {
  int kept = 0;
  for (int k = 0; k < n; ++k) {
    bool repeated = false;
    for (int j = 0; j < kept && !repeated; ++j) repeated = same_feature(fa[j], fa[k]) && same_feature(fb[j], fb[k]);
    if (!repeated) fa[kept] = fa[k], fb[kept] = fb[k], ++kept;
  }
  return kept;
}

// A core's frame, fixed (T = double, Dual2) or moving with its body's rigid motion (Dual12).
template <class T>
struct FrameT {
  Vec3T<T> r;
  T Q[3][3];
};

// The frame fixed; with `centred` at the origin (the ray cast works relative to the frames' origins).
template <class T>
FrameT<T> fixed_frame(const Pose& f, bool centred) {
  FrameT<T> out;
  for (int i = 0; i < 3; ++i) {
    out.r[i] = T(centred ? 0.0 : f.r[i]);
    for (int j = 0; j < 3; ++j) out.Q[i][j] = T(f.Q.m[i][j]);
  }
  return out;
}

// The frame moving with its body (side 0: a, 1: b; origin: the body's): δr = δp + δθ × (r − origin), δQ = δθ^ Q.
FrameT<Dual12> moving_frame(const Pose& f, const double* origin, int side) {
  FrameT<Dual12> out;
  out.r = moving_point(Vec3{{f.r[0], f.r[1], f.r[2]}}, origin, side);
  for (int j = 0; j < 3; ++j) {
    const double q[3] = {f.Q.m[0][j], f.Q.m[1][j], f.Q.m[2][j]};
    const double turned[3][3] = {{0.0, -q[2], q[1]}, {q[2], 0.0, -q[0]}, {-q[1], q[0], 0.0}};  // e_k × q
    for (int i = 0; i < 3; ++i) {
      out.Q[i][j] = Dual12(q[i]);
      for (int k = 0; k < 3; ++k) out.Q[i][j].d[6 * side + 3 + k] = turned[k][i];
    }
  }
  return out;
}

// A feature point in world axes: a fixed one, or the rim point farthest along `direction`.
template <class T>
Vec3T<T> feature_point(const Core& c, const FrameT<T>& f, const FeaturePoint& p, const Vec3T<T>& direction) {
  T y[3] = {T(p.local[0]), T(p.local[1]), T(p.local[2])};
  if (p.follows) {
    T u[3];
    for (int j = 1; j < 3; ++j) u[j] = f.Q[0][j] * direction[0] + f.Q[1][j] * direction[1] + f.Q[2][j] * direction[2];
    using std::sqrt;
    const T radial = sqrt(u[1] * u[1] + u[2] * u[2]);
    for (int j = 1; j < 3; ++j) y[j] = c.round->R * u[j] / radial;
  }
  Vec3T<T> out;
  for (int i = 0; i < 3; ++i) out[i] = f.r[i] + f.Q[i][0] * y[0] + f.Q[i][1] * y[1] + f.Q[i][2] * y[2];
  return out;
}

// Unit vectors t1, t2 normal to the unit n and to each other.
void tangent_basis(const Vec3& n, Vec3& t1, Vec3& t2) {
  int axis = 0;
  for (int i = 1; i < 3; ++i)
    if (std::abs(n[i]) < std::abs(n[axis])) axis = i;
  Vec3 e{{0.0, 0.0, 0.0}};
  e[axis] = 1.0;
  t1 = cross(n, e);
  t1 = (1.0 / norm(t1)) * t1;
  t2 = cross(n, t1);
}

// The unit direction of n₀ + s₁ t₁ + s₂ t₂.
template <class T>
Vec3T<T> direction_of(const Vec3& n0, const Vec3& t1, const Vec3& t2, const T& s1, const T& s2) {
  Vec3T<T> m;
  for (int i = 0; i < 3; ++i) m[i] = n0[i] + s1 * t1[i] + s2 * t2[i];
  return (1.0 / norm(m)) * m;
}

// Solves the 2 × 2 system J x = b (a 1 × 1 one if `dims` is 1); false if singular.
bool solve_tangent(const double J[2][2], const double* b, int dims, double* x) {
  if (dims == 1) {
    if (J[0][0] == 0.0) return false;
    x[0] = b[0] / J[0][0], x[1] = 0.0;
    return true;
  }
  const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  if (!(std::abs(det) > 0.0)) return false;
  x[0] = (J[1][1] * b[0] - J[0][1] * b[1]) / det;
  x[1] = (J[0][0] * b[1] - J[1][0] * b[0]) / det;
  return true;
}

// Newton's method on the tangent equations G(s) = 0 (dims of them, 1 or 2), G evaluated in Dual2 by
// `residual(s1, s2, G)`; s in place (from 0), with the Jacobian G_s at the root. False if it does not converge.
template <class Residual>
bool newton_tangent(const Residual& residual, int dims, double* s, double J[2][2]) {
  for (int iteration = 0; iteration < kMaxRefinements; ++iteration) {
    Dual2 s1(s[0]), s2(s[1]), G[2];
    s1.d[0] = 1.0, s2.d[1] = 1.0;
    residual(s1, s2, G);
    double value[2], step[2];
    for (int i = 0; i < 2; ++i) {
      value[i] = G[i].v;
      for (int j = 0; j < 2; ++j) J[i][j] = G[i].d[j];
    }
    if (!solve_tangent(J, value, dims, step) || !std::isfinite(step[0]) || !std::isfinite(step[1])) return false;
    s[0] -= step[0], s[1] -= step[1];
    if (std::max(std::abs(step[0]), std::abs(step[1])) <= kNewtonStep) return true;
  }
  return false;
}

// The support of a core along the world direction n, relative to its frame's origin.
double centred_support_value(const Core& c, const Vec3& n) {
  int index;
  return dot(n, centred_support(c, n, index));
}

// gjk_distance's result d of cores with a cylinder made exact (the refined witnesses, normal and distance into
// d), with jac its derivatives along the bodies' rigid motions (all rows but α's). The normal n is the fixed
// point of the map from n to the normal of the features' simplex at n (simplex_witnesses on the features' points,
// a's rim points farthest along n, b's along −n). False where Newton's method does not converge, or the refined
// normal's supports are not the features' (a feature GJK ended on, within its tolerance, was not the one).
bool refine_round_distance(const Core& a, const Core& b, bool rim_only, GjkDistance& d, const double* origin_a,
                           const double* origin_b, DistanceJacobian* jac) {
  FeaturePoint fa[kMaxFeaturePairs], fb[kMaxFeaturePairs];
  feature_points(a, d.simplex_size, d.vertex_a, d.round_a, rim_only, fa);
  feature_points(b, d.simplex_size, d.vertex_b, d.round_b, rim_only, fb);
  const int n = distinct_pairs(fa, fb, complete_features(b, fb, fa, complete_features(a, fa, fb, d.simplex_size)));
  if (n > 3) return false;
  const Vec3 n0{{d.normal[0], d.normal[1], d.normal[2]}};
  Vec3 t1, t2;
  tangent_basis(n0, t1, t2);
  // The features' witnesses and normal at the direction n, on the frames given (fixed or moving).
  auto geometry = [&](const auto& frame_a, const auto& frame_b, const auto& direction, auto& witness_a, auto& witness_b,
                      auto& normal) {
    using V = std::decay_t<decltype(direction)>;
    V pa[3], pb[3];
    for (int k = 0; k < n; ++k) {
      pa[k] = feature_point(a, frame_a, fa[k], direction);
      pb[k] = feature_point(b, frame_b, fb[k], -1.0 * direction);
    }
    simplex_witnesses(pa, pb, n, d.normal, witness_a, witness_b, normal);
  };
  // G(s): the tangent components of the features' normal less n.
  auto residual = [&](const auto& frame_a, const auto& frame_b, const auto& s1, const auto& s2, auto* G) {
    const auto direction = direction_of(n0, t1, t2, s1, s2);
    std::decay_t<decltype(direction)> witness_a, witness_b, normal;
    geometry(frame_a, frame_b, direction, witness_a, witness_b, normal);
    const auto gap = normal - direction;
    G[0] = gap[0] * t1[0] + gap[1] * t1[1] + gap[2] * t1[2];
    G[1] = gap[0] * t2[0] + gap[1] * t2[1] + gap[2] * t2[2];
  };
  const FrameT<Dual2> still_a = fixed_frame<Dual2>(a.frame, false), still_b = fixed_frame<Dual2>(b.frame, false);
  double s[2] = {0.0, 0.0}, J[2][2];
  auto still = [&](const Dual2& s1, const Dual2& s2, Dual2* G) { residual(still_a, still_b, s1, s2, G); };
  if (!newton_tangent(still, 2, s, J)) return false;

  const FrameT<double> frame_a = fixed_frame<double>(a.frame, false), frame_b = fixed_frame<double>(b.frame, false);
  const Vec3 direction = direction_of(n0, t1, t2, s[0], s[1]);
  Vec3 witness_a, witness_b, normal;
  geometry(frame_a, frame_b, direction, witness_a, witness_b, normal);
  const double distance = dot(normal, witness_b - witness_a);
  // The supports along the refined normal must be the features' (to rounding), and the distance GJK's.
  const double slack = kSupportTolerance * d.extent;
  if (!(centred_support_value(a, normal) - dot(normal, witness_a - Vec3{{a.frame.r[0], a.frame.r[1], a.frame.r[2]}}) <=
            slack &&
        centred_support_value(b, -1.0 * normal) +
                dot(normal, witness_b - Vec3{{b.frame.r[0], b.frame.r[1], b.frame.r[2]}}) <=
            slack &&
        std::abs(distance - (a.radius + b.radius) - d.distance) <= 1e3 * kRoundGjkTolerance * d.extent + slack))
    return false;
  d.distance = distance - (a.radius + b.radius);
  for (int i = 0; i < 3; ++i) {
    d.normal[i] = normal[i];
    d.p_a[i] = witness_a[i] + a.radius * normal[i];
    d.p_b[i] = witness_b[i] - b.radius * normal[i];
  }
  if (!jac) return true;
  // G_p at the root, then s with its derivatives ds = −G_s⁻¹ G_p, and the geometry at it.
  const FrameT<Dual12> moving_a = moving_frame(a.frame, origin_a, 0), moving_b = moving_frame(b.frame, origin_b, 1);
  Dual12 G[2], root[2] = {Dual12(s[0]), Dual12(s[1])};
  residual(moving_a, moving_b, root[0], root[1], G);
  for (int c = 0; c < 12; ++c) {
    const double column[2] = {G[0].d[c], G[1].d[c]};
    double ds[2];
    if (!solve_tangent(J, column, 2, ds)) return false;
    root[0].d[c] = -ds[0], root[1].d[c] = -ds[1];
  }
  DualVec3 moving_witness_a, moving_witness_b, moving_normal;
  geometry(moving_a, moving_b, direction_of(n0, t1, t2, root[0], root[1]), moving_witness_a, moving_witness_b,
           moving_normal);
  copy_derivatives(dot(moving_normal, moving_witness_b - moving_witness_a), jac->distance);
  for (int i = 0; i < 3; ++i) {
    copy_derivatives(moving_witness_a[i] + a.radius * moving_normal[i], jac->p_a[i]);
    copy_derivatives(moving_witness_b[i] - b.radius * moving_normal[i], jac->p_b[i]);
    copy_derivatives(moving_normal[i], jac->normal[i]);
  }
  return true;
}

// gjk_scaling's result s of cores with a cylinder made exact: α = max_n n·d / h_D(n) (gjk.hpp), maximized over
// the normals at which D's support is the features' the cast ended on: those normal to the differences of
// the features' points (an edge, a face), on which h_D(n) = n·w(n) + R for any of the features' points w(n) is
// smooth and its gradient w(n) + R n. Newton's method on the gradient's tangent components; α's gradient then
// needs only the normal and the touching point (gjk_scaling_gradient). False as for refine_round_distance.
bool refine_round_scaling(const Core& a, const Core& b, bool rim_only, GjkScaling& s) {
  FeaturePoint fa[kMaxFeaturePairs], fb[kMaxFeaturePairs];
  feature_points(a, s.simplex_size, s.vertex_a, s.round_a, rim_only, fa);
  feature_points(b, s.simplex_size, s.vertex_b, s.round_b, rim_only, fb);
  const int n = distinct_pairs(fa, fb, complete_features(b, fb, fa, complete_features(a, fa, fb, s.simplex_size)));
  const FrameT<double> frame_a = fixed_frame<double>(a.frame, true), frame_b = fixed_frame<double>(b.frame, true);
  auto point_of_d = [&](const auto& on_a, const auto& on_b, int k, const auto& direction) {
    return feature_point(a, on_a, fa[k], direction) - feature_point(b, on_b, fb[k], -1.0 * direction);
  };
  Vec3 n0{{s.normal[0], s.normal[1], s.normal[2]}}, u;
  for (int k = 0; k < 3; ++k) u[k] = b.frame.r[k] - a.frame.r[k];
  const double length = norm(u);
  u = (1.0 / length) * u;
  // The features' edges and faces: an orthonormal basis of their points' differences (which do not move with n:
  // the points that follow n are one rim point, or a side line's two).
  Vec3 basis[3];
  int rank = 0;
  const Vec3 first = point_of_d(frame_a, frame_b, 0, n0);
  double scale = norm(first);
  for (int k = 1; k < n; ++k) scale = std::max(scale, norm(point_of_d(frame_a, frame_b, k, n0)));
  for (int k = 1; k < n; ++k) {
    Vec3 e = point_of_d(frame_a, frame_b, k, n0) - first;
    for (int j = 0; j < rank; ++j) e = e - dot(e, basis[j]) * basis[j];
    if (norm(e) > 1e-9 * scale) {
      if (rank == 2) return false;
      basis[rank++] = (1.0 / norm(e)) * e;
    }
  }
  for (int j = 0; j < rank; ++j) n0 = n0 - dot(n0, basis[j]) * basis[j];
  if (rank == 2) n0 = (dot(cross(basis[0], basis[1]), n0) >= 0.0 ? 1.0 : -1.0) * cross(basis[0], basis[1]);
  n0 = (1.0 / norm(n0)) * n0;
  Vec3 t1, t2;
  tangent_basis(n0, t1, t2);
  if (rank == 1) t1 = cross(basis[0], n0), t2 = Vec3{{0.0, 0.0, 0.0}};
  const double R = a.radius + b.radius;
  double root[2] = {0.0, 0.0}, J[2][2];
  if (rank < 2) {
    const FrameT<Dual2> still_a = fixed_frame<Dual2>(a.frame, true), still_b = fixed_frame<Dual2>(b.frame, true);
    // The tangent components of ∇f, f(n) = n·u / h(n): ∇f = (u h − (n·u)(w(n) + R n)) / h², ∂n/∂s_i = (t_i − n (n·t_i))
    // / |m|.
    auto gradient = [&](const Dual2& s1, const Dual2& s2, Dual2* G) {
      Vec3T<Dual2> m;
      for (int i = 0; i < 3; ++i) m[i] = n0[i] + s1 * t1[i] + s2 * t2[i];
      const Dual2 inverse_length = 1.0 / norm(m);
      const Vec3T<Dual2> direction = inverse_length * m, w = point_of_d(still_a, still_b, 0, direction);
      const Dual2 h = dot(direction, w) + R, along = direction[0] * u[0] + direction[1] * u[1] + direction[2] * u[2];
      Vec3T<Dual2> grad;
      for (int i = 0; i < 3; ++i) grad[i] = (h * u[i] - along * (w[i] + R * direction[i])) / (h * h);
      const Vec3* tangents[2] = {&t1, &t2};
      for (int j = 0; j < 2; ++j) {
        const Vec3& t = *tangents[j];
        const Dual2 along_t = direction[0] * t[0] + direction[1] * t[1] + direction[2] * t[2];
        G[j] = Dual2(0.0);
        for (int i = 0; i < 3; ++i) G[j] = G[j] + inverse_length * (t[i] - direction[i] * along_t) * grad[i];
      }
    };
    if (!newton_tangent(gradient, 2 - rank, root, J)) return false;
  }
  const Vec3 normal = direction_of(n0, t1, t2, root[0], root[1]);
  const double h = dot(normal, point_of_d(frame_a, frame_b, 0, normal)) + R;
  const double alpha = length * dot(normal, u) / h;
  // D's support along the refined normal must be the features' (to rounding), and α the cast's to its tolerance.
  const SupportPoint support = centred_difference_support(a, b, normal);
  if (!(dot(normal, support.w) + R - h <= kSupportTolerance * h &&
        std::abs(alpha - s.alpha) <= 1e2 * kRoundCastTolerance * alpha))
    return false;
  // a₀, the touching point's on A₀: the exit point X = μ u as a combination of the features' points of D (the
  // projection of X onto their affine hull; a parallelogram's three first corners span it).
  const Vec3 exit = (length / alpha) * u;
  Vec3 pa[3], pb[3], witness_a, witness_b, face_normal;
  const int corners = std::min(n, 3);
  for (int k = 0; k < corners; ++k) {
    pa[k] = feature_point(a, frame_a, fa[k], normal);
    pb[k] = feature_point(b, frame_b, fb[k], -1.0 * normal) + exit;
  }
  simplex_witnesses(pa, pb, corners, s.normal, witness_a, witness_b, face_normal);
  s.alpha = alpha;
  s.support_gap = h;
  for (int k = 0; k < 3; ++k) {
    s.normal[k] = normal[k];
    s.x[k] = a.frame.r[k] + alpha * (witness_a[k] + a.radius * normal[k]);
  }
  return true;
}

// The refinements with the features as feature_points reads them, else with every cap's points one rim point.
bool refine_round(const Core& a, const Core& b, GjkDistance& d, const double* origin_a, const double* origin_b,
                  DistanceJacobian* jac) {
  return refine_round_distance(a, b, false, d, origin_a, origin_b, jac) ||
         refine_round_distance(a, b, true, d, origin_a, origin_b, jac);
}
bool refine_round(const Core& a, const Core& b, GjkScaling& s) {
  return refine_round_scaling(a, b, false, s) || refine_round_scaling(a, b, true, s);
}

}  // namespace

bool gjk_signed_distance(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, DistanceResult& out,
                         DistanceJacobian* jac, const VertexAdjacency* adjacency_a, const VertexAdjacency* adjacency_b,
                         double extent) {
  Core core_a, core_b;
  // Cones and ellipsoids are left to the cone programs; a cylinder's features are refined (refine_round_distance).
  if (!shape_core(a, pa, core_a) || !shape_core(b, pb, core_b) || !refinable(core_a) || !refinable(core_b))
    return false;
  core_a.adjacency = adjacency_a, core_b.adjacency = adjacency_b;
  const bool round = core_a.round || core_b.round;
  GjkDistance distance;
  gjk_distance(core_a, core_b, distance, nullptr, extent);
  if (!distance.converged) return false;
  GjkScaling scaling;
  gjk_scaling(core_a, core_b, scaling);
  if (!scaling.converged) return false;
  if (round && !(refine_round(core_a, core_b, distance, pa.r, pb.r, jac) && refine_round(core_a, core_b, scaling))) {
    // Among nearly tied vertices a climb and a scan may end on different ones, so GJK on different features: where
    // the climbed ones are not the pair's, the scan's are tried before the cone program.
    return (adjacency_a || adjacency_b) && gjk_signed_distance(a, pa, b, pb, out, jac, nullptr, nullptr, extent);
  }
  out = DistanceResult{};
  out.distance = distance.distance;
  for (int i = 0; i < 3; ++i) {
    out.p_a[i] = distance.p_a[i];
    out.p_b[i] = distance.p_b[i];
    out.normal[i] = distance.normal[i];
  }
  out.alpha = scaling.alpha;
  out.status = SolveStatus::solved;
  out.iterations = scaling.steps;
  if (jac) {
    gjk_scaling_gradient(scaling, pa.r, pb.r, jac->alpha);
    if (!round) gjk_distance_jacobian(core_a, core_b, distance, pa.r, pb.r, *jac);
  }
  return true;
}

bool gjk_alpha(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, DistanceResult& out,
               double* alpha_gradient, const VertexAdjacency* adjacency_a, const VertexAdjacency* adjacency_b) {
  Core core_a, core_b;
  GjkScaling scaling;
  // Cones and ellipsoids are left to the cone program: where the ray leaves a curved surface, the cast's normal
  // (so α's gradient) is only as good as the square root of its tolerance; a cylinder's features are refined.
  if (!shape_core(a, pa, core_a) || !shape_core(b, pb, core_b) || !refinable(core_a) || !refinable(core_b))
    return false;
  core_a.adjacency = adjacency_a, core_b.adjacency = adjacency_b;
  gjk_scaling(core_a, core_b, scaling);
  if (!scaling.converged) return false;
  if ((core_a.round || core_b.round) && !refine_round(core_a, core_b, scaling))
    return (adjacency_a || adjacency_b) && gjk_alpha(a, pa, b, pb, out, alpha_gradient);  // as gjk_signed_distance
  out = DistanceResult{};
  out.alpha = scaling.alpha;
  out.status = SolveStatus::solved;
  out.iterations = scaling.steps;
  if (alpha_gradient) gjk_scaling_gradient(scaling, pa.r, pb.r, alpha_gradient);
  return true;
}

}  // namespace dcol::geometry
