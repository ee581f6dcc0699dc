// The DCOL primitives (DCOL §III-B) and their scaled-set constraints in standard form h − G x ∈ K.
//
// The variables of a proximity problem are [x (3), α, this shape's slack variables…]; a distance
// problem (distance.hpp) gives each shape its own point and fixes α at 1 (Columns). The problem
// is posed in normalized coordinates x' = (x − center) / ℓ so that its numbers are O(1) whatever the
// size or placement of the shapes: a primitive receives its origin r' = (r − center)/ℓ and scales
// every length by 1/ℓ (`inv_len`). α is unchanged by this change of variables.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/lanes.hpp"
#include "core/small_matrix.hpp"

namespace dcol::geometry {

enum class ShapeKind : int { polytope = 0, capsule, cylinder, cone, sphere, ellipsoid, polygon };

// Most faces a polytope or polygon may have; the largest solver size class holds two of them.
constexpr int kMaxFaces = 500;

// Short lists, nearest first, of the faces of a polytope that pass nearest to each of its vertices
// (or of the vertices nearest to each face's plane), by distance to the plane (index_polytope): the
// contacts' scans for the faces through a vertex and for the corners of a face, within a pair's
// feature tolerance, read the front of one list instead of testing every face or vertex. A list holds
// at most kIncidenceListLength entries; `beyond` is the distance of the nearest one left out (infinity
// when none is), so a tolerance below it is answered by the list alone, and a larger one by a scan.
constexpr int kIncidenceListLength = 32;

// Two: the baseline build's SIMD width (SSE2); wider GCC vectors are split there, through memory.
constexpr int kVertexBlock = 2;

struct IncidenceLists {
  std::vector<int> start;      // list i holds entries start[i] … start[i + 1] − 1
  std::vector<int> index;      // the faces (or vertices)
  std::vector<double> gap;     // their distances to the plane, ascending within a list
  std::vector<double> beyond;  // per list
  double slack = 0.0;          // rounding of a stored distance against the same one computed again

