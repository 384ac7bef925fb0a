#version 450
#extension GL_EXT_control_flow_attributes : require
// Decode attention: ROWS query rows (1: one token; a few: batched or speculative decoding) over
// the KV cache, in one dispatch with the cache append (and, VKQC_ROPE, the rope of q and k). Grid
// (SPLITS, HKV, row groups): workgroup (s, kvh, z) serves the QV = R x G virtual queries of rows
// z * R .. z * R + R - 1 (qi = local row * G + g: one of the G = HQ / HKV query heads sharing KV
// head kvh) over cache positions [s * CHUNK, min((s + 1) * CHUNK, len)), len = pos0 + its last row
// + 1, in blocks of BK keys: each key and value is read once for all of them (all of a block's
// loads in flight together), scores and an online softmax per virtual query in fp32 (running max
// and sum, as attention.comp). Row r is causal: it sees positions up to pos0 + r (a later key
// scores -inf; a split with none for it keeps max -inf, sum 0 and adds nothing). Splits past the
// context return at once. A last group of fewer than R rows leaves the rest idle.
// The new rows (positions pos0 .. pos0 + ROWS - 1, those below S): a split holding any of them
// uses them as the cache now holds them (k rotated, both f16-rounded with VKQC_KV_F16), from
// shared memory, never from the cache; each goes into the cache from the split that holds its
// position in the group of its row, and the last split of that group writes its q_rot and k_rot as
// the rope ops would (VKQC_ROPE).
// With more than one active split, each writes {max, sum, acc[D]} per virtual query to `part`, then
// counts itself in the arrival counter of its (KV head, row group) (a compiler-owned state buffer,
// zero at load); the last to arrive combines the splits (as attention_combine.comp) and sets the
// counter back to 0. The partials and the counters are coherent buffers; memoryBarrierBuffer orders a
// split's partials before its count (release) and the last split's reads after it (acquire). The
// combine reuses the shared scratch `sp` (QV * 128 floats) for the splits' maxima and sums:
// SPLITS <= 64.
#include "common.glslh"
#ifdef VKQC_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 128) in;
layout(constant_id = 1) const uint HQ = 1;
layout(constant_id = 2) const uint HKV = 1;
layout(constant_id = 3) const uint S = 1;
layout(constant_id = 4) const uint CHUNK = 64;
layout(constant_id = 5) const uint SPLITS = 1;
layout(constant_id = 6) const float SCALE = 1.0;
layout(constant_id = 7) const uint MAXPOS = 1;

const uint WG = 128;
const uint D = VKQC_D;              // head_dim (even)
const uint G = VKQC_G;              // query heads per KV head
const uint ROWS = VKQC_ROWS;        // query rows of the program
const uint R = VKQC_R;              // query rows per workgroup (row groups of R: the grid's z)
const uint QV = R * G;              // virtual queries per workgroup (<= 32)
const uint BK = VKQC_BK;            // keys per block (64, 32, 16 or 128)
const uint TPK = WG / BK;           // invocations per key in the score phase
const uint DS = D / TPK;            // dims each of them reads (even)
const uint HD = D / 2;
const uint OPT = (QV * D + WG - 1) / WG;  // outputs (virtual query, dim) per invocation
// The PV step by KS = VKQC_PV_SLICES key slices (PVS; attention::DecodePvSlices says where):
// invocation t takes word t % HD (two dims) of every virtual query over slice t / HD of a block's
// keys, its partial sums kept across blocks (the correction is linear) and the KS slices added
// once, after the last block, through vs. Each block's serial chain is then BK / KS keys of QV
// vec2 multiply-adds from one value load per key, instead of BK keys of OPT scalar ones from a
// value and a probability load each. Without it (0): one (query, dim) per invocation and r over
// the whole block.
const uint KS = VKQC_PV_SLICES;
const bool PVS = KS > 1u;
const uint KPS = PVS ? BK / KS : 1u;  // keys per slice
const uint PQ = PVS ? QV : 1u;         // partial sums (vec2) per invocation (QV <= 8)
const uint NPT = (ROWS * D + WG - 1) / WG;  // new-row values per invocation

#ifdef VKQC_ROPE
#define B_CS 4
#define B_KC 5
#define B_VC 6
#define B_QR 7
#define B_KR 8
#define B_PART 9
#define B_SYNC 10
#define B_Y 11
#else
#define B_KC 4
#define B_VC 5
#define B_PART 6
#define B_SYNC 7
#define B_Y 8
#endif

