// `vkqc bench --attribute`: what each group of layers costs inside the program, measured without
// per-layer timestamps (they add ~1.9 us per layer on an H200, bench/RESULTS.md session 11): the
// program recorded again with nothing left out (the control) against it with the group's dispatches
// left out (vkqc_model_time_without both), runs of the two interleaved. The control, not the
// model's own command buffer, is the reference: on the H200 a command buffer recorded again for
// the 1b decode step ran ~11 us slower than the model's own, the same commands. Layers group by name with every run of
// digits as '#' ("layers.3.mlp.down_proj" -> "layers.#.mlp.down_proj"), so a decoder's layers of
// one role across its blocks form one group.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "vkqc/vkqc.h"

namespace vkqc {

// The group key of a layer name: each maximal run of decimal digits replaced by '#'.
std::string LayerGroupKey(const std::string& name);

struct LayerGroup {
  std::string key;
  std::vector<uint32_t> layers;  // in program order
};
// The program's layers grouped by LayerGroupKey, groups in the order of their first layer.
std::vector<LayerGroup> GroupLayers(const std::vector<std::string>& layer_names);

struct Attribution {
  std::string key;         // a group, or "(every layer)"
  size_t layers = 0;
  double without_ns = 0;   // median time of the program with the group left out
  double whole_ns = 0;     // median time of the control (nothing left out), runs interleaved with those
  size_t runs = 0;         // pairs of runs
};

struct AttributionTable {
  double program_ns = 0;   // the model's own command buffer, whole-buffer timestamps only
  double control_ns = 0;   // the same commands recorded again (median over every row's runs)
  std::vector<Attribution> rows;
};

// Measures every group (and, first, every layer at once: what is left is the command buffer's own
// floor), each for at least min_ms of whole-program runs and 10 pairs. Results of the model are not
// meaningful afterwards (see vkqc_model_time_without).
Result<AttributionTable> AttributeLayers(vkqc_model model, uint32_t program, double min_ms);

// Prints the table: group, layers, control, without, cost in the program (control - without), share.
void PrintAttribution(const AttributionTable& table);

}  // namespace vkqc
