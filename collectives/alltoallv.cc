#include "collectives/alltoallv.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/file_util.h"
#include "collectives/lower_internal.h"

namespace ccreplay {
namespace {

// Splits `total` bytes in proportion to `w` (some > 0).
std::vector<uint64_t> Apportion(const std::vector<double>& w, uint64_t total) {
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<uint64_t> out(w.size());
  uint64_t given = 0;
  for (size_t p = 0; p < w.size(); ++p) {
    const double share = static_cast<double>(total) * (w[p] / sum);
    out[p] = std::min<uint64_t>(static_cast<uint64_t>(std::floor(share)),
                                total - given);
    given += out[p];
  }
  std::vector<size_t> order(w.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return w[a] > w[b]; });
  for (size_t i = 0; given < total; i = (i + 1) % order.size()) {
    if (w[order[i]] <= 0) {
      i = order.size() - 1;  // only peers with weight get bytes
      continue;
    }
    ++out[order[i]];
    ++given;
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<double>>> ReadWeights(
    const std::string& path, uint32_t n) {
  // A regular file (or "-") of bounded size, never an endless device.
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  std::vector<std::vector<double>> rows;
  int line_no = 0;
  for (absl::string_view view : absl::StrSplit(*text, '\n')) {
    std::string line(view);
    ++line_no;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::vector<double> row;
    for (absl::string_view tok :
         absl::StrSplit(line, absl::ByAnyChar(" \t,"), absl::SkipEmpty())) {
      double v = 0;
      if (!absl::SimpleAtod(tok, &v) || !(v >= 0) || !std::isfinite(v)) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ":", line_no, ": bad weight '", tok, "'"));
      }
      row.push_back(v);
    }
    if (row.empty()) continue;
    if (row.size() != n) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_no, ": ", row.size(), " weights, want ", n));
    }
    rows.push_back(std::move(row));
  }
  if (rows.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", rows.size(), " rows of weights, want ", n));
  }
  return rows;
}

}  // namespace

absl::StatusOr<AllToAllvDist> ParseAllToAllvDist(absl::string_view text) {
  AllToAllvDist d;
  if (text == "uniform") return d;
  if (absl::StartsWith(text, "file:") && text.size() > 5) {
    d.kind = AllToAllvDist::kFile;
    d.path = std::string(text.substr(5));
    return d;
  }
  const std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts[0] == "zipf" && (parts.size() == 2 || parts.size() == 3)) {
    d.kind = AllToAllvDist::kZipf;
    if (absl::SimpleAtod(parts[1], &d.zipf_s) && d.zipf_s > 0 &&
        std::isfinite(d.zipf_s) &&
        (parts.size() == 2 || absl::SimpleAtoi(parts[2], &d.seed))) {
      return d;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("bad distribution '", text,
                   "' (use uniform, zipf:S[:SEED] with S > 0, or file:PATH)"));
}

std::string AllToAllvDistName(const AllToAllvDist& d) {
  switch (d.kind) {
    case AllToAllvDist::kZipf:
      return absl::StrCat("zipf:", d.zipf_s, ":", d.seed);
    case AllToAllvDist::kFile:
      return absl::StrCat("file:", d.path);
    default:
      return "uniform";
  }
}

absl::StatusOr<std::vector<uint64_t>> AllToAllvMatrix(const AllToAllvDist& dist,
                                                      uint32_t n,
                                                      uint64_t per_chip_bytes) {
  if (n < 1) return absl::InvalidArgumentError("alltoallv: n must be >= 1");
  std::vector<uint64_t> out(uint64_t{n} * n);
  if (dist.kind == AllToAllvDist::kUniform) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t p = 0; p < n; ++p) {
        out[uint64_t{i} * n + p] = lowering::ChunkSize(per_chip_bytes, n, p);
      }
    }
    return out;
  }
  std::vector<std::vector<double>> weights;
  if (dist.kind == AllToAllvDist::kFile) {
    auto w = ReadWeights(dist.path, n);
    if (!w.ok()) return w.status();
    weights = *std::move(w);
  } else {
    if (!(dist.zipf_s > 0)) {
      return absl::InvalidArgumentError("alltoallv: zipf exponent must be > 0");
    }
    std::mt19937_64 rng(dist.seed);
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<uint32_t> rank(n);
      std::iota(rank.begin(), rank.end(), 0);
      // Fisher-Yates with the engine directly (distributions are not
      // portable across standard libraries).
      for (uint32_t x = n; x > 1; --x) std::swap(rank[x - 1], rank[rng() % x]);
      std::vector<double> w(n);
      for (uint32_t p = 0; p < n; ++p) {
        w[rank[p]] = 1.0 / std::pow(static_cast<double>(p + 1), dist.zipf_s);
      }
      weights.push_back(std::move(w));
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (std::accumulate(weights[i].begin(), weights[i].end(), 0.0) <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("alltoallv: row ", i, " has no positive weight"));
    }
    const std::vector<uint64_t> row = Apportion(weights[i], per_chip_bytes);
    std::copy(row.begin(), row.end(), out.begin() + uint64_t{i} * n);
  }
  return out;
}

}  // namespace ccreplay
