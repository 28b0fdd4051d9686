#include "base/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/huge_pages.h"

namespace ccreplay {
namespace {

absl::Status ErrnoError(int err, absl::string_view path,
                        absl::string_view what = "") {
  return absl::Status(absl::ErrnoToStatusCode(err),
                      absl::StrCat(path, ": ", what, std::strerror(err)));
}

// Closes a descriptor on scope exit unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  // Closes now and reports close()'s errno (0 on success): on some file
  // systems (NFS) a failed write is only reported here.
  int Close() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

// Temporary files in flight, for the signal handler: fixed storage, so the
// handler touches nothing that could be half-updated or allocated.
constexpr int kTempSlots = 8;
char g_temp_paths[kTempSlots][PATH_MAX];
volatile sig_atomic_t g_temp_used[kTempSlots];
std::mutex g_temp_mu;  // serializes Register/Unregister (not the handler)

// Async-signal-safe: unlink(2), signal(2) and raise(3) only.
extern "C" void RemoveTempFilesAndReraise(int sig) {
  for (int i = 0; i < kTempSlots; ++i) {
    if (g_temp_used[i]) ::unlink(g_temp_paths[i]);
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Once per process: the handler for the signals that end a run from outside,
// where their disposition is still the default (a caller's own handler, or
// an inherited "ignore" as under nohup, is kept). SIGXFSZ is ignored so a
// file-size limit fails write(2) with EFBIG and the error path cleans up.
void InstallSignalHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGXFSZ}) {
      struct sigaction old;
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) {
        continue;
      }
      struct sigaction sa = {};
      sa.sa_handler = sig == SIGXFSZ ? SIG_IGN : RemoveTempFilesAndReraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// Unregisters a temporary file on scope exit.
class TempRegistration {
 public:
  explicit TempRegistration(const std::string& path)
      : slot_(RegisterTempFile(path)) {}
  TempRegistration(const TempRegistration&) = delete;
  TempRegistration& operator=(const TempRegistration&) = delete;
  ~TempRegistration() { UnregisterTempFile(slot_); }

 private:
  int slot_;
};

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// "t.pb: 3000000000 bytes, more than the input limit of 2147483648 bytes";
// `size` is "" when unknown (standard input).
absl::Status InputTooLarge(absl::string_view path, absl::string_view size,
                           uint64_t max_bytes) {
  return absl::ResourceExhaustedError(absl::StrCat(
      path, ": ", size, size.empty() ? "" : " bytes, ",
      "more than the input limit of ", max_bytes, " bytes (docs/limits.md)"));
}

// open(2) failed: a symlink loop is named as such rather than by errno's
// words alone.
absl::Status OpenError(int err, const std::string& path) {
  if (err == ELOOP) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": a symlink loop (", std::strerror(err), ")"));
  }
  return ErrnoError(err, path);
}

absl::Status Refused(absl::string_view path, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": ", why, "; refusing to write an output there"));
}

// `path` as its directory (with the trailing '/', "" for none) and its
// file name.
std::pair<std::string, std::string> SplitDirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash + 1), path.substr(slash + 1)};
}

// "<dir>/<name>.tmp.<pid>" beside `target`, with <name> shortened so the
// whole file name stays within NAME_MAX.
std::string TempPathFor(const std::string& target) {
  auto [dir, name] = SplitDirName(target);
  const std::string suffix = absl::StrCat(".tmp.", ::getpid());
  if (name.size() + suffix.size() > NAME_MAX) {
    name.resize(NAME_MAX - suffix.size());
  }
  return absl::StrCat(dir, name, suffix);
}

// Where two outputs would collide: the file's device and inode when it
// exists, else its directory's real path and its name.
struct FileIdentity {
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string place;
  bool SameAs(const FileIdentity& o) const {
    if (exists != o.exists) return false;
    return exists ? dev == o.dev && ino == o.ino : place == o.place;
  }
};

FileIdentity IdentityOf(const std::string& path) {
  FileIdentity id;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  const auto [dir, name] = SplitDirName(path);
  char real[PATH_MAX];
  id.place = ::realpath(dir.empty() ? "." : dir.c_str(), real) != nullptr
                 ? absl::StrCat(real, "/", name)
                 : path;
  return id;
}

}  // namespace

int RegisterTempFile(const std::string& path) {
  InstallSignalHandlers();
  if (path.size() >= PATH_MAX) return -1;
  std::lock_guard<std::mutex> lock(g_temp_mu);
  for (int i = 0; i < kTempSlots; ++i) {
    if (g_temp_used[i]) continue;
    std::memcpy(g_temp_paths[i], path.c_str(), path.size() + 1);
    g_temp_used[i] = 1;  // after the name is complete
    return i;
  }
  return -1;
}

void UnregisterTempFile(int slot) {
  if (slot < 0 || slot >= kTempSlots) return;
  std::lock_guard<std::mutex> lock(g_temp_mu);
  g_temp_used[slot] = 0;
}