layout(std430, binding = 0) readonly buffer Q { float q[]; };
layout(std430, binding = 1) readonly buffer K { float k[]; };
layout(std430, binding = 2) readonly buffer Vn { float v[]; };
layout(std140, binding = 3) uniform P { int pos0; };  // the position: a uniform (not a storage buffer)
#ifdef VKQC_ROPE
layout(std430, binding = B_CS) readonly buffer T { vec2 cs[]; };
layout(std430, binding = B_QR) writeonly buffer QR { float qr[]; };
layout(std430, binding = B_KR) writeonly buffer KR { float kr[]; };
#endif
#ifdef VKQC_KV_F16
layout(std430, binding = B_KC) buffer KC { uint kc[]; };
layout(std430, binding = B_VC) buffer VC { uint vc[]; };
#else
layout(std430, binding = B_KC) buffer KC { vec2 kc[]; };
layout(std430, binding = B_VC) buffer VC { vec2 vc[]; };
#endif
// VKQC_VEC_LOADS (lower.cc: where an invocation's words of a key are whole vectors, and so the
// cache rows): the score phase reads the cache 16 bytes at a time through these views of the same
// buffers, VW words per load (4 f16 pairs or 2 f32 pairs): a quarter (half) of the load
// instructions (H200, 1b decode step: -18 us at position 128, -22 at 2032; RESULTS.md 2026-11-29
// session 13). Read-only views: no split reads a position another split of the dispatch writes (a
// new row is read from shared memory).
#ifdef VKQC_VEC_LOADS
#ifdef VKQC_KV_F16
#define VW 4u
#define VEC_T uvec4
#define VEC_WORD(x, c) x[c]
layout(std430, binding = B_KC) readonly buffer KCV { uvec4 kcv[]; };
layout(std430, binding = B_VC) readonly buffer VCV { uvec4 vcv[]; };
#else
#define VW 2u
#define VEC_T vec4
#define VEC_WORD(x, c) vec2(x[2u * (c)], x[2u * (c) + 1u])
layout(std430, binding = B_KC) readonly buffer KCV { vec4 kcv[]; };
layout(std430, binding = B_VC) readonly buffer VCV { vec4 vcv[]; };
#endif
#endif
layout(std430, binding = B_PART) coherent buffer Part { float part[]; };
layout(std430, binding = B_SYNC) coherent buffer Sync { uint arrived[]; };
layout(std430, binding = B_Y) writeonly buffer Y { float y[]; };

shared float qs[QV * D];       // the queries, rotated and scaled
shared float kn[ROWS * D], vn[ROWS * D];  // the new rows as the cache holds them
shared float sp[QV * BK * TPK];  // partial dot products of a block
shared float sc[QV * BK];      // scores, then probabilities
const uint HDP = HD + VKQC_VS_PAD;  // a row of vs, padded by one pair where it fits (the score
                                    // phase's stores then hit different banks)
shared vec2 vs[BK * HDP];      // the block's values
shared float mrow[QV], lrow[QV], crow[QV], red[QV * 8];
shared uint last;

// A cache word (two values) as loaded, and as two floats. f16, VKQC_F16_UNPACK (GPU targets):
// unpackHalf2x16, exact for every half but the subnormal ones (which a device may flush); a
// block whose words hold one takes the integer decode (common.glslh), a branch otherwise not
// taken, so its code is not fetched. Code size is time here: this kernel runs each instruction
// about once per dispatch, and on the H100 the 64 inline integer decodes of a block cost ~8 us per
// layer even at position 0, where they never execute (bench/RESULTS.md, 2026-11-26); decoding
// normal halves by integer bit moves (~11 operations a word) kept most of that cost. Without
// VKQC_F16_UNPACK (CPU devices: llvmpipe's LLVM 15 failed to compile the conversion on aarch64,
// and a CPU pays no instruction-fetch latency): the integer decode throughout.
#ifdef VKQC_KV_F16
#define CACHE_T uint
uint cache_word(bool is_k, uint at) { return is_k ? kc[at] : vc[at]; }
vec2 cache_value(uint w) { return vec2(f16_to_f32(w & 0xFFFFu), f16_to_f32(w >> 16)); }  // exact
#else
#define CACHE_T vec2
vec2 cache_word(bool is_k, uint at) { return is_k ? kc[at] : vc[at]; }
vec2 cache_value(vec2 w) { return w; }
#endif