  // Whether list i holds every entry within tol (tol below what it left out, with the rounding).
  bool answers(int i, double tol) const { return beyond[i] > tol + slack; }
  // One past the last entry of list i that may lie within tol.
  int end_within(int i, double tol) const {
    int k = start[i];
    while (k < start[i + 1] && gap[k] <= tol + slack) ++k;
    return k;
  }
};

struct Shape {
  ShapeKind kind = ShapeKind::sphere;
  double R = 0.0, L = 0.0, H = 0.0, tan_beta = 0.0;
  double U[3][3] = {};          // ellipsoid: upper Cholesky factor of P
  std::vector<double> normals;  // polytope A (m×3) or polygon C (m×2), row-major
  std::vector<double> offsets;  // polytope b or polygon d
  int num_faces = 0;
  std::vector<double> vertices;  // polytope vertices (k×3) or polygon corners (k×2), row-major
  int num_vertices = 0;
  double length_scale = 1.0;  // characteristic size, for normalization
  // A polytope that is a box (mark_box): six faces in three orthogonal pairs, each face's opposite.
  bool box = false;
  int opposite_face[6] = {};
  // A polytope's index (index_polytope): each face's |A_f|², and the faces nearest to passing through
  // each vertex, the vertices nearest to each face's plane.
  std::vector<double> face_norm2;
  IncidenceLists vertex_faces, face_vertices;
  double vertex_radius = INFINITY;  // a polytope's farthest vertex from its frame's origin
  // A polytope's vertices by blocks of kVertexBlock: their x, then their y, then their z (the last
  // block filled up with the last vertex), for scans that take a block per SIMD operation.
  std::vector<double> vertex_blocks;
  bool has_offset = false;
  double offset_r[3] = {0.0, 0.0, 0.0};
  Mat3 offset_Q = {{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};

  int num_slack() const {
    switch (kind) {
      case ShapeKind::capsule:
        return 1;  // γ, position along the axis (DCOL eq. 12)
      case ShapeKind::polygon:
        return 2;  // y, point of the polygon (DCOL eq. 25)
      default:
        return 0;
    }
  }
  int num_linear_rows() const {
    switch (kind) {
      case ShapeKind::polytope:
      case ShapeKind::polygon:
        return num_faces;
      case ShapeKind::capsule:
      case ShapeKind::cylinder:
        return 2;
      case ShapeKind::cone:
        return 1;
      default:
        return 0;
    }
  }
  int cone_dim() const {
    switch (kind) {
      case ShapeKind::polytope:
        return 0;
      case ShapeKind::cone:
      case ShapeKind::cylinder:
        return 3;
      default:
        return 4;
    }
  }
};

// Sets sh.box and sh.opposite_face: whether the polytope has six faces in three pairs of opposite
// normals, the pairs orthogonal (the contacts' box-face test relies on it).
inline void mark_box(Shape& sh) {
  sh.box = false;
  if (sh.kind != ShapeKind::polytope || sh.num_faces != 6) return;
  const double* A = sh.normals.data();
  auto norm = [&](int f) {
    return std::sqrt(A[3 * f] * A[3 * f] + A[3 * f + 1] * A[3 * f + 1] + A[3 * f + 2] * A[3 * f + 2]);
  };
  for (int f = 0; f < 6; ++f) {
    sh.opposite_face[f] = -1;
    for (int g = 0; g < 6; ++g) {
      if (g == f) continue;
      const double cosine =
          (A[3 * f] * A[3 * g] + A[3 * f + 1] * A[3 * g + 1] + A[3 * f + 2] * A[3 * g + 2]) / (norm(f) * norm(g));
      if (cosine < -1.0 + 1e-12)
        sh.opposite_face[f] = g;
      else if (std::abs(cosine) > 1e-12)
        return;
    }
    if (sh.opposite_face[f] < 0) return;
  }
  sh.box = true;
}

// Fills a polytope's index: face_norm2, vertex_faces and face_vertices (IncidenceLists).
inline void index_polytope(Shape& sh) {
  if (sh.kind != ShapeKind::polytope) return;
  const int F = sh.num_faces, V = sh.num_vertices;
  const double* A = sh.normals.data();
  sh.face_norm2.resize(F);
  double reach = 0.0;  // how large the numbers whose difference is a distance get
  for (int f = 0; f < F; ++f) {
    sh.face_norm2[f] = A[3 * f] * A[3 * f] + A[3 * f + 1] * A[3 * f + 1] + A[3 * f + 2] * A[3 * f + 2];
    reach = std::max(reach, std::abs(sh.offsets[f]) / std::sqrt(sh.face_norm2[f]));
  }
  sh.vertex_radius = 0.0;
  for (int k = 0; k < V; ++k) {
    const double* y = &sh.vertices[3 * k];
    reach = std::max(reach, std::abs(y[0]) + std::abs(y[1]) + std::abs(y[2]));
    sh.vertex_radius = std::max(sh.vertex_radius, std::sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]));
  }
  auto distance = [&](int f, int k) {
    const double* y = &sh.vertices[3 * k];
    return std::abs(A[3 * f] * y[0] + A[3 * f + 1] * y[1] + A[3 * f + 2] * y[2] - sh.offsets[f]) /
           std::sqrt(sh.face_norm2[f]);
  };
  // Each list: its `count` candidates sorted by distance (ties by index), the nearest kept.
  auto build = [&](IncidenceLists& lists, int count, int candidates, auto&& distance_of) {
    lists.start.assign(1, 0);
    lists.index.clear();
    lists.gap.clear();
    lists.beyond.clear();
    lists.slack = 1e-12 * reach;
    std::vector<std::pair<double, int>> order(candidates);
    for (int i = 0; i < count; ++i) {
      for (int j = 0; j < candidates; ++j) order[j] = {distance_of(i, j), j};
      std::sort(order.begin(), order.end());
      const int kept = std::min(candidates, kIncidenceListLength);
      for (int j = 0; j < kept; ++j) lists.index.push_back(order[j].second), lists.gap.push_back(order[j].first);
      lists.beyond.push_back(kept < candidates ? order[kept].first : INFINITY);
      lists.start.push_back(static_cast<int>(lists.index.size()));
    }
  };
  const int blocks = (V + kVertexBlock - 1) / kVertexBlock;
  sh.vertex_blocks.resize(static_cast<size_t>(3 * kVertexBlock) * blocks);
  for (int k = 0; k < blocks * kVertexBlock; ++k)
    for (int i = 0; i < 3; ++i)
      sh.vertex_blocks[(k / kVertexBlock * 3 + i) * kVertexBlock + k % kVertexBlock] =
          sh.vertices[3 * std::min(k, V - 1) + i];
  build(sh.vertex_faces, V, F, [&](int k, int f) { return distance(f, k); });
  build(sh.face_vertices, F, V, [&](int f, int k) { return distance(f, k); });
}

