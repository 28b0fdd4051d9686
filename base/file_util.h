// Whole-file reading and atomic whole-file writing. Plain bytes; no format.
#ifndef CCREPLAY_BASE_FILE_UTIL_H_
#define CCREPLAY_BASE_FILE_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccreplay {

// The most bytes an input file may have unless the caller says otherwise:
// protobuf's own limit on one message (2 GiB), which every input is.
inline constexpr uint64_t kMaxInputBytes = uint64_t{1} << 31;

// Returns the whole content of the regular file at `path`, or of standard
// input for "-". Anything else is refused before any read (InvalidArgument:
// "p: a FIFO, not a regular file (give a file, or - for standard input)";
// opening never blocks), so no endless device is slurped. More than
// `max_bytes` is ResourceExhausted naming the size and the limit (checked
// from the size before reading, and while reading standard input). Other
// errors carry the errno-derived code and read "path: <strerror>", e.g.
// "t.pb: No such file or directory" (NotFound); a symlink loop reads
// "p: a symlink loop (Too many levels of symbolic links)".
absl::StatusOr<std::string> ReadFileToString(
    const std::string& path, uint64_t max_bytes = kMaxInputBytes);

// The file an output to `path` lands in: `path` itself, or, when `path` is a
// symlink (a chain of them), the regular file it ends at, so the write goes
// through the link and the link stays. InvalidArgument, naming `path`, for an
// empty path, an existing target that is not a regular file (directory,
// device, FIFO, socket) and a symlink to nothing or into a loop.
absl::StatusOr<std::string> ResolveOutputPath(const std::string& path);

// Writes `contents` to a temporary file beside ResolveOutputPath(path)
// ("<name>.tmp.<pid>", the name shortened so it stays within NAME_MAX),
// flushes it to the device (fsync) and renames it over the target. On every
// failure the temporary file is removed, so the target either keeps its
// previous content or gets the complete new content; no partial file ever
// appears. That includes SIGINT, SIGTERM and SIGHUP while the write is in
// flight (a handler removes the temporary file, then the signal takes its
// default course) and a file-size limit (SIGXFSZ is ignored so the write
// fails with EFBIG). New files get mode 0666 & ~umask.
// REQUIRES: no other thread of this process writes the same `path` at the
// same time (they would share the temporary name).
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

// A file a command reads or writes, with what names it on the command line
// (a flag such as "--json", or "trace" for a positional argument).
struct NamedPath {
  std::string flag;
  std::string path;
};

// Refuses, before anything is written, outputs that would destroy something:
// an output that is the same file (device and inode, after symlinks) as an
// input, two outputs that are the same file (or would be created at the same
// place), and any output ResolveOutputPath refuses. Entries with an empty
// path are skipped in both lists (an absent optional flag); an empty output
// path must be refused by the caller when the flag was given. Inputs that do
// not exist are skipped (reading them reports that). InvalidArgument naming
// both flags and paths, e.g.
// "--json t.txtpb is the same file as the input trace t.txtpb; refusing to
// overwrite it".
absl::Status CheckOutputPaths(const std::vector<NamedPath>& inputs,
                              const std::vector<NamedPath>& outputs);

// Registers `path` as a temporary file in flight: until Unregister, SIGINT,
// SIGTERM and SIGHUP remove it before ending the process. Used by
// WriteFileAtomically; exposed for its tests. Returns a slot for
// UnregisterTempFile, or -1 when every slot is taken (the file is then not
// removed by a signal).
int RegisterTempFile(const std::string& path);
void UnregisterTempFile(int slot);

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_FILE_UTIL_H_
