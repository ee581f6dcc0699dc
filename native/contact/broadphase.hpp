// Broadphase of a scene: axis-aligned bounding boxes of the shapes from their support points, and
// sweep and prune along x (sort the boxes' lower x, sweep keeping the boxes still open): O(N log N)
// plus the overlapping pairs for scenes that are not all stacked along x.
#pragma once

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "core/lanes.hpp"
#include "geometry/support.hpp"

namespace dcol::contact {

using geometry::Pose;
using geometry::Shape;
using geometry::shape_frame;
using geometry::ShapeKind;
using geometry::support_point;

struct Box3 {
  double lower[3], upper[3];
};

// The shape's bounding box at its body pose, grown by margin on every side.
inline Box3 bounding_box(const Shape& sh, const Pose& body, double margin) {
  const Pose frame = shape_frame(sh, body);
  Box3 box;
  if (sh.kind == ShapeKind::polytope) {  // the six support points in one pass over the vertex blocks
    using Block = Lanes<geometry::kVertexBlock>;
    const double infinity = std::numeric_limits<double>::infinity();
    Block lower[3], upper[3];
    for (int axis = 0; axis < 3; ++axis) lower[axis] = splat<Block>(infinity), upper[axis] = splat<Block>(-infinity);
    for (size_t start = 0; start < sh.vertex_blocks.size(); start += 3 * geometry::kVertexBlock) {
      Block y[3];
      std::memcpy(y, sh.vertex_blocks.data() + start, sizeof(y));
      for (int axis = 0; axis < 3; ++axis) {
        const Block w = splat<Block>(frame.Q.m[axis][0]) * y[0] + splat<Block>(frame.Q.m[axis][1]) * y[1] +
                        splat<Block>(frame.Q.m[axis][2]) * y[2];
        lower[axis] = lane_min(lower[axis], w);
        upper[axis] = lane_max(upper[axis], w);
      }
    }
    for (int axis = 0; axis < 3; ++axis) {
      box.lower[axis] = infinity, box.upper[axis] = -infinity;
      for (int lane = 0; lane < geometry::kVertexBlock; ++lane) {
        box.lower[axis] = std::min(box.lower[axis], lower[axis][lane]);
        box.upper[axis] = std::max(box.upper[axis], upper[axis][lane]);
      }
      box.lower[axis] += frame.r[axis] - margin;
      box.upper[axis] += frame.r[axis] + margin;
    }
    return box;
  }
  for (int axis = 0; axis < 3; ++axis) {
    double u[3] = {0.0, 0.0, 0.0}, p[3];
    u[axis] = 1.0;
    support_point(sh, frame, u, p);
    box.upper[axis] = p[axis] + margin;
    u[axis] = -1.0;
    support_point(sh, frame, u, p);
    box.lower[axis] = p[axis] - margin;
  }
  return box;
}

// Whether two boxes overlap along y and z (touching counts).
inline bool overlap_yz(const Box3& b, const Box3& c) {
  return c.upper[1] >= b.lower[1] && b.upper[1] >= c.lower[1] && c.upper[2] >= b.lower[2] && b.upper[2] >= c.lower[2];
}

// Whether two boxes overlap (touching counts).
inline bool overlap(const Box3& b, const Box3& c) {
  return c.upper[0] >= b.lower[0] && b.upper[0] >= c.lower[0] && overlap_yz(b, c);
}

// Pairs (i, j), i < j, of boxes that overlap (touching counts), in sweep order, into `pairs`; `order`
// and `open` are scratch, so a caller that keeps the three vectors allocates nothing once they have grown.
inline void sweep_and_prune(const std::vector<Box3>& boxes, std::vector<int>& order, std::vector<int>& open,
                            std::vector<std::pair<int, int>>& pairs) {
  const int n = static_cast<int>(boxes.size());
  order.resize(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int i, int j) { return boxes[i].lower[0] < boxes[j].lower[0]; });
  pairs.clear();
  open.clear();  // boxes whose x interval may still reach the sweep position
  for (int i : order) {
    const Box3& b = boxes[i];
    // Drop the boxes that ended before this one starts; the rest overlap it along x.
    open.erase(std::remove_if(open.begin(), open.end(), [&](int j) { return boxes[j].upper[0] < b.lower[0]; }),
               open.end());
    for (int j : open) {
      if (overlap_yz(b, boxes[j])) pairs.emplace_back(std::min(i, j), std::max(i, j));
    }
    open.push_back(i);
  }
}

inline std::vector<std::pair<int, int>> sweep_and_prune(const std::vector<Box3>& boxes) {
  std::vector<int> order, open;
  std::vector<std::pair<int, int>> pairs;
  sweep_and_prune(boxes, order, open, pairs);
  return pairs;
}

}  // namespace dcol::contact