// The layout of DCOL's problem (DCOL eq. 9): x in columns 0–2, α in column 3, then the slack variables.
constexpr int kAlphaColumn = 3;

// Columns of the problem's variables that one shape's rows use.
struct Columns {
  int slack;                 // first slack column of this shape
  int x = 0;                 // first of the point's three columns
  int alpha = kAlphaColumn;  // α's column, or −1 for α fixed at 1 (a distance problem): its terms go into h
};

// Sets the coefficient of α in row i: a term −value·α of h − G x, a constant when α is fixed at 1.
template <class Program, class V>
inline void put_alpha(Program& p, int i, Columns col, V value) {
  if (col.alpha >= 0)
    p.G[i][col.alpha] = value;
  else
    p.h[i] -= value;
}

// Appends this shape's orthant rows (the orthant part of K comes first in the program). r and Q
// hold one value per lane; the shape is the same in every lane.
template <class Program, class V = typename Program::V>
void add_linear_rows(Program& p, const Shape& sh, const V* r, const Mat3T<V>& Q, double inv_len, Columns col) {
  const int cx = col.x;
  const V bx[3] = {Q.m[0][0], Q.m[1][0], Q.m[2][0]};  // body x axis in the world
  const V bx_r = bx[0] * r[0] + bx[1] * r[1] + bx[2] * r[2];
  switch (sh.kind) {
    case ShapeKind::polytope:
      // DCOL eq. 11: A Qᵀ (x − r) ≤ α b
      for (int f = 0; f < sh.num_faces; ++f) {
        const double* a = &sh.normals[3 * f];
        V qa[3];
        for (int i = 0; i < 3; ++i) qa[i] = Q.m[i][0] * a[0] + Q.m[i][1] * a[1] + Q.m[i][2] * a[2];
        V* row = p.add_orthant_row(qa[0] * r[0] + qa[1] * r[1] + qa[2] * r[2]);
        for (int i = 0; i < 3; ++i) row[cx + i] = qa[i];
        put_alpha(p, p.m - 1, col, splat<V>(-sh.offsets[f] * inv_len));
      }
      break;
    case ShapeKind::cylinder: {
      // DCOL eq. 18: −αL/2 ≤ b̂xᵀ(x − r) ≤ αL/2
      V* lo = p.add_orthant_row(-bx_r);
      V* hi = p.add_orthant_row(bx_r);
      for (int i = 0; i < 3; ++i) {
        lo[cx + i] = -bx[i];
        hi[cx + i] = bx[i];
      }
      put_alpha(p, p.m - 2, col, splat<V>(-0.5 * sh.L * inv_len));
      put_alpha(p, p.m - 1, col, splat<V>(-0.5 * sh.L * inv_len));
      break;
    }
    case ShapeKind::capsule: {
      // DCOL eq. 14: −αL/2 ≤ γ ≤ αL/2
      V* hi = p.add_orthant_row(V{});
      V* lo = p.add_orthant_row(V{});
      put_alpha(p, p.m - 2, col, splat<V>(-0.5 * sh.L * inv_len));
      put_alpha(p, p.m - 1, col, splat<V>(-0.5 * sh.L * inv_len));
      hi[col.slack] = splat<V>(1.0);
      lo[col.slack] = splat<V>(-1.0);
      break;
    }
    case ShapeKind::cone: {
      // DCOL eq. 21: (x − r − α H/4 b̂x)ᵀ b̂x ≤ 0
      V* row = p.add_orthant_row(bx_r);
      for (int i = 0; i < 3; ++i) row[cx + i] = bx[i];
      put_alpha(p, p.m - 1, col, splat<V>(-0.25 * sh.H * inv_len));
      break;
    }
    case ShapeKind::polygon:
      // DCOL eq. 27: C y ≤ α d
      for (int f = 0; f < sh.num_faces; ++f) {
        V* row = p.add_orthant_row(V{});
        put_alpha(p, p.m - 1, col, splat<V>(-sh.offsets[f] * inv_len));
        row[col.slack] = splat<V>(sh.normals[2 * f]);
        row[col.slack + 1] = splat<V>(sh.normals[2 * f + 1]);
      }
      break;
    default:
      break;
  }
}