// The value the cache holds for x (f16-rounded with VKQC_KV_F16).
float as_cached(float x) {
#ifdef VKQC_KV_F16
  return f16_to_f32(f32_to_f16(x));
#else
  return x;
#endif
}

#ifdef VKQC_ROPE
// Dim d of a head rotated to position p (common.glslh's rope helpers); x: the raw head in shared.
float rotated(float xd, float xp, uint d, uint p) {
  return rope_rotated(xd, xp, rope_first(d, D), cs[p * HD + rope_column(d, D)]);
}
uint partner(uint d) { return rope_partner(d, D); }
#endif

// Virtual query qi of row group z: its row z * R + qi / G and query head kvh * G + qi % G, as the
// slot row * HQ + head of q, y and the partials; element i of the group's queries (qi = i / D) as
// its index in q and y. One row: the one-row expressions (this kernel's time is largely the
// instruction fetch of its code).
uint slot(uint kvh, uint z, uint qi) {
#if VKQC_ROWS == 1
  return kvh * G + qi;
#else
  return ((z * R + qi / G) * HKV + kvh) * G + qi % G;
#endif
}
uint elem(uint kvh, uint z, uint i) {
#if VKQC_ROWS == 1
  return kvh * G * D + i;
#else
  return ((z * R + i / (G * D)) * HKV + kvh) * G * D + i % (G * D);
#endif
}

void main() {
  const uint s = gl_WorkGroupID.x, kvh = gl_WorkGroupID.y, z = gl_WorkGroupID.z, tid = gl_LocalInvocationID.x;
  const float NEG_INF = -uintBitsToFloat(0x7F800000u);
  const uint r0 = ROWS == 1 ? 0u : z * R;                 // the group's first row
  const uint nr = ROWS == 1 ? 1u : min(R, ROWS - r0);     // and its rows
  const uint qn = nr * G;  // its virtual queries (QV but in a last, smaller group)
  const uint len = uint(clamp(pos0 + int(r0 + nr), 1, int(S)));  // the group's last row's context
  const uint begin = s * CHUNK, end = min(begin + CHUNK, len);
  if (begin >= end) return;  // uniform: this split lies past the context
  const uint nact = (len + CHUNK - 1u) / CHUNK;
  const uint pc = uint(max(pos0, 0));
  const bool last_split = s == nact - 1u;
  // Holds a new row's position (keys pc .. len - 1), or writes the rope outputs.
  const bool fresh = pos0 >= 0 && pc < end;
  const bool load_new = fresh || last_split;

  // 1. The queries (and the new rows where needed) into shared memory: every load in flight at once.
  {
    float qv[OPT];
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint i = tid + r * WG;
      qv[r] = i < qn * D ? q[elem(kvh, z, i)] : 0.0;
    }
    float kv[NPT], vv[NPT];
    if (load_new)
      [[unroll]] for (uint r = 0; r < NPT; ++r) {
        const uint i = min(tid + r * WG, ROWS * D - 1u), row = ROWS == 1 ? 0u : i / D;
        kv[r] = k[(row * HKV + kvh) * D + i % D];
        vv[r] = v[(row * HKV + kvh) * D + i % D];
      }
    [[unroll]] for (uint r = 0; r < OPT; ++r)
      if (tid + r * WG < QV * D) qs[tid + r * WG] = qv[r];
    if (load_new)
      [[unroll]] for (uint r = 0; r < NPT; ++r)
        if (tid + r * WG < ROWS * D) {
          kn[tid + r * WG] = kv[r];
          vn[tid + r * WG] = as_cached(vv[r]);
        }
  }
  if (tid < QV) {
    mrow[tid] = NEG_INF;
    lrow[tid] = 0.0;
  }
  barrier();
