#include "tools/vkqc/roofline_bundles.h"

#include <cstring>

#include "compiler/emit/bundle_plan.h"
#include "compiler/passes/pipeline.h"
#include "compiler/shaderlib/shaderlib.h"

namespace vkqc {
namespace {

constexpr uint64_t kAlign = 256;  // slice offsets: the largest minStorageBufferOffsetAlignment Vulkan allows

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Plan under construction: modules and pipelines from the shader library, dispatches in order.
class Builder {
 public:
  // Adds (or reuses) the pipeline of `source` with `defines`; spec constant 0 is the workgroup
  // size, 1 the kernel's size constant. `push_size` must match the shader's push block.
  Result<uint32_t> Pipeline(const std::string& source, std::vector<std::string> defines, uint32_t size_constant,
                            uint32_t push_size, uint32_t workgroup = kRooflineWorkgroupSize,
                            std::vector<std::pair<uint32_t, uint32_t>> extra_spec = {}) {
    VKQC_ASSIGN_OR_RETURN(CompiledShader sh, CompileShader(source, defines));
    const auto& r = sh.reflection;
    if (r.push_constant_size != push_size)
      return InternalError(sh.name + ": push-constant block is " + std::to_string(r.push_constant_size) +
                           " bytes in SPIR-V, the C++ side writes " + std::to_string(push_size));
    PlanPipeline p;
    p.name = sh.name;
    p.module = uint32_t(plan.modules.size());
    plan.modules.push_back({sh.name, sh.spirv, sh.hash});
    std::vector<std::pair<uint32_t, uint32_t>> spec = {{0, workgroup}, {1, size_constant}};
    spec.insert(spec.end(), extra_spec.begin(), extra_spec.end());
    for (const auto& [id, value] : spec)
      for (uint32_t have : r.spec_constant_ids)
        if (have == id) p.spec.push_back({id, value});
    p.local_size[0] = workgroup;
    p.push_constant_size = r.push_constant_size;
    p.bindings = r.storage_buffer_bindings;
    p.int_dot = r.uses_int_dot;
    p.subgroup_arithmetic = r.uses_subgroup_arithmetic;
    p.float16 = r.uses_float16;
    p.int8 = r.uses_int8;
    p.storage_buffer_8bit = r.uses_storage_buffer_8bit;
    p.cooperative_matrix_nv = r.uses_cooperative_matrix_nv;
    p.cooperative_matrix_khr = r.uses_cooperative_matrix_khr;
    p.vulkan_memory_model = r.uses_vulkan_memory_model;
    p.shared_memory_bytes = 4;  // the workgroup's reduction word
    plan.pipelines.push_back(std::move(p));
    return uint32_t(plan.pipelines.size() - 1);
  }

  void Dispatch(uint32_t pipeline, std::vector<PlanSlice> buffers, std::vector<uint8_t> push, uint32_t groups,
                PlanLayer layer) {
    PlanDispatch d;
    d.pipeline = pipeline;
    d.buffers = std::move(buffers);
    d.push = std::move(push);
    d.group_count[0] = groups;
    d.layer = uint32_t(prog.layers.size());
    dispatches.push_back(std::move(d));
    prog.layers.push_back(std::move(layer));
  }

  // Barriers, layer command ranges, arena tensors with their command lifetimes, requirements.
  Result<std::vector<uint8_t>> Finish(std::vector<PlanTensor> tensors) {
    for (const PlanDispatch& d : dispatches)
      if (d.buffers.size() != plan.pipelines[d.pipeline].bindings.size())
        return InternalError(plan.pipelines[d.pipeline].name + ": binding count does not match the shader");
    prog.commands = InsertBarriers(dispatches);
    for (uint32_t ci = 0; ci < prog.commands.size(); ++ci) {
      if (prog.commands[ci].is_barrier) continue;
      PlanLayer& l = prog.layers[prog.commands[ci].dispatch.layer];
      l.first_command = ci;
      l.command_count = 1;
    }
    for (PlanTensor& t : tensors) {
      t.first_command = 0;
      t.last_command = uint32_t(prog.commands.size() - 1);
    }
    prog.arena_tensors = std::move(tensors);
    prog.name = "main";
    plan.compiler_version = kCompilerVersion;
    plan.target_profile = "roofline (the local device)";
    plan.programs.push_back(std::move(prog));
    plan.requirements = DeriveRequirements(plan, uint32_t(kAlign));
    return WriteBundle(plan);
  }

