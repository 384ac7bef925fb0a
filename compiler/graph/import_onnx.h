// ONNX model -> vkqc graph. Quantized CNNs in QDQ form (QuantizeLinear / DequantizeLinear around
// float ops) and in operator form (QLinearConv, QLinearMatMul), and int4 transformer weights
// (com.microsoft MatMulNBits), mapped exactly onto DESIGN 4's semantics or refused with the
// reason. NCHW tensors become NHWC inside the graph (conv weights transposed offline); graph
// inputs and outputs keep the model's layout (a transpose dispatch) unless NHWC is asked for.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/common/result.h"
#include "compiler/graph/ir.h"

namespace vkqc {

struct OnnxImportOptions {
  // 4-d graph inputs / outputs: false = the model's NCHW (the importer adds a transpose),
  // true = NHWC (the caller supplies / receives NHWC; no transpose dispatch).
  bool nhwc_inputs = false;
  bool nhwc_outputs = false;
  // Binds symbolic or unknown input dimensions: input name -> full shape (ONNX order).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::function<void(const std::string&)> log;  // one line per decision worth knowing
};

// The ONNX ops (domain ai.onnx unless prefixed) ImportOnnx converts, comma-separated.
const char* OnnxSupportedOps();

Result<ir::Graph> ImportOnnx(const std::string& path, const OnnxImportOptions& options);

}  // namespace vkqc
