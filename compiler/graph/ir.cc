#include "compiler/graph/ir.h"

#include <algorithm>
#include <cmath>

namespace vkqc::ir {

const char* DTypeName(DType t) {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F16:
      return "f16";
    case DType::I8:
      return "i8";
    case DType::U8:
      return "u8";
    case DType::I4:
      return "i4";
    case DType::U4:
      return "u4";
    case DType::I32:
      return "i32";
  }
  return "unknown-dtype";
}

int DTypeBits(DType t) {
  switch (t) {
    case DType::F32:
      return 32;
    case DType::F16:
      return 16;
    case DType::I8:
      return 8;
    case DType::U8:
      return 8;
    case DType::I4:
      return 4;
    case DType::U4:
      return 4;
    case DType::I32:
      return 32;
  }
  return 0;
}

const char* SchemeName(Scheme s) {
  switch (s) {
    case Scheme::None:
      return "none";
    case Scheme::Q8CSW:
      return "q8csw";
    case Scheme::Q4GSW:
      return "q4gsw";
    case Scheme::Q4GAW:
      return "q4gaw";
    case Scheme::Q8TA:
      return "q8ta";
    case Scheme::DQ8CA:
      return "dq8ca";
    case Scheme::Q8TO:
      return "q8to";
    case Scheme::Float:
      return "float";
    case Scheme::Q8PC:
      return "q8pc";
    case Scheme::Q8GSW:
      return "q8gsw";
    case Scheme::Q4GMW:
      return "q4gmw";
  }
  return "unknown-scheme";
}

const char* OpTypeName(OpType t) {
  switch (t) {
    case OpType::Linear:
      return "linear";
    case OpType::Mul:
      return "mul";
    case OpType::Silu:
      return "silu";
    case OpType::Quantize:
      return "quantize";
    case OpType::Dequantize:
      return "dequantize";
    case OpType::Conv2d:
      return "conv2d";
    case OpType::Add:
      return "add";
    case OpType::AvgPool2d:
      return "avg_pool2d";
    case OpType::Embedding:
      return "embedding";
    case OpType::RmsNorm:
      return "rms_norm";
    case OpType::Rope:
      return "rope";
    case OpType::Attention:
      return "attention";
    case OpType::Argmax:
      return "argmax";
    case OpType::MaxPool2d:
      return "max_pool2d";
    case OpType::Concat:
      return "concat";
    case OpType::Sigmoid:
      return "sigmoid";
    case OpType::HardSigmoid:
      return "hard_sigmoid";
    case OpType::HardSwish:
      return "hard_swish";
    case OpType::ResizeNearest:
      return "resize_nearest";
    case OpType::Softmax:
      return "softmax";
    case OpType::Transpose:
      return "transpose";
    case OpType::Reshape:
      return "reshape";
    case OpType::Clip:
      return "clip";
  }
  return "unknown-op";
}

const char* ActivationName(Activation a) {
  switch (a) {
    case Activation::None:
      return "none";
    case Activation::Relu:
      return "relu";
    case Activation::Relu6:
      return "relu6";
  }
  return "unknown-activation";
}

std::vector<float> RopeTable(const RopeAttrs& a) {
  const int64_t half = a.head_dim / 2;
  std::vector<double> freq(size_t(std::max<int64_t>(half, 0)));
  const double pi = 3.14159265358979323846;
  for (int64_t i = 0; i < half; ++i) {
    double f = std::pow(double(a.theta), -2.0 * double(i) / double(a.head_dim));
    if (a.llama3) {  // Meta's apply_scaling (Llama 3.1+)
      const double wavelen = 2.0 * pi / f;
      const double orig = a.original_max_position;
      if (wavelen > orig / a.low_freq_factor) {
        f /= a.factor;
      } else if (wavelen >= orig / a.high_freq_factor) {
        const double smooth = (orig / wavelen - a.low_freq_factor) / (a.high_freq_factor - a.low_freq_factor);
        f = (1.0 - smooth) * f / a.factor + smooth * f;
      }
    }
    freq[size_t(i)] = f;
  }
  std::vector<float> table(size_t(std::max(a.max_positions, 0)) * size_t(half) * 2);
  for (int64_t p = 0; p < a.max_positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double ang = double(p) * freq[size_t(i)];
      table[size_t((p * half + i) * 2)] = float(std::cos(ang));
      table[size_t((p * half + i) * 2 + 1)] = float(std::sin(ang));
    }
  return table;
}

float AttentionAttrs::Scale() const { return scale != 0.0f ? scale : float(1.0 / std::sqrt(double(head_dim))); }

int64_t Tensor::NumElements(int64_t tokens) const {
  int64_t n = 1;
  for (int64_t d : shape) n *= (d == kSymbolicDim) ? tokens : d;
  return n;
}

int Graph::FindTensor(const std::string& name) const {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool Graph::HasSymbolicDim() const {
  for (const Tensor& t : tensors) {
    for (int64_t d : t.shape) {
      if (d == kSymbolicDim) return true;
    }
  }
  return false;
}

}  // namespace vkqc::ir
