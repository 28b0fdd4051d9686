#include "import/msccl_xml.h"

#include <tinyxml2.h>

#include <limits>
#include <map>
#include <string>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ccreplay {
namespace msccl {

absl::string_view StepTypeName(StepType t) {
  switch (t) {
    case StepType::kSend:
      return "s";
    case StepType::kRecv:
      return "r";
    case StepType::kRecvCopySend:
      return "rcs";
    case StepType::kRecvReduceCopy:
      return "rrc";
    case StepType::kRecvReduceSend:
      return "rrs";
    case StepType::kRecvReduceCopySend:
      return "rrcs";
    case StepType::kReduce:
      return "re";
    case StepType::kCopy:
      return "cpy";
    case StepType::kNop:
      return "nop";
  }
  return "?";
}

bool StepSends(StepType t) {
  return t == StepType::kSend || t == StepType::kRecvCopySend ||
         t == StepType::kRecvReduceSend || t == StepType::kRecvReduceCopySend;
}

bool StepReceives(StepType t) {
  return t == StepType::kRecv || t == StepType::kRecvCopySend ||
         t == StepType::kRecvReduceCopy || t == StepType::kRecvReduceSend ||
         t == StepType::kRecvReduceCopySend;
}

namespace {

using tinyxml2::XMLElement;

// Turns tinyxml2's line numbers into line:col by looking the element's tag
// (or an attribute's name) up on its line: tinyxml2 keeps lines only.
class Places {
 public:
  Places(absl::string_view text, std::string file)
      : text_(text), file_(std::move(file)) {
    starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') starts_.push_back(i + 1);
  }

  absl::string_view Line(int line) const {
    if (line < 1 || static_cast<size_t>(line) > starts_.size()) return {};
    const size_t b = starts_[line - 1];
    const size_t e = static_cast<size_t>(line) < starts_.size() ? starts_[line]
                                                                : text_.size();
    return text_.substr(b, e - b);
  }

  XmlPlace Of(const XMLElement* e) const {
    XmlPlace p{e->GetLineNum(), 1};
    const size_t c = Line(p.line).find(absl::StrCat("<", e->Name()));
    if (c != absl::string_view::npos) p.column = static_cast<int>(c) + 1;
    return p;
  }

  XmlPlace OfAttribute(const XMLElement* e, absl::string_view name) const {
    XmlPlace p = Of(e);
    const absl::string_view line = Line(p.line);
    const size_t c = line.find(absl::StrCat(" ", name, "="), p.column - 1);
    if (c != absl::string_view::npos) p.column = static_cast<int>(c) + 2;
    return p;
  }

  absl::Status Error(XmlPlace p, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ":", p.line, ":", p.column, ": ", what));
  }

 private:
  absl::string_view text_;
  std::string file_;
  std::vector<size_t> starts_;
};

absl::StatusOr<int64_t> IntAttr(const Places& at, const XMLElement* e,
                                const char* name) {
  const char* v = e->Attribute(name);
  if (v == nullptr) {
    return at.Error(at.Of(e), absl::StrCat("<", e->Name(), "> has no '", name,
                                           "' attribute"));
  }
  int64_t x = 0;
  if (!absl::SimpleAtoi(v, &x)) {
    return at.Error(at.OfAttribute(e, name),
                    absl::StrCat("<", e->Name(), "> attribute ", name, "=\"", v,
                                 "\" is not an integer"));
  }
  return x;
}