absl::StatusOr<std::string> ResolveOutputPath(const std::string& path) {
  if (path.empty()) {
    return absl::InvalidArgumentError("empty output path");
  }
  struct stat st;
  // A missing file (or an unusable directory, which creating the temporary
  // file reports) is written at `path` itself.
  if (::lstat(path.c_str(), &st) != 0) return path;
  std::string target = path;
  if (S_ISLNK(st.st_mode)) {
    char real[PATH_MAX];
    if (::realpath(path.c_str(), real) == nullptr) {
      const int err = errno;
      return Refused(path, err == ELOOP ? "a symlink loop"
                                        : "a symlink to a missing file");
    }
    target = real;
    if (::stat(target.c_str(), &st) != 0) return target;
  }
  if (!S_ISREG(st.st_mode)) {
    return Refused(path,
                   target == path
                       ? absl::StrCat("exists and is ", FileKind(st.st_mode))
                       : absl::StrCat("a symlink to ", target, ", ",
                                      FileKind(st.st_mode)));
  }
  return target;
}

absl::Status CheckOutputPaths(const std::vector<NamedPath>& inputs,
                              const std::vector<NamedPath>& outputs) {
  std::vector<std::pair<const NamedPath*, FileIdentity>> seen;
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    absl::StatusOr<std::string> target = ResolveOutputPath(out.path);
    if (!target.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(out.flag, " ", target.status().message()));
    }
    const FileIdentity id = IdentityOf(*target);
    for (const NamedPath& in : inputs) {
      if (in.path.empty() || in.path == "-") continue;
      const FileIdentity in_id = IdentityOf(in.path);
      if (in_id.exists && id.SameAs(in_id)) {
        return absl::InvalidArgumentError(
            absl::StrCat(out.flag, " ", out.path, " is the same file as input ",
                         in.flag, " ", in.path, "; refusing to overwrite it"));
      }
    }
    for (const auto& [other, other_id] : seen) {
      if (id.SameAs(other_id)) {
        return absl::InvalidArgumentError(absl::StrCat(
            out.flag, " ", out.path, " and ", other->flag, " ", other->path,
            " are the same file; give each output its own path"));
      }
    }
    seen.emplace_back(&out, id);
  }
  return absl::OkStatus();
}

namespace {

// Reads `fd` to its end, at most `max_bytes` (more is an error naming
// `path`, the cap and `what_raises` it).
// `size_hint`: the file's size when known (a regular file), reserved up
// front so that a large trace is not copied at every doubling of the string;
// the loop still reads to the end, whatever the size is by then.
absl::StatusOr<std::string> ReadCapped(int fd, const std::string& path,
                                       uint64_t max_bytes,
                                       uint64_t size_hint = 0) {
  std::string out;
  out.reserve(static_cast<size_t>(std::min(size_hint, max_bytes)));
  AdviseHugePages(out.data(), out.capacity());
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, path, "read failed: ");
    }
    if (n == 0) break;
    if (out.size() + static_cast<uint64_t>(n) > max_bytes) {
      return InputTooLarge(path, "", max_bytes);
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path,
                                             uint64_t max_bytes) {
  if (path == "-") return ReadCapped(STDIN_FILENO, "<stdin>", max_bytes);
  // O_NONBLOCK: opening a FIFO with no writer must not block; the file kind
  // is checked before any read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return OpenError(errno, path);
  FdCloser closer(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoError(errno, path);
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", FileKind(st.st_mode),
        ", not a regular file (give a file, or - for standard input)"));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return InputTooLarge(path, absl::StrCat(st.st_size), max_bytes);
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return ReadCapped(fd, path, max_bytes, static_cast<uint64_t>(st.st_size));
}

namespace {

// Writes all of `contents` to `fd`, retrying after EINTR; errno on failure.
int WriteAll(int fd, absl::string_view contents) {
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  absl::StatusOr<std::string> target = ResolveOutputPath(path);
  if (!target.ok()) return target.status();
  const std::string tmp = TempPathFor(*target);
  // Registered before it exists: a signal between open and unlink removes it.
  TempRegistration registration(tmp);
  const int fd =
      ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    return ErrnoError(err, path,
                      absl::StrCat("cannot create temporary file ", tmp, ": "));
  }
  FdCloser closer(fd);
  auto fail = [&](int err, absl::string_view what) {
    ::unlink(tmp.c_str());
    return ErrnoError(err, path, absl::StrCat(what, " ", tmp, " failed: "));
  };
  if (const int err = WriteAll(fd, contents); err != 0) {
    return fail(err, "write to");
  }
  // Without fsync a crash after the rename could leave an empty or partial
  // file under `path` on file systems that reorder data and metadata.
  if (::fsync(fd) != 0) return fail(errno, "fsync of");
  if (const int err = closer.Close(); err != 0) {
    return fail(err, "close of");
  }
  if (::rename(tmp.c_str(), target->c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError(err, path,
                      absl::StrCat("cannot rename ", tmp, " into place: "));
  }
  return absl::OkStatus();
}

}  // namespace ccreplay
