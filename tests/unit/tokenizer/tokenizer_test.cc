// Tokenizer tests on small synthetic vocabularies; every expectation is derived by hand from the
// documented algorithms (SentencePiece BPE scores, GPT-2 merge ranks, the pre-tokenizer regexes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "compiler/tokenizer/tokenizer.h"

namespace vkqc::tok {
namespace {

using Strs = std::vector<std::string>;

bool Has(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// Vocabularies.

// SentencePiece-style: <unk> <s> </s>, 256 byte tokens, single characters, merged pieces.
TokenizerData LlamaData() {
  TokenizerData d;
  d.model = "llama";
  auto add = [&](const std::string& t, float score, int32_t type) {
    d.tokens.push_back(t);
    d.scores.push_back(score);
    d.token_types.push_back(type);
  };
  add("<unk>", 0, kTokenUnknown);
  add("<s>", 0, kTokenControl);
  add("</s>", 0, kTokenControl);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 0, kTokenByte);
  }
  for (const char* c : {"\xE2\x96\x81", "a", "b", "c", "d", "e", "h", "l", "o", "r", "w", "s", "<",
                        "\xE6\x97\xA5" /* 日 */}) {
    add(c, -100, kTokenNormal);
  }
  const std::pair<const char*, float> pieces[] = {
      {"he", -1},  {"ll", -2},  {"llo", -3}, {"hello", -4}, {"\xE2\x96\x81hello", -5}, {"or", -6},
      {"ld", -7},  {"wor", -8}, {"\xE2\x96\x81w", -9},      {"bc", -20},               {"ab", -30},
      {"aa", -40}, {"<s", -50}};
  for (const auto& [t, s] : pieces) add(t, s, kTokenNormal);
  d.bos = 1;
  d.eos = 2;
  d.unk = 0;
  return d;
}

// GPT-2 byte alphabet, written independently of the library: printable bytes stand for
// themselves, the other 68 become U+0100.. in byte order.
std::string B2U(int b) {
  auto printable = [](int x) { return (x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || x >= 0xAE; };
  uint32_t cp = static_cast<uint32_t>(b);
  if (!printable(b)) {
    int rank = 0;
    for (int x = 0; x < b; ++x) rank += printable(x) ? 0 : 1;
    cp = 0x100 + rank;
  }
  std::string s;
  if (cp < 0x80) {
    s += static_cast<char>(cp);
  } else {
    s += static_cast<char>(0xC0 | (cp >> 6));
    s += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return s;
}

const char* kG = "\xC4\xA0";  // Ġ (space)

TokenizerData Gpt2Data(const std::string& pre = "gpt2") {
  TokenizerData d;
  d.model = "gpt2";
  d.pre = pre;
  for (int b = 0; b < 256; ++b) d.tokens.push_back(B2U(b));
  const std::string G = kG;
  d.merges = {G + " w", "o r",   G + "w or", "l d", G + "wor ld", "H e", "l l",
              "He ll",  "Hell o", "1 2",   "12 3", "' s",       "i t", G + " it",
              "b c",    "a b",   "x y",    "y z",  "a a"};
  for (const std::string& m : d.merges) {
    const size_t sp = m.find(' ', 1);
    const std::string merged = m.substr(0, sp) + m.substr(sp + 1);
    if (std::find(d.tokens.begin(), d.tokens.end(), merged) == d.tokens.end()) d.tokens.push_back(merged);
  }
  d.tokens.push_back("xyz");  // no merge path: only ignore_merges (llama3 family) finds it
  d.token_types.assign(d.tokens.size(), kTokenNormal);
  for (const char* s : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    d.tokens.push_back(s);
    d.token_types.push_back(kTokenControl);
  }
  d.bos = d.eos = static_cast<int32_t>(d.tokens.size()) - 3;
  d.add_bos = false;
  d.add_space_prefix = false;
  return d;
}

Tokenizer Make(TokenizerData d) {
  auto t = Tokenizer::Create(std::move(d));
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  return std::move(t).value();
}

Strs Texts(const Tokenizer& t, const std::vector<int32_t>& ids) {
  Strs out;
  for (int32_t id : ids) out.push_back(t.data().tokens.at(id));
  return out;
}

Strs Pre(const std::string& pre, const std::string& text) {
  auto r = PreTokenize(pre, text);
  EXPECT_TRUE(r.ok());
  return r.ok() ? r.value() : Strs{};
}

const char* kU = "\xE2\x96\x81";  // ▁
std::string U(const std::string& s) { return kU + s; }

const Strs kRoundTrip = {
    "",
    "hello world",
    " hello",
    "  leading and trailing  ",
    "multiple    spaces   here",
    " ",
    "line one\nline two\r\n\n",
    "\ttabs\tand\t\ttabs\t",
    "digits 12345 and 1234567890",
    "emoji \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD!",
    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E",  // 日本語
    "mixed: caf\xC3\xA9 \xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xE6\x97\xA5\xE6\x9C\xAC "
    "\xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 x\xC2\xBDy",
    "for (int i=0;i<n;++i) {}",
    "it's I'M we'll THEY'VE 'quoted'",
    "<s> literal </s> <|endoftext|>",
    "invalid \xFF\xFE bytes \xC3 and \xF0\x9F\x98 truncated",
};

// ---------------------------------------------------------------------------------------------
// llama (SentencePiece BPE)

TEST(LlamaTokenizer, MergesByHighestScore) {
  Tokenizer t = Make(LlamaData());
  // ▁hello▁world: he(-1) ll(-2) llo(-3) hello(-4) ▁hello(-5), then or(-6) ld(-7) wor(-8);
  // "▁w"(-9) is stale by then and "▁wor" is not a piece.
  EXPECT_EQ(Texts(t, t.Encode("hello world", false)), (Strs{U("hello"), kU, "wor", "ld"}));
  // bc(-20) beats ab(-30).
  EXPECT_EQ(Texts(t, t.Encode("abc", false)), (Strs{kU, "a", "bc"}));
}

TEST(LlamaTokenizer, TiesGoToTheLeftmostPair) {
  Tokenizer t = Make(LlamaData());
  EXPECT_EQ(Texts(t, t.Encode("aaa", false)), (Strs{kU, "aa", "a"}));
  EXPECT_EQ(Texts(t, t.Encode("aaaa", false)), (Strs{kU, "aa", "aa"}));
}

TEST(LlamaTokenizer, ByteFallbackForUnknownCharacters) {
  Tokenizer t = Make(LlamaData());
  // 日 is a piece, 本 (E6 9C AC) is not.
  std::vector<int32_t> ids = t.Encode("\xE6\x97\xA5\xE6\x9C\xAC", false);
  EXPECT_EQ(Texts(t, ids), (Strs{kU, "\xE6\x97\xA5", "<0xE6>", "<0x9C>", "<0xAC>"}));
  EXPECT_EQ(ids[2], 3 + 0xE6);  // byte tokens start at id 3
  EXPECT_EQ(Texts(t, t.Encode("\n", false)), (Strs{kU, "<0x0A>"}));
}

TEST(LlamaTokenizer, UnknownWithoutByteTokens) {
  TokenizerData d;
  d.model = "llama";
  d.tokens = {"<unk>", "<s>", "</s>", kU, "a"};
  d.token_types = {kTokenUnknown, kTokenControl, kTokenControl, kTokenNormal, kTokenNormal};
  d.unk = 0;
  d.bos = 1;
  Tokenizer t = Make(d);
  EXPECT_EQ(t.Encode("ab\xE6\x9C\xAC", true), (std::vector<int32_t>{1, 3, 4, 0, 0}));
}

TEST(LlamaTokenizer, SpecialTokensInTextArePlainByDefault) {
  Tokenizer t = Make(LlamaData());
  // "<s" is a normal piece; "<s>" is a control token and never formed from text.
  EXPECT_EQ(Texts(t, t.Encode("<s>", false)), (Strs{kU, "<s", "<0x3E>"}));
  // Opt-in: the control text becomes the token; llama.cpp prefixes the text after it.
  EXPECT_EQ(Texts(t, t.Encode("<s>hello", false, /*parse_special=*/true)), (Strs{"<s>", U("hello")}));
}

TEST(LlamaTokenizer, SpecialTokensAndDecode) {
  TokenizerData d = LlamaData();
  d.add_eos = true;
  Tokenizer t = Make(d);
  std::vector<int32_t> ids = t.Encode("hello", true);
  EXPECT_EQ(Texts(t, ids), (Strs{"<s>", U("hello"), "</s>"}));
  EXPECT_EQ(t.Decode(ids), "hello");  // BOS/EOS silent, the prefix space stripped
  EXPECT_EQ(t.Encode("", true), (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(t.TokenBytes(ids[1]), " hello");
  EXPECT_EQ(t.TokenBytes(3 + 0xF0), "\xF0");
  EXPECT_EQ(t.TokenBytes(1), "<s>");
  EXPECT_EQ(t.TokenBytes(99999), "");
}

TEST(LlamaTokenizer, NoSpacePrefix) {
  TokenizerData d = LlamaData();
  d.add_space_prefix = false;
  Tokenizer t = Make(d);
  EXPECT_EQ(Texts(t, t.Encode("hello", false)), (Strs{"hello"}));
  EXPECT_EQ(t.Decode(t.Encode(" hello", false)), " hello");
}

TEST(LlamaTokenizer, RoundTrips) {
  Tokenizer t = Make(LlamaData());
  for (const std::string& s : kRoundTrip) {
    EXPECT_EQ(t.Decode(t.Encode(s, true)), s) << s;
  }
}

// ---------------------------------------------------------------------------------------------
// Pre-tokenizers

TEST(PreTokenizer, HelloWorldDigitsContraction) {
  const std::string s = "Hello world 12345 it's";
  EXPECT_EQ(Pre("gpt2", s), (Strs{"Hello", " world", " 12345", " it", "'s"}));
  EXPECT_EQ(Pre("", s), Pre("gpt2", s));
  EXPECT_EQ(Pre("llama-bpe", s), (Strs{"Hello", " world", " ", "123", "45", " it", "'s"}));
  EXPECT_EQ(Pre("llama3", s), Pre("llama-bpe", s));
  EXPECT_EQ(Pre("qwen2", s), (Strs{"Hello", " world", " ", "1", "2", "3", "4", "5", " it", "'s"}));
  EXPECT_EQ(Pre("smollm", s), (Strs{"Hello", " world", " ", "1", "2", "3", "4", "5", " it", "'s"}));
}

TEST(PreTokenizer, DigitGroups) {
  EXPECT_EQ(Pre("llama3", "1234567"), (Strs{"123", "456", "7"}));
  EXPECT_EQ(Pre("qwen2", "1234"), (Strs{"1", "2", "3", "4"}));
  EXPECT_EQ(Pre("gpt2", "x 1234567"), (Strs{"x", " 1234567"}));
  EXPECT_EQ(Pre("smollm", "a12"), (Strs{"a", "1", "2"}));
}

TEST(PreTokenizer, Contractions) {
  // GPT-2 is case-sensitive; Llama 3 folds case. "'d" wins over a longer word after it.
  EXPECT_EQ(Pre("gpt2", "IT'S"), (Strs{"IT", "'", "S"}));
  EXPECT_EQ(Pre("llama3", "IT'S"), (Strs{"IT", "'S"}));
  EXPECT_EQ(Pre("gpt2", "we'll they've I'm"), (Strs{"we", "'ll", " they", "'ve", " I", "'m"}));
  EXPECT_EQ(Pre("gpt2", "'dog"), (Strs{"'d", "og"}));
  EXPECT_EQ(Pre("gpt2", "'hello"), (Strs{"'", "hello"}));
  EXPECT_EQ(Pre("llama3", "'hello"), (Strs{"'hello"}));  // [^\r\n\p{L}\p{N}]?\p{L}+
}

TEST(PreTokenizer, Whitespace) {
  EXPECT_EQ(Pre("gpt2", "a  b"), (Strs{"a", " ", " b"}));
  EXPECT_EQ(Pre("gpt2", "a\n\nb"), (Strs{"a", "\n", "\n", "b"}));
  EXPECT_EQ(Pre("gpt2", "a  "), (Strs{"a", "  "}));
  EXPECT_EQ(Pre("gpt2", "\tfoo"), (Strs{"\t", "foo"}));
  EXPECT_EQ(Pre("llama3", "\tfoo"), (Strs{"\tfoo"}));
  EXPECT_EQ(Pre("llama3", "a\n\nb"), (Strs{"a", "\n\n", "b"}));
  EXPECT_EQ(Pre("llama3", "hello   \n  world"), (Strs{"hello", "   \n", " ", " world"}));
  EXPECT_EQ(Pre("llama3", "x!!\n\ny"), (Strs{"x", "!!\n\n", "y"}));
}

TEST(PreTokenizer, CodeAndUnicode) {
  const std::string code = "for (int i=0;i<n;++i) {}";
  EXPECT_EQ(Pre("gpt2", code), (Strs{"for", " (", "int", " i", "=", "0", ";", "i", "<", "n", ";++", "i",
                                     ")", " {}"}));
  EXPECT_EQ(Pre("llama3", code),
            (Strs{"for", " (", "int", " i", "=", "0", ";i", "<n", ";++", "i", ")", " {}"}));
  // Letters (Lo), a symbol run (So So Sk), a number (No).
  EXPECT_EQ(Pre("gpt2", "\xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD x\xC2\xBD"),
            (Strs{"\xE6\x97\xA5\xE6\x9C\xAC", " \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD", " x",
                  "\xC2\xBD"}));
  EXPECT_EQ(Pre("gpt2", "caf\xC3\xA9!"), (Strs{"caf\xC3\xA9", "!"}));
  // Invalid bytes are units of their own and count as [^\s\p{L}\p{N}].
  EXPECT_EQ(Pre("gpt2", "a\xFF\xFE" "b"), (Strs{"a", "\xFF\xFE", "b"}));
}

TEST(PreTokenizer, UnsupportedNameListsTheSupportedOnes) {
  auto r = PreTokenize("tekken", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.error().message, "'tekken'")) << r.error().message;
  EXPECT_TRUE(Has(r.error().message, "llama-bpe")) << r.error().message;
}

// ---------------------------------------------------------------------------------------------
// gpt2 (byte-level BPE)

TEST(Gpt2Tokenizer, ByteAlphabet) {
  Tokenizer t = Make(Gpt2Data());
  EXPECT_EQ(t.TokenId(kG), 32);
  EXPECT_EQ(t.data().tokens[10], "\xC4\x8A");   // Ċ = newline
  EXPECT_EQ(t.data().tokens[0xAD], "\xC5\x83");  // Ń = soft hyphen
  EXPECT_EQ(t.TokenBytes(32), " ");
  EXPECT_EQ(t.TokenBytes(0xAD), "\xAD");
  EXPECT_EQ(t.TokenBytes(t.TokenId(std::string(kG) + "world")), " world");
}

TEST(Gpt2Tokenizer, MergeRanks) {
  Tokenizer t = Make(Gpt2Data());
  const std::string G = kG;
  EXPECT_EQ(Texts(t, t.Encode("Hello world 12345 it's", false)),
            (Strs{"Hello", G + "world", G, "123", "4", "5", G + "it", "'s"}));
  EXPECT_EQ(Texts(t, t.Encode("abc", false)), (Strs{"a", "bc"}));   // "b c" ranks before "a b"
  EXPECT_EQ(Texts(t, t.Encode("xyz", false)), (Strs{"xy", "z"}));   // "x y" ranks before "y z"
  EXPECT_EQ(Texts(t, t.Encode("aaa", false)), (Strs{"aa", "a"}));   // leftmost first
  EXPECT_EQ(Texts(t, t.Encode("\n", false)), (Strs{"\xC4\x8A"}));
}

TEST(Gpt2Tokenizer, PreTokenizerFamilies) {
  const std::string G = kG;
  const std::string s = "Hello world 12345 it's";
  Tokenizer qwen = Make(Gpt2Data("qwen2"));
  EXPECT_EQ(Texts(qwen, qwen.Encode(s, false)),
            (Strs{"Hello", G + "world", G, "1", "2", "3", "4", "5", G + "it", "'s"}));
  Tokenizer llama3 = Make(Gpt2Data("llama-bpe"));
  EXPECT_EQ(Texts(llama3, llama3.Encode(s, false)),
            (Strs{"Hello", G + "world", G, "123", "4", "5", G + "it", "'s"}));
  // llama3 family ignores merges for a pre-token that is a whole vocabulary entry.
  EXPECT_EQ(Texts(llama3, llama3.Encode("xyz", false)), (Strs{"xyz"}));
  Tokenizer smol = Make(Gpt2Data("smollm"));
  EXPECT_EQ(Texts(smol, smol.Encode("12345", false)), (Strs{"1", "2", "3", "4", "5"}));
}

TEST(Gpt2Tokenizer, SpecialTokens) {
  Tokenizer t = Make(Gpt2Data());
  const int32_t eot = t.TokenId("<|endoftext|>");
  const int32_t im_start = t.TokenId("<|im_start|>");
  ASSERT_GE(eot, 0);
  // Plain text by default.
  std::vector<int32_t> plain = t.Encode("<|endoftext|>", false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);
  EXPECT_EQ(t.Decode(plain), "<|endoftext|>");
  std::vector<int32_t> parsed = t.Encode("a<|im_start|>b<|endoftext|>", false, true);
  EXPECT_EQ(parsed, (std::vector<int32_t>{'a', im_start, 'b', eot}));
  EXPECT_EQ(t.Decode(parsed), "ab");  // control tokens produce nothing
  TokenizerData d = Gpt2Data();
  d.add_bos = d.add_eos = true;
  Tokenizer t2 = Make(d);
  EXPECT_EQ(t2.Encode("a", true), (std::vector<int32_t>{eot, 'a', eot}));
}

TEST(Gpt2Tokenizer, RoundTrips) {
  for (const char* pre : {"gpt2", "llama-bpe", "qwen2", "smollm"}) {
    Tokenizer t = Make(Gpt2Data(pre));
    for (const std::string& s : kRoundTrip) EXPECT_EQ(t.Decode(t.Encode(s, true)), s) << pre << ": " << s;
  }
}

TEST(Tokenizers, RandomBytesRoundTripAndNeverCrash) {
  Tokenizer llama = Make(LlamaData());
  Tokenizer gpt2 = Make(Gpt2Data("llama3"));
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 300; ++iter) {
    std::string s(rng() % 40, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 3 == 0 ? ' ' + rng() % 95 : rng() % 256);
    if (s.find(kU) != std::string::npos) continue;  // "▁" is a space to SentencePiece
    EXPECT_EQ(llama.Decode(llama.Encode(s, true)), s);
    EXPECT_EQ(gpt2.Decode(gpt2.Encode(s, true)), s);
  }
}

// ---------------------------------------------------------------------------------------------
// Streaming

TEST(StreamDecoder, HoldsPartialUtf8) {
  Tokenizer t = Make(LlamaData());
  std::vector<int32_t> ids = t.Encode("\xF0\x9F\x98\x80", false);  // 😀 via 4 byte tokens
  ASSERT_EQ(Texts(t, ids), (Strs{kU, "<0xF0>", "<0x9F>", "<0x98>", "<0x80>"}));
  StreamDecoder sd(t);
  EXPECT_EQ(sd.Push(ids[0]), "");  // the prefix space of the first piece is dropped
  EXPECT_EQ(sd.Push(ids[1]), "");
  EXPECT_EQ(sd.Push(ids[2]), "");
  EXPECT_EQ(sd.Push(ids[3]), "");
  EXPECT_EQ(sd.Push(ids[4]), "\xF0\x9F\x98\x80");
  EXPECT_EQ(sd.Push(t.TokenId(U("hello"))), " hello");
  EXPECT_EQ(sd.Push(2), "");  // </s> is silent
  EXPECT_EQ(sd.Flush(), "");
}

TEST(StreamDecoder, FlushReplacesInvalidBytes) {
  Tokenizer t = Make(LlamaData());
  StreamDecoder sd(t);
  EXPECT_EQ(sd.Push(3 + 'A'), "A");
  EXPECT_EQ(sd.Push(3 + 0xFF), "\xEF\xBF\xBD");  // can never start a sequence
  EXPECT_EQ(sd.Push(3 + 0xF0), "");
  EXPECT_EQ(sd.Push(3 + 0x9F), "");
  EXPECT_EQ(sd.Push(3 + 'B'), "\xEF\xBF\xBD" "B");  // F0 9F cut short: one U+FFFD
  EXPECT_EQ(sd.Push(3 + 0xE6), "");
  EXPECT_EQ(sd.Flush(), "\xEF\xBF\xBD");
  EXPECT_EQ(sd.Flush(), "");
}

TEST(StreamDecoder, MatchesDecodeOnValidText) {
  Tokenizer llama = Make(LlamaData());
  Tokenizer gpt2 = Make(Gpt2Data());
  for (const Tokenizer* t : {&llama, &gpt2}) {
    for (const std::string& s : kRoundTrip) {
      if (Has(s, "invalid")) continue;
      std::vector<int32_t> ids = t->Encode(s, true);
      StreamDecoder sd(*t);
      std::string out;
      for (int32_t id : ids) out += sd.Push(id);
      out += sd.Flush();
      EXPECT_EQ(out, t->Decode(ids)) << s;
      EXPECT_EQ(out, s);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Chat templates

std::vector<ChatMessage> Conversation() {
  return {{"system", "You are helpful."}, {"user", "  Hi!  \n"}};
}

TEST(ChatTemplate, Llama3) {
  TokenizerData d = Gpt2Data();
  d.chat_template =
      "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' "
      "+ message['content'] | trim + '<|eot_id|>' }}{% endfor %}";
  auto r = ApplyChatTemplate(d, Conversation(), true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value(),
            "<|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
  auto no_prompt = ApplyChatTemplate(d, {{"user", "x"}}, false);
  ASSERT_TRUE(no_prompt.ok());
  EXPECT_EQ(no_prompt.value(), "<|start_header_id|>user<|end_header_id|>\n\nx<|eot_id|>");
}

TEST(ChatTemplate, ChatML) {
  TokenizerData d = Gpt2Data();
  d.chat_template =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + "
      "'<|im_end|>' + '\\n'}}{% endfor %}";
  auto r = ApplyChatTemplate(d, Conversation(), true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const std::string expected =
      "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\n  Hi!  \n<|im_end|>\n"
      "<|im_start|>assistant\n";
  EXPECT_EQ(r.value(), expected);
  // Encoded with specials parsed, the header texts are single tokens.
  Tokenizer t = Make(d);
  std::vector<int32_t> ids = t.Encode(expected, false, true);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), t.TokenId("<|im_start|>")), 3);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), t.TokenId("<|im_end|>")), 2);
  EXPECT_EQ(ids.front(), t.TokenId("<|im_start|>"));
}

TEST(ChatTemplate, UnknownAndMissingAreRefused) {
  TokenizerData d = Gpt2Data();
  d.chat_template = "{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}";
  auto r = ApplyChatTemplate(d, Conversation(), true);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Has(r.error().message, "llama3")) << r.error().message;
  EXPECT_TRUE(Has(r.error().message, "chatml")) << r.error().message;
  d.chat_template.clear();
  auto empty = ApplyChatTemplate(d, Conversation(), true);
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(Has(empty.error().message, "no chat template")) << empty.error().message;
}

// ---------------------------------------------------------------------------------------------
// Create errors

std::string CreateError(TokenizerData d) {
  auto r = Tokenizer::Create(std::move(d));
  return r.ok() ? std::string("<created>") : r.error().message;
}

TEST(TokenizerCreate, Errors) {
  TokenizerData d = Gpt2Data();
  d.model = "bert";
  std::string e = CreateError(d);
  EXPECT_TRUE(Has(e, "'bert'") && Has(e, "llama, gpt2")) << e;

  d = LlamaData();
  d.tokens.clear();
  d.scores.clear();
  d.token_types.clear();
  d.bos = d.eos = d.unk = -1;
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "vocabulary is empty")) << e;

  d = Gpt2Data();
  d.merges.clear();
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "no merges")) << e;

  d = Gpt2Data();
  d.merges.push_back(std::string(kG) + " zz");
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "unknown token 'zz'") && Has(e, "#19")) << e;

  d = Gpt2Data();
  d.merges.push_back("q z");  // both exist, "qz" does not
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "unknown token 'qz'")) << e;

  d = Gpt2Data();
  d.merges.push_back("nospace");
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "'nospace'") && Has(e, "left right")) << e;

  d = Gpt2Data();
  d.bos = static_cast<int32_t>(d.tokens.size());
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "bos") && Has(e, "out of range")) << e;

  d = LlamaData();
  d.eos = -2;
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "eos = -2")) << e;

  d = LlamaData();
  d.pad = 1 << 20;
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "pad")) << e;

  d = Gpt2Data("tekken");
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "'tekken'") && Has(e, "llama-bpe") && Has(e, "qwen2") && Has(e, "smollm")) << e;

  d = LlamaData();
  d.scores.pop_back();
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "scores")) << e;

  d = LlamaData();
  d.token_types.push_back(1);
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "token types")) << e;

  d = LlamaData();
  d.token_types[5] = 9;
  e = CreateError(d);
  EXPECT_TRUE(Has(e, "token 5") && Has(e, "type 9")) << e;

  EXPECT_EQ(CreateError(LlamaData()), "<created>");
  EXPECT_EQ(CreateError(Gpt2Data()), "<created>");
}