#ifdef VKQC_ROPE
  {
    float rq[OPT];
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint i = tid + r * WG;
      if (i < QV * D) {
        const uint d = i % D, base = i - d, row = ROWS == 1 ? 0u : r0 + i / (G * D);
        rq[r] = rotated(qs[i], qs[base + partner(d)], d, uint(clamp(pos0 + int(row), 0, int(MAXPOS) - 1)));
      }
    }
    float rk[NPT];
    if (load_new)
      [[unroll]] for (uint r = 0; r < NPT; ++r) {
        const uint i = tid + r * WG;
        if (i < ROWS * D) {
          const uint d = i % D, base = i - d, row = ROWS == 1 ? 0u : i / D;
          rk[r] = rotated(kn[i], kn[base + partner(d)], d, uint(clamp(pos0 + int(row), 0, int(MAXPOS) - 1)));
        }
      }
    barrier();
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint i = tid + r * WG;
      if (i < QV * D) {
        if (last_split && i < qn * D) qr[elem(kvh, z, i)] = rq[r];
        qs[i] = rq[r] * SCALE;
      }
    }
    if (load_new)
      [[unroll]] for (uint r = 0; r < NPT; ++r) {
        const uint i = tid + r * WG;
        if (i < ROWS * D) {
          const uint row = ROWS == 1 ? 0u : i / D;
          if (last_split && (ROWS == 1 || row / R == z)) kr[(row * HKV + kvh) * D + i % D] = rk[r];  // rows of this group
          kn[i] = as_cached(rk[r]);
        }
      }
  }
#else
  for (uint i = tid; i < QV * D; i += WG) qs[i] *= SCALE;
  if (load_new)
    for (uint i = tid; i < ROWS * D; i += WG) kn[i] = as_cached(kn[i]);
#endif
  barrier();
  // The new rows of this group whose positions this split holds into the cache (read from shared
  // memory below, never from the cache).
  if (fresh)
    for (uint i = tid; i < nr * HD; i += WG) {
      const uint row = ROWS == 1 ? 0u : r0 + i / HD, w = ROWS == 1 ? i : i % HD, p = pc + row;
      if (ROWS > 1 && (p < begin || p >= end)) continue;
      const uint at = (kvh * S + p) * HD + w, n = row * D + 2u * w;
#ifdef VKQC_KV_F16
      kc[at] = f32_to_f16(kn[n]) | (f32_to_f16(kn[n + 1u]) << 16);
      vc[at] = f32_to_f16(vn[n]) | (f32_to_f16(vn[n + 1u]) << 16);
#else
      kc[at] = vec2(kn[n], kn[n + 1u]);
      vc[at] = vec2(vn[n], vn[n + 1u]);
#endif
    }

  float acc[OPT];
  [[unroll]] for (uint r = 0; r < OPT; ++r) acc[r] = 0.0;
  vec2 pacc[PQ];  // PVS: word pw of query g over key slice ps
  [[unroll]] for (uint g = 0; g < PQ; ++g) pacc[g] = vec2(0.0);
  const uint pw = PVS ? tid % HD : 0u, ps = PVS ? tid / HD : 0u;
  const uint kk = tid / TPK, j = tid % TPK;
  // The key's word (pair of dims) that is an invocation's i-th: its run of DS / 2 words. (The TPK
  // invocations of a key taking turns by vectors instead, so that a load's lane pairs share a
  // 32-byte sector: within the recordings' spread on the H200, RESULTS.md 2026-11-29 session 13.)
