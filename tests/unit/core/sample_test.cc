// vkqc generate's sampling (SampleToken) against a plain implementation that sorts every logit:
// the same tokens for the same seed wherever top-k or top-p orders the candidates, the softmax's
// frequencies where neither does, ties by index.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tools/vkqc/generate.h"

namespace vkqc {
namespace {

// Sorts all (logit descending, index ascending), keeps top_k, cuts to top_p, draws.
int32_t FullSortSample(const std::vector<float>& logits, double temperature, int64_t top_k, double top_p,
                       std::mt19937_64& rng) {
  std::vector<std::pair<float, int32_t>> c(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) c[i] = {logits[i], int32_t(i)};
  std::sort(c.begin(), c.end(), [](auto& a, auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
  size_t keep = top_k > 0 ? std::min<size_t>(size_t(top_k), c.size()) : c.size();
  std::vector<double> p(keep);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) sum += p[i] = std::exp((double(c[i].first) - c[0].first) / temperature);
  if (top_p < 1.0) {
    double acc = 0;
    size_t n = 0;
    while (n < keep && acc < top_p * sum) acc += p[n++];
    keep = std::max<size_t>(n, 1);
    p.resize(keep);
  }
  std::discrete_distribution<size_t> d(p.begin(), p.end());
  return c[d(rng)].second;
}

std::vector<float> Logits(size_t vocab, uint32_t seed, float stddev, bool ties) {
  std::mt19937 g(seed);
  std::normal_distribution<float> n(0.0f, stddev);
  std::vector<float> l(vocab);
  for (auto& x : l) x = ties ? std::round(n(g)) : n(g);  // rounded: many equal logits
  return l;
}

TEST(Sample, SameTokensAsAFullSortWhereTopKOrTopPOrders) {
  struct Opt {
    double t;
    int64_t k;
    double p;
  };
  const Opt opts[] = {{0.8, 40, 1.0}, {0.8, 40, 0.95}, {1.0, 0, 0.9}, {0.5, 0, 0.5}, {1.3, 0, 0.99},
                      {0.8, 1, 1.0}, {2.0, 1000, 0.999}, {0.7, 5000, 1.0}, {1.0, 0, 1e-9}};
  int cases = 0;
  for (size_t vocab : {7u, 300u, 5000u, 128256u})
    for (bool ties : {false, true})
      for (const Opt& o : opts) {
        if (!(o.k > 0 && o.k < int64_t(vocab)) && o.p >= 1.0) continue;  // nothing orders: the softmax test
        const auto l = Logits(vocab, uint32_t(vocab + ties), vocab > 1000 ? 3.0f : 1.5f, ties);
        std::mt19937_64 a(17), b(17);
        for (int draw = 0; draw < (vocab > 10000 ? 4 : 40); ++draw) {
          const int32_t want = FullSortSample(l, o.t, o.k, o.p, a);
          const int32_t got = SampleToken(l.data(), int64_t(vocab), o.t, o.k, o.p, b);
          ASSERT_EQ(got, want) << "vocab " << vocab << " ties " << ties << " t " << o.t << " k " << o.k << " p " << o.p
                               << " draw " << draw;
        }
        ++cases;
      }
  EXPECT_EQ(cases, 64);
}

TEST(Sample, GreedyIsTheFirstMaximum) {
  std::vector<float> l = {1, 5, 3, 5, -2};
  std::mt19937_64 r(1);
  EXPECT_EQ(SampleToken(l.data(), 5, 0.0, 0, 1.0, r), 1);
  EXPECT_EQ(SampleToken(l.data(), 5, 0.0, 3, 0.5, r), 1);
  EXPECT_EQ(SampleToken(l.data(), 5, 1.0, 1, 1.0, r), 1);  // top-1: the first maximum as well
}

TEST(Sample, TemperatureAloneDrawsTheSoftmax) {
  const std::vector<float> l = {0.0f, 1.0f, 2.0f, -1.0f, 0.5f, 2.0f};
  const double t = 0.7;
  std::vector<double> want(l.size());
  double sum = 0;
  for (size_t i = 0; i < l.size(); ++i) sum += want[i] = std::exp(double(l[i]) / t);
  std::vector<int> seen(l.size(), 0);
  std::mt19937_64 r(3);
  const int n = 200000;
  for (int i = 0; i < n; ++i) ++seen[size_t(SampleToken(l.data(), int64_t(l.size()), t, 0, 1.0, r))];
  for (size_t i = 0; i < l.size(); ++i) {
    const double p = want[i] / sum, sd = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(double(seen[i]) / n, p, 5 * sd) << "token " << i;
  }
}

}  // namespace
}  // namespace vkqc