// ---------------------------------------------------------------------------------------------
// Serialization

TokenizerData Everything() {
  TokenizerData d = Gpt2Data("qwen2");
  d.scores.assign(d.tokens.size(), 0.0f);
  for (size_t i = 0; i < d.scores.size(); ++i) d.scores[i] = -0.25f * static_cast<float>(i);
  d.unk = 3;
  d.pad = 4;
  d.eos = 5;
  d.add_bos = false;
  d.add_eos = true;
  d.add_space_prefix = true;
  d.chat_template = "{{ '<|im_start|>' }}";
  return d;
}

TEST(Serialization, RoundTripsEveryField) {
  for (const TokenizerData& d : {Everything(), LlamaData(), TokenizerData{}}) {
    std::vector<uint8_t> blob = Serialize(d);
    auto back = Deserialize(blob.data(), blob.size());
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_TRUE(back.value() == d);
    EXPECT_EQ(back->pre, d.pre);
    EXPECT_EQ(back->merges, d.merges);
    EXPECT_EQ(back->scores, d.scores);
    EXPECT_EQ(back->chat_template, d.chat_template);
    EXPECT_EQ(back->add_eos, d.add_eos);
    EXPECT_EQ(Serialize(back.value()), blob);
  }
  std::vector<uint8_t> blob = Serialize(TokenizerData{});
  EXPECT_EQ(std::string(blob.begin(), blob.begin() + 4), "VKQT");
  EXPECT_EQ(blob[4], 1);  // version 1, little-endian
  EXPECT_EQ(blob[8], 1 | 4);  // add_bos | add_space_prefix
}