  BundlePlan plan;
  PlanProgram prog;
  std::vector<PlanDispatch> dispatches;
};

template <typename T>
std::vector<uint8_t> Bytes(const T& v) {
  std::vector<uint8_t> b(sizeof v);
  std::memcpy(b.data(), &v, sizeof v);
  return b;
}

PlanLayer Layer(const std::string& name, const std::string& variant, const std::string& what, uint64_t flops) {
  PlanLayer l;
  l.name = name;
  l.op = "roofline";
  l.variant = variant;
  l.reason = "microbenchmark of vkqc roofline";
  l.detail = what;
  l.flops = flops;
  return l;
}

// DispatchChain / GridBarrier: see the header and shaders/roofline_sync.comp.
Result<RooflineBundle> BuildSync(const RooflineBundleParams& p) {
  const bool grid = p.kernel == RooflineKernel::GridBarrier;
  if (!grid && p.iters > 4096) return InternalError("roofline: a chain of " + std::to_string(p.iters) + " dispatches");
  Builder b;
  RooflineBundle out;
  const uint64_t half = AlignUp(uint64_t(p.groups) * 4, kAlign);
  const uint32_t wg = kRooflineSyncWorkgroupSize;
  std::vector<std::string> seed_defs = {"VKQC_SEED"};
  if (grid) seed_defs.push_back("VKQC_GRID");
  VKQC_ASSIGN_OR_RETURN(uint32_t seed, b.Pipeline("roofline_sync.comp", seed_defs, 1, 0, wg));
  const std::string what = std::to_string(p.groups) + " workgroups of " + std::to_string(wg) + ", " +
                           std::to_string(p.iters) + (grid ? " rounds" : " dispatches");
  const PlanSlice a_w{SliceKind::Arena, 0, 0, half, true}, a_r{SliceKind::Arena, 0, 0, half, false};
  if (grid) {
    VKQC_ASSIGN_OR_RETURN(uint32_t rounds, b.Pipeline("roofline_sync.comp", {"VKQC_GRID"}, p.iters, 0, wg,
                                                      {{2, kRooflineSpinCap}}));
    const PlanSlice vals{SliceKind::Arena, 0, 0, 2 * half, true}, sync{SliceKind::Arena, 0, 2 * half, kAlign, true};
    b.Dispatch(seed, {a_w, sync}, {}, p.groups, Layer("seed", "roofline_sync_seed", what, 0));
    b.Dispatch(rounds, {vals, sync}, {}, p.groups, Layer("grid rounds", "roofline_grid_barrier", what, 0));
    b.prog.arena_size = 2 * half + kAlign;
    out.out_tensor = "roofline.vals";
    out.out_offset = p.iters % 2 ? p.groups : 0;  // round r writes words [G, 2G) when r is even
    out.flag_tensor = "roofline.sync";
    VKQC_ASSIGN_OR_RETURN(out.bytes, b.Finish({{"roofline.vals", 0, 2 * half, 0, 0},
                                               {"roofline.sync", 2 * half, kAlign, 0, 0}}));
  } else {
    VKQC_ASSIGN_OR_RETURN(uint32_t step, b.Pipeline("roofline_sync.comp", {}, 1, 0, wg));
    const PlanSlice b_w{SliceKind::Arena, 0, half, half, true}, b_r{SliceKind::Arena, 0, half, half, false};
    b.Dispatch(seed, {a_w}, {}, p.groups, Layer("seed", "roofline_sync_seed", what, 0));
    for (uint32_t i = 0; i < p.iters; ++i)
      b.Dispatch(step, i % 2 ? std::vector<PlanSlice>{b_r, a_w} : std::vector<PlanSlice>{a_r, b_w}, {}, p.groups,
                 Layer("step " + std::to_string(i), "roofline_dispatch_chain", what, 0));
    b.prog.arena_size = 2 * half;
    out.out_tensor = p.iters % 2 ? "roofline.b" : "roofline.a";
    VKQC_ASSIGN_OR_RETURN(out.bytes, b.Finish({{"roofline.a", 0, half, 0, 0}, {"roofline.b", half, half, 0, 0}}));
  }
  out.measured_layer = kRooflineWholeProgram;
  out.work = double(p.iters);
  return out;
}

}  // namespace

uint32_t RooflineHash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

uint32_t RooflineExpectedXor(uint64_t words) {
  uint32_t acc = 0;
  for (uint64_t i = 0; i < words; ++i) {
    const uint32_t h = RooflineHash(uint32_t(i));
    acc ^= h ^ (h ^ 0x9e3779b9u) ^ (h * 3u) ^ ~h;
  }
  return acc;
}

Result<RooflineBundle> BuildRooflineBundle(const RooflineBundleParams& p) {
  if (p.groups == 0 || p.groups > 65535)
    return InternalError("roofline: " + std::to_string(p.groups) + " workgroups (1..65535 allowed)");
  Builder b;
  RooflineBundle out;
  const uint64_t out_bytes = AlignUp(uint64_t(p.groups) * 4, kAlign);
  const uint64_t threads = uint64_t(p.groups) * kRooflineWorkgroupSize;
  if (p.kernel == RooflineKernel::Read) {
    if (p.bytes == 0 || p.bytes % kAlign || p.bytes > (4ull << 30) - kAlign)
      return InternalError("roofline: a read buffer of " + std::to_string(p.bytes) +
                           " bytes (a multiple of 256 below 4 GiB needed)");
    const uint32_t words = uint32_t(p.bytes / 16);
    VKQC_ASSIGN_OR_RETURN(uint32_t fill, b.Pipeline("roofline_read.comp", {"VKQC_FILL"}, words, 0));
    VKQC_ASSIGN_OR_RETURN(uint32_t read, b.Pipeline("roofline_read.comp", {}, words, 0));
    const PlanSlice data_w{SliceKind::Arena, 0, 0, p.bytes, true}, data_r{SliceKind::Arena, 0, 0, p.bytes, false};
    const PlanSlice result{SliceKind::Arena, 0, p.bytes, out_bytes, true};
    const std::string what = std::to_string(p.bytes) + " bytes, " + std::to_string(p.groups) + " workgroups of " +
                             std::to_string(kRooflineWorkgroupSize);
    b.Dispatch(fill, {data_w}, {}, p.groups, Layer("fill", "roofline_fill", what, 0));
    b.Dispatch(read, {data_r, result}, {}, p.groups, Layer("read (warm-up)", "roofline_read_u128", what, 0));
    b.Dispatch(read, {data_r, result}, {}, p.groups, Layer("read", "roofline_read_u128", what, 0));
    b.prog.arena_size = p.bytes + out_bytes;
    out.measured_layer = 2;
    out.work = double(p.bytes);
    out.out_tensor = "roofline.out";
    VKQC_ASSIGN_OR_RETURN(out.bytes, b.Finish({{"roofline.data", 0, p.bytes, 0, 0},
                                               {"roofline.out", p.bytes, out_bytes, 0, 0}}));
    return out;
  }
  if (p.iters == 0) return InternalError("roofline: zero iterations");
  if (p.kernel == RooflineKernel::DispatchChain || p.kernel == RooflineKernel::GridBarrier) return BuildSync(p);
  double ops = double(threads) * p.iters * kRooflineOpsPerIter;
  std::string what = std::to_string(p.groups) + " workgroups of " + std::to_string(kRooflineWorkgroupSize) + ", " +
                     std::to_string(p.iters) + " iterations";
  const PlanSlice result{SliceKind::Arena, 0, 0, out_bytes, true};
  uint32_t pipe = 0;
  std::vector<uint8_t> push;
  std::string variant;
  if (p.kernel == RooflineKernel::CoopMatInt8 || p.kernel == RooflineKernel::CoopMatFp16) {
    const bool int8 = p.kernel == RooflineKernel::CoopMatInt8;
    const uint32_t epw = int8 ? 4 : 2;
    if (p.subgroup == 0 || p.m == 0 || p.n == 0 || p.k == 0 || p.k % epw || (p.m * p.k) % epw || (p.k * p.n) % epw)
      return InternalError("roofline: cooperative-matrix shape " + std::to_string(p.m) + "x" + std::to_string(p.n) +
                           "x" + std::to_string(p.k) + " on subgroups of " + std::to_string(p.subgroup));
    ops = double(p.groups) * p.iters * kRooflineCoopMatChains * 2.0 * p.m * p.n * p.k;
    const struct {
      uint32_t seed, reserved0, reserved1, reserved2;
    } pc{0x2545F491u, 0, 0, 0};
    push = Bytes(pc);
    std::vector<std::string> defs = {"VKQC_CM_KHR"};
    if (int8) defs.push_back("VKQC_CM_INT");
    VKQC_ASSIGN_OR_RETURN(pipe, b.Pipeline("roofline_coopmat.comp", defs, p.iters, uint32_t(push.size()), p.subgroup,
                                           {{2, p.m}, {3, p.n}, {4, p.k}}));
    PlanPipeline& pp = b.plan.pipelines[pipe];
    pp.coopmat = int8 ? PlanCoopMatShape{p.m, p.n, p.k, 3, 3, 5, 5} : PlanCoopMatShape{p.m, p.n, p.k, 0, 0, 1, 1};
    if (p.pin_subgroup) pp.required_subgroup_size = p.subgroup;
    pp.shared_memory_bytes = (2 * p.m * p.k + 4 * p.k * p.n) / epw * 4 + p.m * p.n * 4 + 4;
    variant = int8 ? "roofline_coopmat_s8" : "roofline_coopmat_f16";
    what = std::to_string(p.groups) + " subgroups of " + std::to_string(p.subgroup) + ", " + std::to_string(p.iters) +
           " iterations of 8 MulAdds " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
  } else if (p.kernel == RooflineKernel::IntDot) {
    const struct {
      uint32_t seed, operand, reserved0, reserved1;
    } pc{0x2545F491u, 0x01FF7F80u, 0, 0};  // operand bytes 0x80, 0x7F, 0xFF, 0x01: -128, 127, -1, 1
    push = Bytes(pc);
    variant = "roofline_sdot_4x8";
    VKQC_ASSIGN_OR_RETURN(pipe, b.Pipeline("roofline_dot.comp", {}, p.iters, uint32_t(push.size())));
  } else {
    const struct {
      float mul, add;
      uint32_t seed, reserved;
    } pc{0.999f, 0.001f, 0x2545F491u, 0};
    push = Bytes(pc);
    const bool f16 = p.kernel == RooflineKernel::Fma16;
    variant = f16 ? "roofline_fma_f16vec4" : "roofline_fma_vec4";
    VKQC_ASSIGN_OR_RETURN(pipe, b.Pipeline("roofline_fma.comp", f16 ? std::vector<std::string>{"VKQC_FP16"}
                                                                    : std::vector<std::string>{},
                                           p.iters, uint32_t(push.size())));
  }
  b.Dispatch(pipe, {result}, push, p.groups, Layer("compute", variant, what, uint64_t(ops)));
  b.prog.arena_size = out_bytes;
  out.measured_layer = 0;
  out.work = ops;
  out.out_tensor = "roofline.out";
  VKQC_ASSIGN_OR_RETURN(out.bytes, b.Finish({{"roofline.out", 0, out_bytes, 0, 0}}));
  return out;
}

}  // namespace vkqc