// Appends this shape's second-order cone (if any). Returns its first row, or −1.
template <class Program, class V = typename Program::V>
int add_cone_rows(Program& p, const Shape& sh, const V* r, const Mat3T<V>& Q, double inv_len, Columns col) {
  const int cx = col.x;
  if (sh.kind == ShapeKind::polytope) return -1;
  const int first = p.add_soc(sh.cone_dim());
  auto G = [&](int i) { return p.G[first + i]; };
  V* h = p.h + first;
  switch (sh.kind) {
    case ShapeKind::sphere:
    case ShapeKind::capsule:
    case ShapeKind::polygon:
      // ‖x − (r + offset)‖ ≤ αR with offset γ b̂x (DCOL eq. 15) or Q̃ y (DCOL eq. 28); a sphere has no offset.
      put_alpha(p, first, col, splat<V>(-sh.R * inv_len));
      for (int i = 0; i < 3; ++i) {
        G(1 + i)[cx + i] = splat<V>(-1.0);
        h[1 + i] = -r[i];
        if (sh.kind == ShapeKind::polygon) {
          G(1 + i)[col.slack] = Q.m[i][0];
          G(1 + i)[col.slack + 1] = Q.m[i][1];
        } else if (sh.kind != ShapeKind::sphere) {
          G(1 + i)[col.slack] = Q.m[i][0];
        }
      }
      break;
    case ShapeKind::cylinder:
      // DCOL eqs. 12–15 with γ eliminated: the best γ is the axial coordinate b̂xᵀ(x − r), already
      // bounded by DCOL eq. 18, so what remains is the radial distance ‖[b̂y b̂z]ᵀ(x − r)‖ ≤ αR. The same
      // set with one variable and one cone row fewer.
      put_alpha(p, first, col, splat<V>(-sh.R * inv_len));
      for (int k = 1; k < 3; ++k) {
        V qr{};
        for (int i = 0; i < 3; ++i) {
          G(k)[cx + i] = -Q.m[i][k];
          qr += Q.m[i][k] * r[i];
        }
        h[k] = -qr;
      }
      break;
    case ShapeKind::cone: {
      // DCOL eq. 22: E Qᵀ (x − r) + α (3H/4) tanβ e1 ∈ Q³, E = diag(tanβ, 1, 1)
      const double scale[3] = {sh.tan_beta, 1.0, 1.0};
      for (int k = 0; k < 3; ++k) {
        V qr{};
        for (int i = 0; i < 3; ++i) {
          G(k)[cx + i] = -scale[k] * Q.m[i][k];
          qr += Q.m[i][k] * r[i];
        }
        h[k] = -scale[k] * qr;
      }
      put_alpha(p, first, col, splat<V>(-0.75 * sh.H * inv_len * sh.tan_beta));
      break;
    }
    case ShapeKind::ellipsoid: {
      // DCOL eq. 24: ‖U Qᵀ (x − r)‖ ≤ α; in normalized coordinates U is multiplied by ℓ.
      put_alpha(p, first, col, splat<V>(-1.0));
      const double len = 1.0 / inv_len;
      for (int k = 0; k < 3; ++k) {
        V uq[3] = {};  // row k of U Qᵀ
        for (int j = k; j < 3; ++j)
          for (int i = 0; i < 3; ++i) uq[i] += sh.U[k][j] * Q.m[i][j];
        for (int i = 0; i < 3; ++i) G(1 + k)[cx + i] = -len * uq[i];
        h[1 + k] = -len * (uq[0] * r[0] + uq[1] * r[1] + uq[2] * r[2]);
      }
      break;
    }
    default:
      break;
  }
  return first;
}

}  // namespace dcol::geometry
