// libFuzzer target: compiled bundles (.vkqb) through the runtime's load path up to the device:
// the bundle verifier (runtime/src/bundle_view.cc, also the public vkqc_verify_bundle), the
// device-requirement check, SPIR-V validation (vkqc_context_options.validate_spirv) and every
// field that vkqc_model_load, pipeline and descriptor creation, recording and the model queries
// read from a verified bundle (ReadLikeTheLoader below), without a Vulkan device.
// Each input is resealed first, as a tamperer would (tests/common/bundle_reseal.h: module hashes
// and the integrity checksum recomputed), so mutations reach the checks behind the checksums.
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "runtime/src/internal.h"
#include "tests/common/bundle_reseal.h"

namespace {

using namespace vkqc;
namespace fbb = vkqc::fb::bundle;

volatile uint64_t g_sink;

// What runtime/src/model.cc and api.cc dereference once ParseBundle accepted a bundle: the
// verifier's contract is that none of it can be out of bounds or missing.
void ReadLikeTheLoader(const rt::BundleView& v) {
  const fbb::Bundle* b = v.bundle;
  uint64_t s = v.weights_size ? v.weights[v.weights_size - 1] : 0;
  if (b->target_profile()) s += b->target_profile()->size();
  const uint32_t nstate = b->states() ? b->states()->size() : 0;
  for (uint32_t i = 0; i < nstate; ++i) {  // Load, vkqc_model_state_info
    const auto* st = b->states()->Get(i);
    s += st->name()->str().size() + st->size() + uint32_t(st->dtype());
    if (st->shape())
      for (uint32_t k = 0; k < st->shape()->size() && k < 8; ++k) s += uint64_t(st->shape()->Get(k));
  }
  const uint32_t nmod = b->modules() ? b->modules()->size() : 0;
  for (uint32_t i = 0; i < nmod; ++i) {  // CreatePipelines: vkCreateShaderModule
    const auto* spv = b->modules()->Get(i)->spirv();
    s += spv->data()[spv->size() - 1];
  }
  const uint32_t npipe = b->pipelines() ? b->pipelines()->size() : 0;
  for (uint32_t i = 0; i < npipe; ++i) {
    const auto* p = b->pipelines()->Get(i);
    for (const auto* bd : *p->bindings()) s += bd->binding() + uint32_t(bd->type());
    if (p->spec_constants())
      for (uint32_t j = 0; j < p->spec_constants()->size(); ++j)
        s += p->spec_constants()->Get(j)->id() + p->spec_constants()->Get(j)->value();
    s += p->module_() < nmod ? 1 : 0;
    s += p->push_constant_size() + p->required_subgroup_size();
  }
  for (const auto* pr : *b->programs()) {
    auto io = [&](const flatbuffers::Vector<flatbuffers::Offset<fbb::IoTensor>>* v) {
      if (!v) return;
      for (const auto* t : *v) {
        s += t->name()->str().size() + t->size() + uint32_t(t->dtype());
        for (int64_t d : *t->shape()) s += uint64_t(d);
      }
    };
    io(pr->inputs());
    io(pr->outputs());
    if (pr->layers())
      for (const auto* l : *pr->layers())
        s += (l->name() ? l->name()->size() : 0) + (l->op() ? l->op()->size() : 0) +
             (l->variant() ? l->variant()->size() : 0) + l->first_command() + l->command_count();
    const uint32_t nin = pr->inputs() ? pr->inputs()->size() : 0, nout = pr->outputs() ? pr->outputs()->size() : 0;
    for (uint32_t ci = 0; ci < pr->commands()->size(); ++ci) {  // CreateDescriptors, Record
      if (fbb::Command(pr->commands_type()->Get(ci)) == fbb::Command::Barrier) {
        const auto* br = static_cast<const fbb::Barrier*>(pr->commands()->Get(ci));
        s += br->src_access() + br->dst_access();
        continue;
      }
      const auto* d = static_cast<const fbb::Dispatch*>(pr->commands()->Get(ci));
      const auto* binds = b->pipelines()->Get(d->pipeline())->bindings();
      for (uint32_t si = 0; si < d->buffers()->size(); ++si) {
        const auto* sl = d->buffers()->Get(si);
        s += binds->Get(si)->binding() + sl->offset() + sl->size();
        switch (sl->kind()) {  // BufferFor
          case fbb::BufferKind::Input: fuzz::Require(sl->index() < nin, "input index checked"); break;
          case fbb::BufferKind::Output: fuzz::Require(sl->index() < nout, "output index checked"); break;
          case fbb::BufferKind::State: fuzz::Require(sl->index() < nstate, "state index checked"); break;
          default: break;
        }
      }
      s += d->group_count()->Get(0) + d->group_count()->Get(1) + d->group_count()->Get(2);
      if (d->push_constants() && d->push_constants()->size()) s += d->push_constants()->data()[0];
    }
    if (pr->arena_tensors())  // vkqc_model_read_intermediate
      for (const auto* t : *pr->arena_tensors()) s += (t->name() ? t->name()->size() : 0) + t->offset() + t->size();
  }
  if (b->metadata())  // vkqc_model_metadata
    for (const auto* e : *b->metadata())
      if (e && e->key() && e->value()) s += e->key()->size() + e->value()->size();
  g_sink = s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> b(data, data + size);
  testing_bundles::ResealBundle(b.data(), b.size());
  // The public entry point (no device), then the view the loader works from.
  const vkqc_status st = vkqc_verify_bundle(b.data(), b.size());
  fuzz::Require(st == VKQC_OK || (st == VKQC_ERROR_INVALID_BUNDLE && vkqc_last_error()[0]),
                "a refusal is VKQC_ERROR_INVALID_BUNDLE with a message");
  rt::BundleView view;
  const rt::Err e = rt::ParseBundle(b.data(), b.size(), &view);
  fuzz::Require(e.ok() == (st == VKQC_OK), "vkqc_verify_bundle and ParseBundle agree");
  if (!e.ok()) return 0;
  // Requirements against a device with nothing and one with everything.
  rt::DeviceCaps none, all;
  all.api_version = ~0u;
  all.shader_integer_dot_product = all.shader_float16 = all.shader_int8 = all.storage_buffer_8bit_access = true;
  all.vulkan_memory_model = all.cooperative_matrix_nv = all.cooperative_matrix_khr = true;
  all.subgroup_size_control = all.compute_full_subgroups = all.subgroup_arithmetic_compute = true;
  all.required_subgroup_size_compute = true;
  all.min_subgroup_size = 1;
  all.max_subgroup_size = 128;
  g_sink = rt::MissingRequirements(view.bundle->requirements(), none).size() +
           rt::MissingRequirements(view.bundle->requirements(), all).size();
  if (rt::SpirvValidatorAvailable() && view.bundle->modules())
    for (const auto* m : *view.bundle->modules()) {
      std::string why;
      (void)rt::ValidateSpirvModule(m->spirv()->data(), m->spirv()->size(), &why);
    }
  ReadLikeTheLoader(view);
  // Signed bundles (runtime/src/bundle_sign.cc): the slots are read, and a bundle whose signer
  // slot is set is verified against that very key: the Ed25519 check runs on the fuzzer's bytes
  // and can never pass (no seed in the corpus is signed; forging needs the private key).
  BundleSignatureInfo info;
  if (ReadBundleSignature(b.data(), b.size(), &info).empty() && info.is_signed)
    fuzz::Require(!VerifyBundleSignature(b.data(), b.size(), &info.signer, 1).empty(),
                  "a fuzzed bundle never carries a valid signature");
  return 0;
}
