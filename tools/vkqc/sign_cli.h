// Signed bundles on the command line: `vkqc keygen`, `vkqc sign`, `compile --sign-key`,
// `--trusted-key` of run/bench/generate/inspect (runtime/src/bundle_sign.h has the format).
#pragma once
#include <vector>

#include "compiler/common/result.h"
#include "runtime/src/bundle_sign.h"
#include "tools/vkqc/cli.h"

namespace vkqc {

Status CmdKeygen(const Args& a);
Status CmdSign(const Args& a);
// Reads --sign-key's file (a user error if it is not a key), before a long compile.
Status CheckSignKey(const Args& a);
// Signs `bundle` in place with the key file of --sign-key (no-op without it).
Status SignWithKeyFile(const Args& a, std::vector<uint8_t>* bundle);
// One line for `inspect`: unsigned / signed by KEY, verified against --trusted-key when given.
Status PrintSignature(const Args& a, const std::vector<uint8_t>& bundle);

}  // namespace vkqc
