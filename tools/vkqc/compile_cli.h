// `vkqc compile` and `vkqc inspect` (of a bundle, or of a model with --target: compiled in memory).
#pragma once
#include "compiler/common/result.h"
#include "tools/vkqc/cli.h"

namespace vkqc {

Status CmdCompile(const Args& a);
Status CmdInspect(const Args& a);

}  // namespace vkqc
