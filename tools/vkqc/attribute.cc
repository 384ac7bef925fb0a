#include "tools/vkqc/attribute.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "tools/vkqc/timing.h"

namespace vkqc {

std::string LayerGroupKey(const std::string& name) {
  std::string key;
  for (size_t i = 0; i < name.size();) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      key += '#';
      while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) ++i;
    } else {
      key += name[i++];
    }
  }
  return key;
}

std::vector<LayerGroup> GroupLayers(const std::vector<std::string>& layer_names) {
  std::vector<LayerGroup> groups;
  for (uint32_t i = 0; i < layer_names.size(); ++i) {
    const std::string key = LayerGroupKey(layer_names[i]);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const LayerGroup& g) { return g.key == key; });
    if (it == groups.end()) groups.push_back({key, {i}});
    else it->layers.push_back(i);
  }
  return groups;
}

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Pairs of runs, the control (nothing left out) then the program without `mask`'s layers, until
// min_ms of control runs and at least 10 pairs; the control's times are appended to `controls`.
Result<Attribution> MeasureWithout(vkqc_model m, uint32_t program, const std::vector<uint8_t>& mask, double min_ms,
                                   std::vector<double>* controls) {
  const std::vector<uint8_t> none(mask.size(), 0);
  std::vector<double> whole, without;
  double acc_ms = 0;
  while ((acc_ms < min_ms || whole.size() < 10) && whole.size() < 100000) {
    double w = 0, o = 0;
    if (vkqc_model_time_without(m, program, none.data(), &w) != VKQC_OK) return UserError(vkqc_last_error());
    if (vkqc_model_time_without(m, program, mask.data(), &o) != VKQC_OK) return UserError(vkqc_last_error());
    whole.push_back(w);
    without.push_back(o);
    acc_ms += w / 1e6;
  }
  controls->insert(controls->end(), whole.begin(), whole.end());
  Attribution a;
  a.whole_ns = Median(whole);
  a.without_ns = Median(without);
  a.runs = whole.size();
  return a;
}

}  // namespace

Result<AttributionTable> AttributeLayers(vkqc_model m, uint32_t program, double min_ms) {
  const uint32_t nl = vkqc_model_layer_count(m, program);
  std::vector<std::string> names(nl);
  for (uint32_t i = 0; i < nl; ++i) {
    vkqc_layer_info li;
    if (vkqc_model_layer_info(m, program, i, &li) != VKQC_OK) return UserError(vkqc_last_error());
    names[i] = li.name ? li.name : "";
  }
  AttributionTable table;
  std::vector<double> controls;
  VKQC_ASSIGN_OR_RETURN(Timing own, Measure(m, kWholeProgram, min_ms, program));
  table.program_ns = own.median_ns;
  {
    VKQC_ASSIGN_OR_RETURN(Attribution a, MeasureWithout(m, program, std::vector<uint8_t>(nl, 1), min_ms, &controls));
    a.key = "(every layer)";
    a.layers = nl;
    table.rows.push_back(a);
  }
  for (const LayerGroup& g : GroupLayers(names)) {
    std::vector<uint8_t> mask(nl, 0);
    for (uint32_t l : g.layers) mask[l] = 1;
    VKQC_ASSIGN_OR_RETURN(Attribution a, MeasureWithout(m, program, mask, min_ms, &controls));
    a.key = g.key;
    a.layers = g.layers.size();
    table.rows.push_back(a);
  }
  table.control_ns = Median(controls);
  return table;
}

void PrintAttribution(const AttributionTable& t) {
  std::printf("\ncost inside the program (each group's dispatches left out; whole-program timestamps only):\n");
  std::printf("the program %.2f us; recorded again, nothing left out (each row's control) %.2f us\n",
              t.program_ns / 1e3, t.control_ns / 1e3);
  std::printf("%-44s %6s %11s %11s %11s %7s\n", "group", "layers", "control us", "without us", "cost us", "share");
  for (const Attribution& a : t.rows) {
    const double cost = a.whole_ns - a.without_ns;
    std::printf("%-44s %6zu %11.2f %11.2f %11.2f %6.1f%%\n", a.key.c_str(), a.layers, a.whole_ns / 1e3,
                a.without_ns / 1e3, cost / 1e3, a.whole_ns > 0 ? 100.0 * cost / a.whole_ns : 0.0);
  }
}

}  // namespace vkqc
