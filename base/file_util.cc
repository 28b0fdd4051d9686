#include "base/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

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

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, path);
  FdCloser closer(fd);
  std::string out;
  // The size is only a hint (pipes report 0); the loop reads until EOF.
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    out.reserve(static_cast<size_t>(st.st_size));
  }
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, path, "read failed: ");
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
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
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(errno, "write to");
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // Without fsync a crash after the rename could leave an empty or partial
  // file under `path` on file systems that reorder data and metadata.
  if (::fsync(fd) != 0) return fail(errno, "fsync of");
  if (const int err = closer.Close(); err != 0) {
    return fail(err, "close of");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError(err, path,
                      absl::StrCat("cannot rename ", tmp, " into place: "));
  }
  return absl::OkStatus();
}

}  // namespace ccreplay