// IntAttr as a T: a value outside T's range is an error naming the attribute.
template <typename T>
absl::StatusOr<T> IntAttrAs(const Places& at, const XMLElement* e,
                            const char* name) {
  auto v = IntAttr(at, e, name);
  if (!v.ok()) return v.status();
  if (*v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
      (*v > 0 && static_cast<uint64_t>(*v) >
                     static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
    return at.Error(
        at.OfAttribute(e, name),
        absl::StrCat("<", e->Name(), "> attribute ", name, "=", *v,
                     " is out of range [", std::numeric_limits<T>::min(), ", ",
                     std::numeric_limits<T>::max(), "]"));
  }
  return static_cast<T>(*v);
}

absl::StatusOr<std::string> StrAttr(const Places& at, const XMLElement* e,
                                    const char* name) {
  const char* v = e->Attribute(name);
  if (v == nullptr) {
    return at.Error(at.Of(e), absl::StrCat("<", e->Name(), "> has no '", name,
                                           "' attribute"));
  }
  return std::string(v);
}

// Reads attribute `name` of `e` into `out` (int64_t or int), or returns.
// Reads integer attribute `name` of `e` into `out`, refusing a value that
// does not fit out's type (never a wrapped number).
#define CCREPLAY_INT_ATTR(out, e, name)                                       \
  do {                                                                        \
    auto v_ = IntAttrAs<std::remove_reference_t<decltype(out)>>(at, e, name); \
    if (!v_.ok()) return v_.status();                                         \
    out = *v_;                                                                \
  } while (0)

absl::StatusOr<StepType> ParseType(const Places& at, const XMLElement* e,
                                   const std::string& t) {
  static const std::map<std::string, StepType> kTypes = {
      {"s", StepType::kSend},
      {"r", StepType::kRecv},
      {"rcs", StepType::kRecvCopySend},
      {"rrc", StepType::kRecvReduceCopy},
      {"rrs", StepType::kRecvReduceSend},
      {"rrcs", StepType::kRecvReduceCopySend},
      {"re", StepType::kReduce},
      {"cpy", StepType::kCopy},
      {"nop", StepType::kNop}};
  auto it = kTypes.find(t);
  if (it == kTypes.end()) {
    return at.Error(at.OfAttribute(e, "type"),
                    absl::StrCat("unknown step type '", t,
                                 "' (known: s, r, rcs, rrc, rrs, rrcs, re, "
                                 "cpy, nop)"));
  }
  return it->second;
}

absl::StatusOr<char> ParseBuf(const Places& at, const XMLElement* e,
                              const char* name) {
  auto v = StrAttr(at, e, name);
  if (!v.ok()) return v.status();
  if (*v != "i" && *v != "o" && *v != "s") {
    return at.Error(at.OfAttribute(e, name),
                    absl::StrCat(name, "=\"", *v,
                                 "\" is not a buffer (i input, o output, s "
                                 "scratch)"));
  }
  return (*v)[0];
}

absl::StatusOr<Step> ParseStep(const Places& at, const XMLElement* e) {
  Step st;
  st.place = at.Of(e);
  CCREPLAY_INT_ATTR(st.s, e, "s");
  auto type = StrAttr(at, e, "type");
  if (!type.ok()) return type.status();
  auto t = ParseType(at, e, *type);
  if (!t.ok()) return t.status();
  st.type = *t;
  auto src = ParseBuf(at, e, "srcbuf");
  if (!src.ok()) return src.status();
  auto dst = ParseBuf(at, e, "dstbuf");
  if (!dst.ok()) return dst.status();
  st.srcbuf = *src;
  st.dstbuf = *dst;
  CCREPLAY_INT_ATTR(st.srcoff, e, "srcoff");
  CCREPLAY_INT_ATTR(st.dstoff, e, "dstoff");
  CCREPLAY_INT_ATTR(st.cnt, e, "cnt");
  CCREPLAY_INT_ATTR(st.depid, e, "depid");
  CCREPLAY_INT_ATTR(st.deps, e, "deps");
  int hasdep = 0;
  CCREPLAY_INT_ATTR(hasdep, e, "hasdep");
  st.hasdep = hasdep != 0;
  return st;
}

absl::StatusOr<Threadblock> ParseTb(const Places& at, const XMLElement* e) {
  Threadblock tb;
  tb.place = at.Of(e);
  CCREPLAY_INT_ATTR(tb.id, e, "id");
  CCREPLAY_INT_ATTR(tb.send, e, "send");
  CCREPLAY_INT_ATTR(tb.recv, e, "recv");
  CCREPLAY_INT_ATTR(tb.chan, e, "chan");
  for (const XMLElement* s = e->FirstChildElement(); s != nullptr;
       s = s->NextSiblingElement()) {
    if (std::string(s->Name()) != "step") {
      return at.Error(at.Of(s), absl::StrCat("unexpected <", s->Name(),
                                             "> in <tb> (want <step>)"));
    }
    auto st = ParseStep(at, s);
    if (!st.ok()) return st.status();
    if (st->s != static_cast<int>(tb.steps.size())) {
      return at.Error(
          at.OfAttribute(s, "s"),
          absl::StrCat("step s=", st->s, " is step ", tb.steps.size(),
                       " of tb ", tb.id, ": steps must be numbered 0, 1, ..."));
    }
    tb.steps.push_back(*std::move(st));
  }
  return tb;
}

absl::StatusOr<Gpu> ParseGpu(const Places& at, const XMLElement* e) {
  Gpu g;
  g.place = at.Of(e);
  CCREPLAY_INT_ATTR(g.id, e, "id");
  CCREPLAY_INT_ATTR(g.i_chunks, e, "i_chunks");
  CCREPLAY_INT_ATTR(g.o_chunks, e, "o_chunks");
  CCREPLAY_INT_ATTR(g.s_chunks, e, "s_chunks");
  for (const XMLElement* t = e->FirstChildElement(); t != nullptr;
       t = t->NextSiblingElement()) {
    if (std::string(t->Name()) != "tb") {
      return at.Error(at.Of(t), absl::StrCat("unexpected <", t->Name(),
                                             "> in <gpu> (want <tb>)"));
    }
    auto tb = ParseTb(at, t);
    if (!tb.ok()) return tb.status();
    for (const Threadblock& other : g.tbs) {
      if (other.id == tb->id) {
        return at.Error(tb->place, absl::StrCat("gpu ", g.id, " has tb id ",
                                                tb->id, " twice (also at line ",
                                                other.place.line, ")"));
      }
    }
    g.tbs.push_back(*std::move(tb));
  }
  return g;
}

absl::Status ParseAlgoAttrs(const Places& at, const XMLElement* e, Algo* a) {
  a->place = at.Of(e);
  for (auto [field, name] :
       {std::pair{&a->name, "name"}, std::pair{&a->proto, "proto"},
        std::pair{&a->coll, "coll"}}) {
    auto v = StrAttr(at, e, name);
    if (!v.ok()) return v.status();
    *field = *v;
  }
  CCREPLAY_INT_ATTR(a->nchannels, e, "nchannels");
  CCREPLAY_INT_ATTR(a->nchunksperloop, e, "nchunksperloop");
  CCREPLAY_INT_ATTR(a->ngpus, e, "ngpus");
  int inplace = 0;
  CCREPLAY_INT_ATTR(inplace, e, "inplace");
  a->inplace = inplace != 0;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Algo> ParseAlgo(absl::string_view xml, const std::string& file) {
  tinyxml2::XMLDocument doc;
  const tinyxml2::XMLError err = doc.Parse(xml.data(), xml.size());
  if (err != tinyxml2::XML_SUCCESS) {
    const char* s = doc.ErrorStr();
    return absl::InvalidArgumentError(
        absl::StrCat(file, ":", doc.ErrorLineNum(),
                     ": malformed XML: ", s == nullptr ? "" : s));
  }
  Places at(xml, file);
  const XMLElement* root = doc.RootElement();
  if (root == nullptr || std::string(root->Name()) != "algo") {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not an MSCCL-IR algorithm (no <algo> root)"));
  }
  Algo a;
  if (auto s = ParseAlgoAttrs(at, root, &a); !s.ok()) return s;
  for (const XMLElement* g = root->FirstChildElement(); g != nullptr;
       g = g->NextSiblingElement()) {
    if (std::string(g->Name()) != "gpu") {
      return at.Error(at.Of(g), absl::StrCat("unexpected <", g->Name(),
                                             "> in <algo> (want <gpu>)"));
    }
    auto gpu = ParseGpu(at, g);
    if (!gpu.ok()) return gpu.status();
    if (gpu->id != static_cast<int>(a.gpus.size())) {
      return at.Error(
          gpu->place,
          absl::StrCat("<gpu id=", gpu->id, "> is gpu number ", a.gpus.size(),
                       " of the file: gpus must be listed as 0, "
                       "1, ..."));
    }
    a.gpus.push_back(*std::move(gpu));
  }
  if (static_cast<int>(a.gpus.size()) != a.ngpus) {
    return at.Error(a.place, absl::StrCat("ngpus=", a.ngpus,
                                          " but the file "
                                          "lists ",
                                          a.gpus.size(), " <gpu> elements"));
  }
  return a;
}

}  // namespace msccl
}  // namespace ccreplay
