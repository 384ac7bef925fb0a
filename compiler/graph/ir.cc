#include "compiler/graph/ir.h"

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
