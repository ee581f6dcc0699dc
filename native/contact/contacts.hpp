// Contact points, normals and frames between two primitives, with their derivatives (Nimble App. C,
// Simple §III-D).
//
// The signed distance (distance.hpp) gives the witness normal n (from a to b). Each shape with a
// contact rule then offers its support feature along the witness plane: the points of a within the
// feature tolerance of its farthest extent along n, and those of b along −n: a point, a segment or a
// polygon, inflated by a radius (a sphere is a point of radius R, a capsule a segment of radius R, a
// padded polygon a polygon of radius R; a polytope's vertices, edges and faces have radius 0).
// Projected into the witness plane these are Nimble's witness hulls (Nimble App. C1): vertices of one
// inside the other's polygon are point–face contacts, crossing edges are edge–edge contacts, and a
// point against a segment or a point is Nimble's sphere–sphere, mesh–sphere, pipe–sphere,
// vertex–pipe rules (Nimble App. C2–C6) in one formula. A cylinder's or a cone's flat cap facing the
// normal is a square of four rim points, a cylinder's side line its axis inflated by its radius (as a
// capsule's), a cone's the segment from its apex to its base's rim; against a segment or a face these
// give line and patch contacts, and against a face a tilted cap or side gives its rim points turned to
// the face, which slide round the rim as the shapes turn (each at its own depth). Elsewhere (a rim point, an apex, a
// point against a cap) and for ellipsoids, which are smooth: one contact at the signed distance's witness points.
//
// The witness normal comes from the separating axes (two boxes), closed forms (a sphere's or a
// capsule's axis against another's, crossing axes included) or GJK/EPA (gjk.hpp, cylinders and cones
// by their support functions) instead of the cone program, which then only decides what those cannot
// and gives the one contact of the DISTANCE rule (to the solver's accuracy, with its derivatives). Where
// the normal is a polytope face's, or within a few degrees of it, that face and the other shape's
// incident feature (a polytope's face turned most against it, a capsule's axis, a polygon, a cap's rim
// or a side line) are taken whole and clipped against each other as above (Box2D's and ODE's box–box
// clipping), each contact at its own depth and those beyond the margin dropped: a deep or tilted
// overlap on a face gives the patch, not its deepest point.
//
// Every contact is computed from the world positions of the features that define it (vertices,
// segment ends, centres, a face's normal) by a formula written over a scalar type, so that the same
// code gives its derivatives with respect to rigid motions of the two bodies (dual.hpp).
#pragma once

#include "geometry/proximity_types.hpp"

namespace dcol::contact {

// The geometry the contacts are computed from.
using geometry::Pose;
using geometry::Shape;
using geometry::ShapeKind;
using geometry::SolverSettings;
using geometry::SolveStatus;

enum class ContactRule : int {
  point_point = 0,  // two points (sphere centres, vertices, segment ends), each with a radius
  point_edge,       // a point of a against the interior of a segment of b
  edge_point,       // a segment of a against a point of b
  edge_edge,        // two crossing segments (box edges, capsule axes)
  point_face,       // a point of a over a face of b
  face_point,       // a face of a under a point of b
  distance,         // no rule: the signed distance's witness points and normal
};

struct Contact {
  double point[3], normal[3];       // world; the normal is unit, from a to b
  double tangent1[3], tangent2[3];  // with the normal, a right-handed orthonormal frame
  double separation;                // > 0 apart, < 0 penetrating, along the normal
  ContactRule rule;
};

// Derivatives of one contact with respect to rigid motions δ = [δp; δθ] of body a, then body b.
struct ContactDerivatives {
  double point[3][12], normal[3][12], tangent1[3][12], tangent2[3][12];
  double separation[12];
};

constexpr int kMaxFeaturePoints = 64;  // a support polygon keeps at most this many corners
constexpr int kMaxPairContacts = 64;

struct ContactSettings {
  double margin = 0.0;              // report contacts of pairs whose signed distance is ≤ margin
  double feature_tolerance = 1e-3;  // relative to the shapes' size: points this close to the plane count
};

// Contacts of shapes a and b at body poses pa, pb (nothing if their signed distance exceeds the
// margin); with deriv, each contact's derivatives. Returns the count, at most kMaxPairContacts; with
// status, the outcome of the signed-distance solve that decided them (none where it is not finite).
int pair_contacts(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const ContactSettings& cs,
                  const SolverSettings& settings, Contact* out, ContactDerivatives* deriv,
                  SolveStatus* status = nullptr);

// pair_contacts for a pair whose bounding boxes, grown by the margin, a broad phase has found to overlap
// (find_contacts' sweep and prune): the same contacts without testing the boxes again.
int overlapping_pair_contacts(const Shape& a, const Pose& pa, const Shape& b, const Pose& pb, const ContactSettings& cs,
                              const SolverSettings& settings, Contact* out, ContactDerivatives* deriv,
                              SolveStatus* status = nullptr);

// Keeps at most kPatchPoints of a pair's `count` contacts (and their derivatives, if deriv) that span
// its contact patch, in place: the one farthest from their centroid, the one farthest from it, the one
// making the largest triangle with those two, and the one adding the most area to that triangle (none
// if every other lies inside it). Returns the new count. A flat patch of many vertices (a mesh's face,
// a clipped polygon) then rests on the corners of its support polygon instead of on rows that repeat
// each other. The choice is by position: a flat patch's points are equally deep, and choosing by depth
// would follow round-off. kept, if given, receives the kept contacts' places among the `count`,
// ascending.
constexpr int kPatchPoints = 4;
int reduce_patch(Contact* contacts, ContactDerivatives* deriv, int count, int* kept = nullptr);

}  // namespace dcol::contact
