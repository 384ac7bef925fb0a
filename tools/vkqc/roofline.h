// `vkqc roofline`: measures the local device's roofline (stream read bandwidth, packed int8 dot,
// fp32 and fp16 FMA rates) with the microbenchmark bundles of roofline_bundles.h, loaded and
// timed through the runtime C API (GPU timestamps, median of >= 10 runs covering >= min_ms),
// prints a table and optionally stores the result as the "roofline" member of a profile sidecar.
// Also the roofline arithmetic `vkqc bench --roofline` uses.
#pragma once
#include <cstdint>
#include <string>

#include "compiler/common/result.h"
#include "compiler/profile/profile.h"

namespace vkqc {

struct RooflineOptions {
  std::string out;          // sidecar to write or update (must end in .vkqc.json); empty: print only
  int device = -1;          // runtime device index; -1: the first
  double min_ms = 100;      // per measurement, at least this much measured GPU time (and >= 10 runs)
  uint64_t bytes = 0;       // read-bandwidth buffer; 0: the default for the device type
  bool validation = false;  // Khronos validation; any message fails the command
};

// Errors: bad options (UserError, before any measurement), no device, a validation message, a
// runtime failure, a read pass whose checksum is wrong.
Status RunRoofline(const RooflineOptions& options);

// Peak rates a bench compares against; 0 = unknown.
struct RooflinePeaks {
  double read_gbps = 0;      // 1e9 bytes/s
  double int_tops = 0;       // layers on the integer path (int8 dot)
  double float_tflops = 0;   // other layers (fp32 FMA)
  double cm_int_tops = 0;    // cooperative-matrix layers with int8 operands
  double cm_fp16_tflops = 0; // cooperative-matrix layers with fp16 operands
};

// `vkqc bench`'s table: per layer median time, GB/s and GOP/s and, when any peak is known, the
// fractions of the roofline: the time the peaks allow (bytes / read bandwidth; ops / the int8 dot
// peak on the integer path, the fp32 FMA peak otherwise, the cooperative-matrix int8 or fp16 peak
// for cooperative-matrix variants: "_cm" in the variant name) over the measured time, for bandwidth,
// compute, and the larger of the two ("%roofline"). The total row sums the allowed times over the
// layers (for %roofline, each layer's larger one). "-" where a needed peak is unknown.
class BenchTable {
 public:
  explicit BenchTable(const RooflinePeaks& peaks);  // prints the header
  void Layer(const char* name, const char* variant, double ns, uint64_t bytes, uint64_t ops, bool integer_path);
  void Total(double ns);  // the whole program's time

 private:
  void Row(const char* name, const char* variant, double ns, uint64_t bytes, uint64_t ops, double bw_s,
           double compute_s, double bound_s, bool compute_known) const;
  RooflinePeaks peaks_;
  bool any_ = false;
  uint64_t bytes_ = 0, ops_ = 0;
  double bw_s_ = 0, compute_s_ = 0, bound_s_ = 0;
  bool compute_known_ = true;
};

}  // namespace vkqc
