// Forward kinematics: body poses and joint motion subspaces in world axes, frame poses, frame
// Jacobians and their derivatives with respect to q.
#pragma once

#include "dynamics/model.hpp"

namespace dcol::dyn {

// Pose of the child side of a joint relative to its joint frame.
inline Transform joint_transform(const Model& model, int body, const double* q) {
  const double* qi = q + model.q_index[body];
  switch (model.kind[body]) {
    case JointKind::revolute:
      return {axis_angle(model.axis[body], qi[0]), {}};
    case JointKind::prismatic:
      return {Mat3::identity(), qi[0] * model.axis[body]};
    case JointKind::floating:
      return {quaternion_matrix(qi + 3), {qi[0], qi[1], qi[2]}};
  }
  return {};
}

// Column k of the joint's motion subspace in the body frame. A floating joint's velocity is the
// body-frame twist [v; ω], as in Pinocchio's free-flyer.
inline Vec6 local_subspace(const Model& model, int body, int k) {
  switch (model.kind[body]) {
    case JointKind::revolute:
      return {{}, model.axis[body]};
    case JointKind::prismatic:
      return {model.axis[body], {}};
    case JointKind::floating: {
      Vec6 e;
      double* entries[6] = {&e.lin.x, &e.lin.y, &e.lin.z, &e.ang.x, &e.ang.y, &e.ang.z};
      *entries[k] = 1.0;
      return e;
    }
  }
  return {};
}

inline void forward_kinematics(const Model& model, Data& data, const double* q) {
  for (int i = 0; i < model.nbodies(); ++i) {
    const Transform local = model.placement[i] * joint_transform(model, i, q);
    const int p = model.parent[i];
    data.body_pose[i] = p < 0 ? local : data.body_pose[p] * local;
  }
  for (int i = 0; i < model.nbodies(); ++i) {  // every origin from the world poses, before any is shifted
    const int root = model.tree_root[i], reference = model.tree_reference[root];
    data.origin[i] = data.body_pose[reference >= 0 ? reference : root].p;
  }
  for (int i = 0; i < model.nbodies(); ++i) {
    data.body_pose[i].p = data.body_pose[i].p - data.origin[i];
    for (int k = 0; k < model.nv_of(i); ++k)
      data.S[model.v_index[i] + k] = motion_to_world(data.body_pose[i], local_subspace(model, i, k));
  }
}

// Pose of a frame relative to its tree's origin (frame_origin; the world's frames: to the world's).
inline Transform frame_pose(const Model& model, const Data& data, int frame) {
  const int body = model.frame_body[frame];
  return body >= 0 ? data.body_pose[body] * model.frame_placement[frame] : model.frame_placement[frame];
}

// The point, in the world, that frame_pose's position is relative to.
inline Vec3 frame_origin(const Model& model, const Data& data, int frame) {
  const int body = model.frame_body[frame];
  return body >= 0 ? data.origin[body] : Vec3{};
}

// Whether dof k lies on the path from dof j to the root, j's own joint included: then a motion of k
// carries j's axis along (dS_j/dq_k = S_k × S_j), for a floating joint's six columns among themselves
// too, since its velocity is a body-frame twist.
inline bool moves_axis_of(const Model& model, int k, int j) {
  const int body_k = model.dof_body[k];
  for (int b = model.dof_body[j]; b >= 0; b = model.parent[b])
    if (b == body_k) return true;
  return false;
}

// Column k of a frame's Jacobian, the frame origin at `origin`: [S_k,lin + S_k,ang × origin; S_k,ang],
// written to out[0], out[stride], …, out[5 stride].
inline void frame_jacobian_column(const Data& data, const Vec3& origin, int k, double* out, int stride) {
  const Vec6& s = data.S[k];
  const Vec3 lin = s.lin + cross(s.ang, origin);
  const double column[6] = {lin.x, lin.y, lin.z, s.ang.x, s.ang.y, s.ang.z};
  for (int r = 0; r < 6; ++r) out[r * stride] = column[r];
}

// Jacobian of a frame after forward_kinematics: J (6 × nv row-major, zeroed here), rows [velocity of
// the frame origin; angular velocity], world axes.
inline void frame_jacobian(const Model& model, const Data& data, int frame, double* J) {
  const int nv = model.nv;
  for (int r = 0; r < 6 * nv; ++r) J[r] = 0.0;
  const Vec3 origin = frame_pose(model, data, frame).p;
  for (int body = model.frame_body[frame]; body >= 0; body = model.parent[body])
    for (int k = model.v_index[body]; k < model.v_index[body] + model.nv_of(body); ++k)
      frame_jacobian_column(data, origin, k, J + k, nv);
}

// The columns of frame_jacobian for the dofs dofs[0..count) (those that move the frame: the others'
// are zero) into out (6 × count row-major): what a frame touching a few dofs of a large model needs.
inline void frame_jacobian_columns(const Model& model, const Data& data, int frame, const int* dofs, int count,
                                   double* out) {
  const Vec3 origin = frame_pose(model, data, frame).p;
  for (int t = 0; t < count; ++t) frame_jacobian_column(data, origin, dofs[t], out + t, count);
}

// dJ/dq after forward_kinematics: out (6 × nv × nv row-major, zeroed here), out[r][k][j] = ∂J[r][k]/∂q_j.
// The frame origin o moves with ∂o/∂q_j = S_j,lin + S_j,ang × o; the axis S_k turns with S_j × S_k.
inline void frame_jacobian_derivative(const Model& model, const Data& data, int frame, double* out) {
  const int nv = model.nv;
  for (int r = 0; r < 6 * nv * nv; ++r) out[r] = 0.0;
  const Vec3 origin = frame_pose(model, data, frame).p;
  for (int body_k = model.frame_body[frame]; body_k >= 0; body_k = model.parent[body_k])
    for (int k = model.v_index[body_k]; k < model.v_index[body_k] + model.nv_of(body_k); ++k)
      for (int body_j = model.frame_body[frame]; body_j >= 0; body_j = model.parent[body_j])
        for (int j = model.v_index[body_j]; j < model.v_index[body_j] + model.nv_of(body_j); ++j) {
          const Vec6& sk = data.S[k];
          const Vec6& sj = data.S[j];
          const Vec6 dS = moves_axis_of(model, j, k) ? cross_motion(sj, sk) : Vec6{};
          const Vec3 d_origin = sj.lin + cross(sj.ang, origin);
          const Vec3 lin = dS.lin + cross(dS.ang, origin) + cross(sk.ang, d_origin);
          const double column[6] = {lin.x, lin.y, lin.z, dS.ang.x, dS.ang.y, dS.ang.z};
          for (int r = 0; r < 6; ++r) out[(r * nv + k) * nv + j] = column[r];
        }
}

}  // namespace dcol::dyn