#define WORD(i) (j * (DS / 2) + (i))
  for (uint kb = begin; kb < end; kb += BK) {
    // 2. Scores: TPK invocations per key, DS dims each; keys and values of the block all in flight.
    const uint key = kb + kk;
    float dots[QV];
    [[unroll]] for (uint g = 0; g < QV; ++g) dots[g] = 0.0;
    vec2 vr[DS / 2];
    if (key < end) {
      const uint at = (kvh * S + key) * HD;  // the key's row
      vec2 kp[DS / 2];
      if (fresh && key >= pc) {  // a new row (key < end <= len)
        const uint n = ROWS == 1 ? 0u : (key - pc) * D;
        [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
          const uint d = n + 2u * WORD(i);
          kp[i] = vec2(kn[d], kn[d + 1u]);
          vr[i] = vec2(vn[d], vn[d + 1u]);
        }
      } else {
        CACHE_T kw[DS / 2], vw[DS / 2];
#ifdef VKQC_VEC_LOADS
        [[unroll]] for (uint i = 0; i < DS / 2 / VW; ++i) {
          const VEC_T kx = kcv[(at + WORD(VW * i)) / VW], vx = vcv[(at + WORD(VW * i)) / VW];
          [[unroll]] for (uint c = 0; c < VW; ++c) {
            kw[VW * i + c] = VEC_WORD(kx, c);
            vw[VW * i + c] = VEC_WORD(vx, c);
          }
        }
#else
        [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
          kw[i] = cache_word(true, at + WORD(i));
          vw[i] = cache_word(false, at + WORD(i));
        }
#endif
#if defined(VKQC_KV_F16) && defined(VKQC_F16_UNPACK)
        bool sub = false;
        [[unroll]] for (uint i = 0; i < DS / 2; ++i) sub = sub || f16_pair_has_subnormal(kw[i]) || f16_pair_has_subnormal(vw[i]);
        if (!sub) {
          [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
            kp[i] = unpackHalf2x16(kw[i]);
            vr[i] = unpackHalf2x16(vw[i]);
          }
        } else
#endif
        {
          [[unroll]] for (uint i = 0; i < DS / 2; ++i) {  // unrolled: kp, vr stay in registers
            kp[i] = cache_value(kw[i]);
            vr[i] = cache_value(vw[i]);
          }
        }
      }
      [[unroll]] for (uint i = 0; i < DS / 2; ++i) {
        const uint d = 2u * WORD(i);
        [[unroll]] for (uint g = 0; g < QV; ++g) dots[g] += qs[g * D + d] * kp[i].x + qs[g * D + d + 1u] * kp[i].y;
      }
    } else {
      [[unroll]] for (uint i = 0; i < DS / 2; ++i) vr[i] = vec2(0.0);
    }
    [[unroll]] for (uint g = 0; g < QV; ++g) sp[(g * BK + kk) * TPK + j] = dots[g];
    [[unroll]] for (uint i = 0; i < DS / 2; ++i) vs[kk * HDP + WORD(i)] = vr[i];
    barrier();
#ifdef VKQC_SUBGROUP
    // 3. (targets with subgroup arithmetic) Per virtual query, one subgroup: each invocation sums
    // the partial dots of its keys (-inf past the split's end, and for several rows past the row's
    // causal limit), the block maximum with the running one by subgroupMax, the probabilities,
    // their sum by subgroupAdd; the correction and the running sum by one invocation, which alone
    // reads and writes mrow / lrow / crow of the query. One barrier instead of five (with the
    // combine's below: H200, 1b decode step -12.5 us at position 128, -15.8 at 2032; RESULTS.md
    // 2026-11-29 session 12). Several rows: a query without a key yet keeps max -inf, correction
    // 1, probabilities 0, as the trees below.
    for (uint g = gl_SubgroupID; g < QV; g += gl_NumSubgroups) {
      const bool lead = subgroupElect();
      const float m_old = lead ? mrow[g] : NEG_INF;
#if VKQC_ROWS == 1
      const uint lim = end;
#else
      const uint lim = min(end, uint(clamp(pos0 + int(r0 + g / G) + 1, 1, int(S))));
#endif
      float mx = m_old;
      for (uint c = gl_SubgroupInvocationID; c < BK; c += gl_SubgroupSize) {
        float sum = 0.0;
        [[unroll]] for (uint t = 0; t < TPK; ++t) sum += sp[(g * BK + c) * TPK + t];
        sc[g * BK + c] = kb + c < lim ? sum : NEG_INF;
        mx = max(mx, sc[g * BK + c]);
      }
      mx = subgroupMax(mx);
      float ps = 0.0;
      for (uint c = gl_SubgroupInvocationID; c < BK; c += gl_SubgroupSize) {
#if VKQC_ROWS == 1
        const float pe = exp(sc[g * BK + c] - mx);
#else
        const float pe = sc[g * BK + c] == NEG_INF ? 0.0 : exp(sc[g * BK + c] - mx);
#endif
        sc[g * BK + c] = pe;
        ps += pe;
      }
      ps = subgroupAdd(ps);
      if (lead) {
#if VKQC_ROWS == 1
        const float corr = exp(m_old - mx);  // the first block: exp(-inf) = 0
#else
        const float corr = mx == NEG_INF ? 1.0 : exp(m_old - mx);
#endif
        crow[g] = corr;
        lrow[g] = lrow[g] * corr + ps;
        mrow[g] = mx;
      }
    }
    barrier();
#else
    for (uint i = tid; i < QV * BK; i += WG) {
      const uint c = i % BK;
      float sum = 0.0;
      [[unroll]] for (uint t = 0; t < TPK; ++t) sum += sp[i * TPK + t];
#if VKQC_ROWS == 1
      sc[i] = kb + c < end ? sum : NEG_INF;
#else
      // causal: row r0 + i / (G * BK) sees positions below pos0 + row + 1 (and S)
      sc[i] = kb + c < min(end, uint(clamp(pos0 + int(r0 + i / (G * BK)) + 1, 1, int(S)))) ? sum : NEG_INF;
#endif
    }
    barrier();
    // 3. Online softmax per virtual query: block maximum, correction of the running sums,
    // probabilities (several rows: a query without a key yet keeps max -inf, correction 1,
    // probabilities 0).
    for (uint t = tid; t < QV * 8; t += WG) {
      const uint g = t / 8;
      float mx = NEG_INF;
      for (uint c = t % 8; c < BK; c += 8) mx = max(mx, sc[g * BK + c]);
      red[t] = mx;
    }
    barrier();
    if (tid < QV) {
      float mx = mrow[tid];
      [[unroll]] for (uint t = 0; t < 8; ++t) mx = max(mx, red[tid * 8 + t]);
#if VKQC_ROWS == 1
      crow[tid] = exp(mrow[tid] - mx);  // the first block: exp(-inf) = 0
#else
      crow[tid] = mx == NEG_INF ? 1.0 : exp(mrow[tid] - mx);
#endif
      mrow[tid] = mx;
    }
    barrier();
#if VKQC_ROWS == 1
    for (uint i = tid; i < QV * BK; i += WG) sc[i] = exp(sc[i] - mrow[i / BK]);
#else
    for (uint i = tid; i < QV * BK; i += WG) sc[i] = sc[i] == NEG_INF ? 0.0 : exp(sc[i] - mrow[i / BK]);
#endif
    barrier();
    for (uint t = tid; t < QV * 8; t += WG) {
      const uint g = t / 8;
      float sum = 0.0;
      for (uint c = t % 8; c < BK; c += 8) sum += sc[g * BK + c];
      red[t] = sum;
    }
    barrier();
    if (tid < QV) {
      float sum = 0.0;
      [[unroll]] for (uint t = 0; t < 8; ++t) sum += red[tid * 8 + t];
      lrow[tid] = lrow[tid] * crow[tid] + sum;
    }
#endif
    // 4. acc = acc * correction + sum_c p_c v_c. PVS: over this invocation's key slice, every
    // key of it (past the split's end or a row's causal limit p_c is 0 and the value row 0).
    // Else one (virtual query, dim) per invocation and r, the block's keys up to the split's end.
    if (PVS) {
      [[unroll]] for (uint g = 0; g < PQ; ++g) pacc[g] *= crow[g];
      [[unroll]] for (uint i = 0; i < KPS; ++i) {
        const uint c = ps * KPS + i;
        const vec2 vv = vs[c * HDP + pw];
        [[unroll]] for (uint g = 0; g < PQ; ++g) pacc[g] += sc[g * BK + c] * vv;
      }
    } else {
      [[unroll]] for (uint r = 0; r < OPT; ++r) acc[r] *= crow[min((tid + r * WG) / D, QV - 1u)];
      const uint n = min(BK, end - kb);
      for (uint c = 0; c < n; ++c) {
        [[unroll]] for (uint r = 0; r < OPT; ++r) {
          const uint o = tid + r * WG, g = min(o / D, QV - 1u), d = o % D;
          const vec2 vv = vs[c * HDP + d / 2u];
          acc[r] += sc[g * BK + c] * ((d & 1u) != 0u ? vv.y : vv.x);
        }
      }
    }
    barrier();
  }
  if (PVS) {  // the slices' sums, through vs (free after the last block's barrier)
    [[unroll]] for (uint g = 0; g < PQ; ++g) vs[(ps * QV + g) * HD + pw] = pacc[g];
    barrier();
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint o = min(tid + r * WG, QV * D - 1u), g = o / D, d = o % D;
      float a = 0.0;
      [[unroll]] for (uint t = 0; t < KS; ++t) {
        const vec2 x = vs[(t * QV + g) * HD + d / 2u];
        a += (d & 1u) != 0u ? x.y : x.x;
      }
      acc[r] = a;
    }
  }

  if (nact == 1u) {  // the only split: the normalized output
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint o = tid + r * WG;
      if (o < qn * D) y[elem(kvh, z, o)] = acc[r] / lrow[o / D];
    }
  } else {
    // 5. Partial results, then the last split to arrive combines them.
    if (tid < qn) {
      const uint pb = (slot(kvh, z, tid) * SPLITS + s) * (D + 2u);
      part[pb] = mrow[tid];
      part[pb + 1u] = lrow[tid];
    }
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint o = tid + r * WG;
      if (o < qn * D) part[(slot(kvh, z, o / D) * SPLITS + s) * (D + 2u) + 2u + o % D] = acc[r];
    }
    memoryBarrierBuffer();
    barrier();
    const uint counter = ROWS == 1 ? kvh : kvh * gl_NumWorkGroups.z + z;
    if (tid == 0) last = atomicAdd(arrived[counter], 1u) == nact - 1u ? 1u : 0u;
    barrier();
    if (last == 0u) return;
    memoryBarrierBuffer();
    // Per virtual query the maximum M of the splits' maxima, the weights exp(m_t - M) and the sum
    // L; then each output's accumulators, 16 loads in flight at a time. (Preloading the first 16
    // splits' accumulators before the weights, into registers: 9 us per step slower at position
    // 128 on the H200, 3 at 2032, RESULTS.md 2026-11-29 session 12.) M is finite: split 0 holds
    // position 0, which every row sees.
