// Kinematic tree of an articulated rigid-body system, and the work buffers the algorithms share.
// As in Pinocchio, the model is immutable once built and a Data object holds every buffer, sized
// once, so the algorithms allocate nothing.
#pragma once

#include <vector>

#include "dynamics/spatial.hpp"

namespace dcol::dyn {

enum class JointKind { revolute, prismatic, floating };

inline int joint_nq(JointKind k) { return k == JointKind::floating ? 7 : 1; }
inline int joint_nv(JointKind k) { return k == JointKind::floating ? 6 : 1; }

// Bodies are numbered so that a parent precedes its children; body i moves with joint i. A frame is
// a fixed pose inside a body (URDF links lumped into a body by fixed joints, and joint frames).
struct Model {
  int nq = 0, nv = 0;
  Vec3 gravity{0.0, 0.0, -9.81};
  std::vector<int> parent;                 // body → parent body, −1 for the world
  std::vector<JointKind> kind;             // body → joint kind
  std::vector<Transform> placement;        // body → joint frame in the parent body's frame at q = 0
  std::vector<Vec3> axis;                  // body → unit joint axis in the joint frame (revolute, prismatic)
  std::vector<Inertia> inertia;            // body → inertia in the body frame
  std::vector<int> q_index, v_index;       // body → first index in q and in v
  std::vector<int> dof_body;               // dof → body
  std::vector<int> dof_parent;             // dof → previous dof on the path to the root, −1 at the root
  std::vector<int> frame_body;             // frame → body (−1: the world)
  std::vector<Transform> frame_placement;  // frame → pose in its body's frame
  std::vector<int> tree_root;              // body → the root of its tree (the first body on its path)
  std::vector<int> tree_reference;         // root → its tree's first body with mass (−1: none), whose
                                           // position is the tree's origin (see Data)

  int nbodies() const { return static_cast<int>(parent.size()); }
  int nv_of(int body) const { return joint_nv(kind[body]); }

  // Appends a body; its parent must already exist. Returns its index.
  int add_body(int parent_body, JointKind joint, const Transform& joint_placement, const Vec3& joint_axis,
               const Inertia& body_inertia) {
    const int body = nbodies();
    parent.push_back(parent_body);
    kind.push_back(joint);
    placement.push_back(joint_placement);
    axis.push_back(joint_axis);
    inertia.push_back(body_inertia);
    const int root = parent_body < 0 ? body : tree_root[parent_body];
    tree_root.push_back(root);
    tree_reference.push_back(-1);
    if (tree_reference[root] < 0 && body_inertia.mass > 0.0) tree_reference[root] = body;
    q_index.push_back(nq);
    v_index.push_back(nv);
    const int parent_last_dof = parent_body < 0 ? -1 : v_index[parent_body] + nv_of(parent_body) - 1;
    for (int k = 0; k < joint_nv(joint); ++k) {
      dof_body.push_back(body);
      dof_parent.push_back(k == 0 ? parent_last_dof : nv + k - 1);
    }
    nq += joint_nq(joint);
    nv += joint_nv(joint);
    return body;
  }
};

// Work buffers for one model. Spatial quantities are in world axes about an origin per tree, a point
// fixed in the world that forward kinematics puts at the tree's first body with mass (its root if it has
// none), so that the recursions' lever arms stay at the scale of each robot or free body wherever it is
// in the world: about a common origin, a tree 1 km away would lose six digits to cancellation (a free
// body's inertia I + m d² about it, against I). No recursion mixes trees, so each works in its own.
struct Data {
  std::vector<Vec3> origin;          // body → its tree's origin, in the world
  std::vector<Transform> body_pose;  // body → pose of its frame relative to its tree's origin
  std::vector<Vec6> S;               // dof → motion subspace column (joint axis motion)
  std::vector<Vec6> velocity;        // body → spatial velocity ν
  std::vector<Vec6> acceleration;    // body → spatial acceleration (gravity as a base acceleration)
  std::vector<SpatialInertia> world_inertia;
  std::vector<Vec6> force;                // body → net force of the subtree rooted at the body
  std::vector<SpatialInertia> composite;  // body → composite inertia of its subtree
  // Derivative recursions.
  std::vector<Mat6> composite_rate;       // body → Σ over the subtree of (ν ×* I − I ν×)
  std::vector<Vec6> momentum;             // body → Σ over the subtree of I ν
  std::vector<Vec6> dv_dq, da_dq, da_dv;  // dof → columns of the chain-rule terms (see rnea_derivatives.hpp)
  // Articulated-body recursion.
  std::vector<Mat6> articulated;       // body → articulated inertia Iᴬ
  std::vector<Vec6> bias;              // body → articulated bias force pᴬ
  std::vector<Vec6> velocity_product;  // body → c = ν × S q̇
  std::vector<Vec6> U;                 // dof → Iᴬ S
  std::vector<double> D_inverse;       // body → (Sᵀ Iᴬ S)⁻¹, nv_i × nv_i row-major at 36·body
  std::vector<double> u;               // dof → τ − Sᵀ pᴬ
  // Joint-space matrices, nv × nv row-major.
  std::vector<double> mass_matrix;  // M, then its tree-sparse LᵀDL factor in place

  explicit Data(const Model& model) {
    const int nb = model.nbodies(), nv = model.nv;
    origin.resize(nb);
    body_pose.resize(nb);
    S.resize(nv);
    velocity.resize(nb);
    acceleration.resize(nb);
    world_inertia.resize(nb);
    force.resize(nb);
    composite.resize(nb);
    composite_rate.resize(nb);
    momentum.resize(nb);
    dv_dq.resize(nv);
    da_dq.resize(nv);
    da_dv.resize(nv);
    articulated.resize(nb);
    bias.resize(nb);
    velocity_product.resize(nb);
    U.resize(nv);
    D_inverse.resize(36 * nb);
    u.resize(nv);
    mass_matrix.resize(static_cast<size_t>(nv) * nv);
  }
};

}  // namespace dcol::dyn
