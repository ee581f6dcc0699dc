// C++ side of bench_dynamics.py: times dcol's native rigid-body algorithms and Pinocchio's on the
// same robot in one process, without Python call overhead. Usage:
//   bench_dynamics_native MODEL.txt ITERATIONS
// MODEL.txt is dcol's model as written by bench_dynamics.py (a URDF parsed by dcol). Pinocchio's
// model is built from the same bodies with its specialized joints for axis-aligned axes, as its URDF
// parser does (its continuous joints then have one coordinate, the cheaper form).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>

#include "dynamics/aba_derivatives.hpp"

namespace dd = dcol::dyn;

dd::Model read_model(const char* path) {
  std::ifstream in(path);
  int nbodies;
  double gx, gy, gz;
  in >> nbodies >> gx >> gy >> gz;
  dd::Model model;
  model.gravity = {gx, gy, gz};
  for (int i = 0; i < nbodies; ++i) {
    int parent, kind;
    dd::Transform X;
    dd::Vec3 axis;
    dd::Inertia I;
    in >> parent >> kind;
    for (auto& row : X.R.m)
      for (double& x : row) in >> x;
    in >> X.p.x >> X.p.y >> X.p.z >> axis.x >> axis.y >> axis.z >> I.mass >> I.com.x >> I.com.y >> I.com.z;
    for (auto& row : I.rot.m)
      for (double& x : row) in >> x;
    model.add_body(parent, static_cast<dd::JointKind>(kind), X, axis, I);
  }
  return model;
}

pinocchio::Model pinocchio_model(const dd::Model& ours) {
  pinocchio::Model model;
  model.gravity.linear() << ours.gravity.x, ours.gravity.y, ours.gravity.z;
  for (int i = 0; i < ours.nbodies(); ++i) {
    const dd::Transform& X = ours.placement[i];
    pinocchio::SE3 placement;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) placement.rotation()(r, c) = X.R.m[r][c];
    placement.translation() << X.p.x, X.p.y, X.p.z;
    const Eigen::Vector3d axis(ours.axis[i].x, ours.axis[i].y, ours.axis[i].z);
    const std::string name = "joint" + std::to_string(i);
    const auto parent = static_cast<pinocchio::JointIndex>(ours.parent[i] + 1);
    pinocchio::JointIndex id;
    if (ours.kind[i] == dd::JointKind::floating) {
      id = model.addJoint(parent, pinocchio::JointModelFreeFlyer(), placement, name);
    } else if (ours.kind[i] == dd::JointKind::revolute) {
      if (axis == Eigen::Vector3d::UnitX())
        id = model.addJoint(parent, pinocchio::JointModelRX(), placement, name);
      else if (axis == Eigen::Vector3d::UnitY())
        id = model.addJoint(parent, pinocchio::JointModelRY(), placement, name);
      else if (axis == Eigen::Vector3d::UnitZ())
        id = model.addJoint(parent, pinocchio::JointModelRZ(), placement, name);
      else
        id = model.addJoint(parent, pinocchio::JointModelRevoluteUnaligned(axis), placement, name);
    } else {
      if (axis == Eigen::Vector3d::UnitX())
        id = model.addJoint(parent, pinocchio::JointModelPX(), placement, name);
      else if (axis == Eigen::Vector3d::UnitY())
        id = model.addJoint(parent, pinocchio::JointModelPY(), placement, name);
      else if (axis == Eigen::Vector3d::UnitZ())
        id = model.addJoint(parent, pinocchio::JointModelPZ(), placement, name);
      else
        id = model.addJoint(parent, pinocchio::JointModelPrismaticUnaligned(axis), placement, name);
    }
    const dd::Inertia& I = ours.inertia[i];
    Eigen::Matrix3d rot;
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) rot(r, c) = I.rot.m[r][c];
    model.appendBodyToJoint(id, pinocchio::Inertia(I.mass, Eigen::Vector3d(I.com.x, I.com.y, I.com.z), rot),
                            pinocchio::SE3::Identity());
  }
  return model;
}

