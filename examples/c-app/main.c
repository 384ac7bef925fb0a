/* A plain C app on the installed vkqc runtime package (find_package(vkqc) or pkg-config vkqc):
 * reads a bundle into memory (as an Android app would from its assets), loads it from memory,
 * lists every program's inputs and outputs with their shapes and dtypes, fills the inputs with a
 * deterministic ramp, runs each program once and prints a checksum and the first values of every
 * output; for a decoder, then 8 greedy tokens from token 1 (vkqc_model_decode_greedy).
 *
 * usage: vkqc-c-app BUNDLE.vkqb [OUTPUTS.bin]
 * OUTPUTS.bin: every output's bytes, program by program, concatenated (scripts/arm64.sh compares
 * an arm64 run's file with an x86_64 run's). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkqc/vkqc.h>

static const char* dtype_name(vkqc_dtype d) {
  switch (d) {
    case VKQC_F32: return "f32";
    case VKQC_F16: return "f16";
    case VKQC_I8: return "i8";
    case VKQC_U8: return "u8";
    case VKQC_I32: return "i32";
    default: return "?";
  }
}

static void print_info(const char* what, uint32_t i, const vkqc_tensor_info* t) {
  printf("  %s %u '%s' %s [", what, i, t->name, dtype_name(t->dtype));
  for (uint32_t d = 0; d < t->rank; ++d) printf("%s%" PRId64, d ? ", " : "", (int64_t)t->shape[d]);
  printf("] %zu bytes\n", (size_t)t->size_bytes);
}

static int fail(const char* what) {
  fprintf(stderr, "vkqc-c-app: %s: %s\n", what, vkqc_last_error());
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s BUNDLE.vkqb [OUTPUTS.bin]\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  const long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  void* bytes = malloc((size_t)size);
  if (!bytes || fread(bytes, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    fprintf(stderr, "vkqc-c-app: cannot read %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  FILE* dump = NULL;
  if (argc == 3 && !(dump = fopen(argv[2], "wb"))) {
    perror(argv[2]);
    return 1;
  }
  printf("vkqc %s (ABI %u, bundle format <= %u)\n", vkqc_version(), vkqc_abi_version(), vkqc_bundle_format_version());

  vkqc_context_options co;
  vkqc_context_options_init(&co);
  vkqc_context ctx = NULL;
  if (vkqc_context_create(&co, &ctx) != VKQC_OK) return fail("context");
  const char* device = NULL;
  if (vkqc_context_device_name(ctx, &device) == VKQC_OK) printf("device: %s\n", device);
  vkqc_model model = NULL;
  if (vkqc_model_load(ctx, bytes, (size_t)size, NULL, &model) != VKQC_OK) return fail("load");
  free(bytes); /* the runtime keeps its own copy */

  int status = 0;
  for (uint32_t p = 0; p < vkqc_model_program_count(model) && status == 0; ++p) {
    printf("program %u (tokens %u)\n", p, vkqc_model_program_tokens(model, p));
    const int32_t pos_input = vkqc_model_position_input(model, p);
    for (uint32_t i = 0; i < vkqc_model_input_count(model, p); ++i) {
      vkqc_tensor_info t;
      vkqc_model_input_info(model, p, i, &t);
      print_info("input", i, &t);
      if ((int32_t)i == pos_input) continue; /* the runtime owns a decoder's position */
      unsigned char* data = malloc((size_t)t.size_bytes);
      for (size_t b = 0; b < (size_t)t.size_bytes; ++b) data[b] = 0;
      if (t.dtype == VKQC_F32)
        for (size_t e = 0; e < (size_t)t.size_bytes / 4; ++e) ((float*)data)[e] = (float)((e * 7) % 23) / 23.0f - 0.5f;
      else if (t.dtype == VKQC_I32)
        for (size_t e = 0; e < (size_t)t.size_bytes / 4; ++e) ((int32_t*)data)[e] = (int32_t)(e % 5);
      else
        for (size_t b = 0; b < (size_t)t.size_bytes; ++b) data[b] = (unsigned char)(b * 13);
      if (vkqc_model_write_input(model, p, i, data, (size_t)t.size_bytes) != VKQC_OK) status = fail("write_input");
      free(data);
    }
    if (status == 0 && vkqc_model_run(model, p) != VKQC_OK) status = fail("run");
    for (uint32_t o = 0; o < vkqc_model_output_count(model, p) && status == 0; ++o) {
      vkqc_tensor_info t;
      vkqc_model_output_info(model, p, o, &t);
      print_info("output", o, &t);
      unsigned char* data = malloc((size_t)t.size_bytes);
      if (vkqc_model_read_output(model, p, o, data, (size_t)t.size_bytes) != VKQC_OK) {
        status = fail("read_output");
      } else {
        uint64_t sum = 1469598103934665603ull;
        for (size_t b = 0; b < (size_t)t.size_bytes; ++b) sum = (sum ^ data[b]) * 1099511628211ull;
        printf("    checksum %016" PRIx64, sum);
        if (dump && fwrite(data, 1, (size_t)t.size_bytes, dump) != (size_t)t.size_bytes) {
          fprintf(stderr, "vkqc-c-app: cannot write %s\n", argv[2]);
          status = 1;
        }
        if (t.dtype == VKQC_F32)
          for (size_t e = 0; e < 4 && e < (size_t)t.size_bytes / 4; ++e) printf(" %.6g", ((float*)data)[e]);
        if (t.dtype == VKQC_I32)
          for (size_t e = 0; e < 4 && e < (size_t)t.size_bytes / 4; ++e) printf(" %d", ((int32_t*)data)[e]);
        printf("\n");
      }
      free(data);
    }
    if (vkqc_model_max_context(model) && vkqc_model_reset_state(model) != VKQC_OK) status = fail("reset_state");
  }
  /* A decoder: 8 greedy tokens from token 1 at position 0, each fed back to the next run on the GPU. */
  uint32_t step = 0;
  if (status == 0 && vkqc_model_max_context(model) && vkqc_model_find_program(model, 1, &step) == VKQC_OK) {
    int32_t tokens[8];
    uint32_t n = 0;
    if (vkqc_model_decode_greedy(model, NULL, 1, 8, tokens, &n, NULL) != VKQC_OK) {
      status = fail("decode_greedy");
    } else {
      printf("greedy:");
      for (uint32_t i = 0; i < n; ++i) printf("%s%d", i ? "," : " ", tokens[i]);
      printf("\n");
    }
  }
  vkqc_model_destroy(model);
  vkqc_context_destroy(ctx);
  if (dump && fclose(dump) != 0) {
    perror(argv[2]);
    status = 1;
  }
  return status;
}
