// Chat prompts for the template families GGUF models commonly ship. The Jinja text is not
// executed: its kind is recognised by the header tokens it uses, and the prompt is rendered the
// way that family's published template renders it.
//
//  Llama 3 (Meta-Llama-3-*-Instruct tokenizer_config.json): for each message
//    "<|start_header_id|>" role "<|end_header_id|>\n\n" trim(content) "<|eot_id|>"
//  and, for the generation prompt, "<|start_header_id|>assistant<|end_header_id|>\n\n".
//  The official template also puts bos_token before the first message; it is left out here
//  (as llama.cpp's built-in renderer does) because Encode(add_special=true) adds BOS.
//
//  ChatML: for each message "<|im_start|>" role "\n" content "<|im_end|>\n", and
//  "<|im_start|>assistant\n" for the generation prompt.
#include "compiler/tokenizer/tokenizer.h"

namespace vkqc::tok {
namespace {

constexpr const char* kSupported = "llama3 (uses <|start_header_id|>), chatml (uses <|im_start|>)";

// Jinja's `trim` filter: Python str.strip(), i.e. leading and trailing whitespace.
std::string_view Trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r\f\v";
  const size_t a = s.find_first_not_of(ws);
  if (a == std::string_view::npos) return {};
  const size_t b = s.find_last_not_of(ws);
  return s.substr(a, b - a + 1);
}

}  // namespace

Result<ChatTemplateKind> DetectChatTemplate(std::string_view jinja) {
  if (jinja.empty()) {
    return UserError(std::string("the model has no chat template (tokenizer.chat_template is "
                                 "empty); supported kinds: ") + kSupported);
  }
  if (jinja.find("<|start_header_id|>") != std::string_view::npos) return ChatTemplateKind::kLlama3;
  if (jinja.find("<|im_start|>") != std::string_view::npos) return ChatTemplateKind::kChatML;
  return UserError(std::string("unsupported chat template (tokenizer.chat_template is neither a "
                               "Llama 3 nor a ChatML template); supported kinds: ") + kSupported);
}

Result<std::string> ApplyChatTemplate(const TokenizerData& d, const std::vector<ChatMessage>& messages,
                                      bool add_generation_prompt) {
  VKQC_ASSIGN_OR_RETURN(ChatTemplateKind kind, DetectChatTemplate(d.chat_template));
  std::string out;
  switch (kind) {
    case ChatTemplateKind::kLlama3:
      for (const ChatMessage& m : messages) {
        out += "<|start_header_id|>";
        out += m.role;
        out += "<|end_header_id|>\n\n";
        out += Trim(m.content);
        out += "<|eot_id|>";
      }
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      break;
    case ChatTemplateKind::kChatML:
      for (const ChatMessage& m : messages) {
        out += "<|im_start|>";
        out += m.role;
        out += "\n";
        out += m.content;
        out += "<|im_end|>\n";
      }
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      break;
  }
  return out;
}

}  // namespace vkqc::tok
