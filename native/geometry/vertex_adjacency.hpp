// Neighbours of a polytope's vertices on its hull, for finding its support point by hill climbing
// instead of a scan of every vertex (gjk.hpp's Core::adjacency; dcol.dynamics.CollisionModel builds them
// once per mesh), and where to start the climb for a direction.
//
// A linear function's maximum over a convex polytope is reached at a vertex none of whose hull edges
// leads higher, so a climb along edges from any vertex ends at a maximum. The neighbours here are the
// vertices sharing a face with a vertex (each face's vertices pairwise): a superset of the hull's edges
// that stays one where the faces are merged planes whose corners lie within a tolerance of them, not on
// them (ConvexMesh merges nearly coplanar facets). A vertex not a corner of three faces with independent
// normals (a point on a face or an edge, by that tolerance) is not `climbable`: a climb ending there
// falls back to the scan.
//
// A climb starts from the support point of a nearby direction: the directions are cut into cells by the cube
// map (the face of the cube a direction points to, and a square of a grid on it), each cell keeping the
// vertex farthest along its centre, so that a climb from it takes a step or two instead of crossing the hull.
// Where it starts does not change where it ends.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "geometry/primitives.hpp"

namespace dcol::geometry {

struct VertexAdjacency {
  std::vector<int> start;         // vertex i's neighbours: neighbours[start[i]] … neighbours[start[i + 1] − 1]
  std::vector<int> neighbours;    // in ascending order per vertex
  std::vector<char> climbable;    // whether a climb may end at vertex i
  std::vector<int> cell_support;  // per direction_cell, the vertex farthest along the cell's centre
  double coordinate_bound = 0.0;  // the vertices' largest |coordinate|
  bool empty() const { return start.empty(); }
};

// A vertex lies on a face when its offset below the face's plane is at most this fraction of the
// polytope's size: above the corners' merging, so that no hull edge is missed (an extra neighbour only
// costs a comparison).
constexpr double kIncidenceTolerance = 1e-4;
// Polytopes with fewer vertices are scanned: a climb visits about as many.
constexpr int kClimbVertices = 24;

// Squares per side of the cube map's grid on each face: cells about 20° wide, near the spread of a
// 64-vertex hull's normal cones.
constexpr int kCellsPerSide = 4;
constexpr int kDirectionCells = 6 * kCellsPerSide * kCellsPerSide;

// The cube map's cell of the direction d: the face of its largest component, and on it the square holding the
// other two components over that one (cell 0 for a zero or non-finite d: any cell is a valid start).
inline int direction_cell(const double* d) {
  const double size[3] = {std::abs(d[0]), std::abs(d[1]), std::abs(d[2])};
  const int axis = size[0] >= size[1] ? (size[0] >= size[2] ? 0 : 2) : (size[1] >= size[2] ? 1 : 2);
  const double to_grid = 0.5 * kCellsPerSide / size[axis];
  int cell = 2 * axis + (d[axis] < 0.0);
  for (const int k : {(axis + 1) % 3, (axis + 2) % 3}) {
    const double t = (d[k] * to_grid) + 0.5 * kCellsPerSide;  // in [0, kCellsPerSide]
    cell = cell * kCellsPerSide + (t >= kCellsPerSide ? kCellsPerSide - 1 : (t > 0.0 ? static_cast<int>(t) : 0));
  }
  return cell;
}

// The adjacency of a polytope with at least kClimbVertices vertices; empty for any other shape.
inline VertexAdjacency vertex_adjacency(const Shape& sh) {
  VertexAdjacency out;
  if (sh.kind != ShapeKind::polytope || sh.num_vertices < kClimbVertices) return out;
  const int V = sh.num_vertices, F = sh.num_faces;
  const double* vertex = sh.vertices.data();
  double size = 0.0;
  for (int i = 0; i < 3 * V; ++i) size = std::max(size, std::abs(vertex[i]));
  out.coordinate_bound = size;
  std::vector<std::vector<int>> on_face(F), faces_of(V);
  for (int f = 0; f < F; ++f) {
    const double* a = &sh.normals[3 * f];
    const double length = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
    for (int i = 0; i < V; ++i) {
      const double* v = vertex + 3 * i;
      if (sh.offsets[f] - (a[0] * v[0] + a[1] * v[1] + a[2] * v[2]) <= kIncidenceTolerance * size * length) {
        on_face[f].push_back(i);
        faces_of[i].push_back(f);
      }
    }
  }
  out.start.assign(1, 0);
  out.climbable.assign(V, 0);
  std::vector<int> around;
  for (int i = 0; i < V; ++i) {
    around.clear();
    for (const int f : faces_of[i])
      for (const int j : on_face[f])
        if (j != i) around.push_back(j);
    std::sort(around.begin(), around.end());
    around.erase(std::unique(around.begin(), around.end()), around.end());
    out.neighbours.insert(out.neighbours.end(), around.begin(), around.end());
    out.start.push_back(static_cast<int>(out.neighbours.size()));
    // A corner: three of its faces' unit normals with a volume well above rounding.
    const auto& faces = faces_of[i];
    const int count = static_cast<int>(faces.size());
    for (int p = 0; p < count && !out.climbable[i]; ++p)
      for (int q = p + 1; q < count && !out.climbable[i]; ++q)
        for (int r = q + 1; r < count && !out.climbable[i]; ++r) {
          const double* n[3] = {&sh.normals[3 * faces[p]], &sh.normals[3 * faces[q]], &sh.normals[3 * faces[r]]};
          double lengths = 1.0;
          for (const double* m : n) lengths *= std::sqrt(m[0] * m[0] + m[1] * m[1] + m[2] * m[2]);
          const double volume = n[0][0] * (n[1][1] * n[2][2] - n[1][2] * n[2][1]) -
                                n[0][1] * (n[1][0] * n[2][2] - n[1][2] * n[2][0]) +
                                n[0][2] * (n[1][0] * n[2][1] - n[1][1] * n[2][0]);
          if (std::abs(volume) > 1e-6 * lengths) out.climbable[i] = 1;
        }
  }
  // Each cell's centre direction, and its farthest vertex (the first of tied ones).
  out.cell_support.assign(kDirectionCells, 0);
  for (int face = 0; face < 6; ++face)
    for (int row = 0; row < kCellsPerSide; ++row)
      for (int column = 0; column < kCellsPerSide; ++column) {
        const int axis = face / 2;
        double centre[3];
        centre[axis] = face % 2 ? -1.0 : 1.0;
        centre[(axis + 1) % 3] = (2.0 * row + 1.0) / kCellsPerSide - 1.0;
        centre[(axis + 2) % 3] = (2.0 * column + 1.0) / kCellsPerSide - 1.0;
        double best_value = -INFINITY;
        int& best = out.cell_support[direction_cell(centre)];
        for (int i = 0; i < V; ++i) {
          const double* v = vertex + 3 * i;
          const double h = centre[0] * v[0] + centre[1] * v[1] + centre[2] * v[2];
          if (h > best_value) best_value = h, best = i;
        }
      }
  return out;
}

}  // namespace dcol::geometry