#ifdef VKQC_SUBGROUP
    // (subgroup arithmetic) Per virtual query, one subgroup: its invocations load the
    // splits' maxima and sums, M by subgroupMax, the weights into sp, L by subgroupAdd; one barrier
    // instead of four.
    for (uint qi = gl_SubgroupID; qi < qn; qi += gl_NumSubgroups) {
      float mx = NEG_INF;
      for (uint t = gl_SubgroupInvocationID; t < nact; t += gl_SubgroupSize) {
        const uint pb = (slot(kvh, z, qi) * SPLITS + t) * (D + 2u);
        const float m = part[pb];
        sp[qi * SPLITS + t] = m;
        sp[(QV + qi) * SPLITS + t] = part[pb + 1u];
        mx = max(mx, m);
      }
      mx = subgroupMax(mx);
      float l = 0.0;
      for (uint t = gl_SubgroupInvocationID; t < nact; t += gl_SubgroupSize) {
        const float w = exp(sp[qi * SPLITS + t] - mx);
        sp[qi * SPLITS + t] = w;
        l += sp[(QV + qi) * SPLITS + t] * w;
      }
      l = subgroupAdd(l);
      if (subgroupElect()) lrow[qi] = l;
    }
    barrier();
#else
    for (uint i = tid; i < qn * nact; i += WG) {
      const uint qi = i / nact, t = i % nact, pb = (slot(kvh, z, qi) * SPLITS + t) * (D + 2u);
      sp[qi * SPLITS + t] = part[pb];
      sp[(QV + qi) * SPLITS + t] = part[pb + 1u];
    }
    barrier();
    if (tid < qn) {
      float mx = NEG_INF;
      for (uint t = 0; t < nact; ++t) mx = max(mx, sp[tid * SPLITS + t]);
      mrow[tid] = mx;
    }
    barrier();
    for (uint i = tid; i < qn * nact; i += WG) {
      const uint qi = i / nact, t = i % nact;
      sp[qi * SPLITS + t] = exp(sp[qi * SPLITS + t] - mrow[qi]);
    }
    barrier();
    if (tid < qn) {
      float l = 0.0;
      for (uint t = 0; t < nact; ++t) l += sp[(QV + tid) * SPLITS + t] * sp[tid * SPLITS + t];
      lrow[tid] = l;
    }
    barrier();
#endif
    [[unroll]] for (uint r = 0; r < OPT; ++r) {
      const uint o = tid + r * WG;
      if (o < qn * D) {
        const uint qi = o / D, d = o % D, base = slot(kvh, z, qi) * SPLITS * (D + 2u) + 2u + d;
        float a = 0.0;
        for (uint t0 = 0; t0 < nact; t0 += 16u) {
          float pw[16];
          [[unroll]] for (uint u = 0; u < 16u; ++u) pw[u] = part[base + min(t0 + u, nact - 1u) * (D + 2u)];
          [[unroll]] for (uint u = 0; u < 16u; ++u)
            if (t0 + u < nact) a += pw[u] * sp[qi * SPLITS + t0 + u];
        }
        y[elem(kvh, z, o)] = a / lrow[qi];
      }
    }
    if (tid == 0) atomicExchange(arrived[counter], 0u);
  }
}