// Mean time per call in microseconds over `iterations` calls cycling through the states; best of 3.
template <class Call>
double time_us(int iterations, int states, const Call& call) {
  double best = 1e300;
  for (int repeat = 0; repeat < 3; ++repeat) {
    const auto start = std::chrono::steady_clock::now();
    for (int n = 0; n < iterations; ++n) call(n % states);
    const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
    best = std::min(best, elapsed.count() / iterations);
  }
  return best;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s MODEL.txt ITERATIONS\n", argv[0]);
    return 2;
  }
  const dd::Model ours = read_model(argv[1]);
  const pinocchio::Model theirs = pinocchio_model(ours);
  const int iterations = std::stoi(argv[2]), states = 64;

  // Random states of the same distribution for both (each library in its own coordinates).
  std::mt19937 rng(0);
  std::normal_distribution<double> normal;
  std::vector<Eigen::VectorXd> pq, pv, pa;
  std::vector<std::vector<double>> q(states), v(states), a(states);
  for (int s = 0; s < states; ++s) {
    Eigen::VectorXd step(theirs.nv), vel(theirs.nv), acc(theirs.nv);
    for (int k = 0; k < theirs.nv; ++k) step[k] = normal(rng), vel[k] = normal(rng), acc[k] = normal(rng);
    pq.push_back(pinocchio::integrate(theirs, pinocchio::neutral(theirs), step));
    pv.push_back(vel);
    pa.push_back(acc);
    q[s].assign(ours.nq, 0.0);
    for (int i = 0; i < ours.nbodies(); ++i) {
      double* qi = &q[s][ours.q_index[i]];
      if (ours.kind[i] == dd::JointKind::floating) {
        double norm = 0.0;
        for (int k = 0; k < 7; ++k) qi[k] = normal(rng), norm += k >= 3 ? qi[k] * qi[k] : 0.0;
        for (int k = 3; k < 7; ++k) qi[k] /= std::sqrt(norm);
      } else {
        qi[0] = normal(rng);
      }
    }
    for (int k = 0; k < ours.nv; ++k) v[s].push_back(normal(rng)), a[s].push_back(normal(rng));
  }

  dd::Data data(ours);
  pinocchio::Data pdata(theirs);
  const size_t nv = ours.nv;
  std::vector<double> out(nv), J1(nv * nv), J2(nv * nv), J3(nv * nv);
  struct Row {
    const char* name;
    double ours, theirs;
  };
  const Row rows[] = {
      {"forward kinematics",
       time_us(iterations, states, [&](int s) { dd::forward_kinematics(ours, data, q[s].data()); }),
       time_us(iterations, states, [&](int s) { pinocchio::forwardKinematics(theirs, pdata, pq[s]); })},
      {"CRBA (M)", time_us(iterations, states, [&](int s) { dd::crba(ours, data, q[s].data()); }),
       time_us(iterations, states, [&](int s) { pinocchio::crba(theirs, pdata, pq[s]); })},
      {"RNEA",
       time_us(iterations, states,
               [&](int s) { dd::rnea(ours, data, q[s].data(), v[s].data(), a[s].data(), out.data()); }),
       time_us(iterations, states, [&](int s) { pinocchio::rnea(theirs, pdata, pq[s], pv[s], pa[s]); })},
      {"ABA",
       time_us(iterations, states,
               [&](int s) { dd::aba(ours, data, q[s].data(), v[s].data(), a[s].data(), out.data()); }),
       time_us(iterations, states, [&](int s) { pinocchio::aba(theirs, pdata, pq[s], pv[s], pa[s]); })},
      {"RNEA derivatives",
       time_us(iterations, states,
               [&](int s) {
                 dd::rnea_derivatives(ours, data, q[s].data(), v[s].data(), a[s].data(), J1.data(), J2.data(),
                                      J3.data());
               }),
       time_us(iterations, states,
               [&](int s) { pinocchio::computeRNEADerivatives(theirs, pdata, pq[s], pv[s], pa[s]); })},
      {"ABA derivatives",
       time_us(iterations, states,
               [&](int s) {
                 dd::aba_derivatives(ours, data, q[s].data(), v[s].data(), a[s].data(), out.data(), J1.data(),
                                     J2.data(), J3.data());
               }),
       time_us(iterations, states,
               [&](int s) { pinocchio::computeABADerivatives(theirs, pdata, pq[s], pv[s], pa[s]); })},
  };
  for (const Row& row : rows) std::printf("%s\t%.4f\t%.4f\n", row.name, row.ours, row.theirs);
  return 0;
}