TEST(Serialization, EveryTruncationIsAnError) {
  for (const TokenizerData& d : {Everything(), LlamaData()}) {
    std::vector<uint8_t> blob = Serialize(d);
    for (size_t n = 0; n < blob.size(); ++n) {
      std::vector<uint8_t> cut(blob.begin(), blob.begin() + n);  // exact-size copy for sanitizers
      auto r = Deserialize(cut.data(), cut.size());
      ASSERT_FALSE(r.ok()) << "length " << n;
    }
    blob.push_back(0);
    auto extra = Deserialize(blob.data(), blob.size());
    ASSERT_FALSE(extra.ok());
    EXPECT_TRUE(Has(extra.error().message, "unexpected bytes")) << extra.error().message;
  }
  EXPECT_FALSE(Deserialize(nullptr, 0).ok());
}

TEST(Serialization, HostileHeadersAreErrors) {
  const std::vector<uint8_t> good = Serialize(TokenizerData{});
  auto expect_error = [](std::vector<uint8_t> b, const std::string& what) {
    auto r = Deserialize(b.data(), b.size());
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_TRUE(Has(r.error().message, what)) << r.error().message;
  };
  std::vector<uint8_t> b = good;
  b[0] = 'X';
  expect_error(b, "magic");
  b = good;
  b[4] = 2;
  expect_error(b, "version 2");
  b = good;
  b[8] = 0x80;
  expect_error(b, "flag");
  // Header up to the model string: magic, version, flags, 4 ids = 28 bytes.
  b.assign(good.begin(), good.begin() + 28);
  for (int i = 0; i < 4; ++i) b.push_back(0xFF);  // model length 4 GiB
  expect_error(b, "truncated (in model");
  // Empty model/pre, then a token count of 0xFFFFFFFF with nothing behind it.
  b.assign(good.begin(), good.begin() + 36);
  for (int i = 0; i < 4; ++i) b.push_back(0xFF);
  expect_error(b, "tokens count 4294967295 exceeds");
}

TEST(Serialization, MutatedBlobsNeverCrash) {
  const std::vector<uint8_t> good = Serialize(Everything());
  std::mt19937 rng(99);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] = static_cast<uint8_t>(rng());
    if (rng() % 4 == 0) b.resize(rng() % b.size());
    auto r = Deserialize(b.data(), b.size());
    if (!r.ok()) continue;
    auto t = Tokenizer::Create(std::move(r).value());
    if (!t.ok()) continue;
    ++accepted;
    std::vector<int32_t> ids = t->Encode("Hello world 12345 it's \xF0\x9F\x98\x80", true, true);
    (void)t->Decode(ids);
  }
  EXPECT_GT(accepted, 0);  // some mutations only touch token texts or scores
}

}  // namespace
}  // namespace vkqc::tok
