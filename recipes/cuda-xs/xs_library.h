// The nuclear data library of cuda-xs as the kernel sees it: structs in
// device memory whose fields are device pointers. The host builds them with
// the addresses cuMemAlloc returned and copies them to the device, so a
// recording must keep the addresses (or rewrite the pointers) to replay.
#pragma once

/// One nuclide's pointwise data: an ascending energy grid (eV) and, at each
/// grid point, the total and absorption microscopic cross sections (barns).
struct Nuclide {
  const double *Energy; ///< Points values, ascending
  const double *Xs;     ///< Points pairs (total, absorption), interleaved
  int Points;
  int Pad;
};

/// A material: which nuclides it holds and at what atom density.
struct Material {
  const int *Nuclides;   ///< Count indices into Library::Nuclides
  const double *Density; ///< Count atom densities (atoms per barn-cm)
  int Count;
  int Pad;
};

struct Library {
  const Nuclide *Nuclides;
  const Material *Materials;
  int NuclideCount;
  int MaterialCount;
};
