// Whole-file reading and atomic whole-file writing. Plain bytes; no format.
#ifndef CCREPLAY_BASE_FILE_UTIL_H_
#define CCREPLAY_BASE_FILE_UTIL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ccreplay {

// Returns the whole content of the file at `path` (regular files, pipes and
// character devices alike: it reads until end of file). Errors carry the
// errno-derived code and read "path: <strerror>", e.g.
// "t.pb: No such file or directory" (code NotFound).
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `contents` to `path + ".tmp.<pid>"` in the same directory, flushes it
// to the device (fsync) and renames it over `path`. On every failure the
// temporary file is removed, so `path` either keeps its previous content or
// gets the complete new content; no partial file ever appears under `path`.
// New files get mode 0666 & ~umask. A symlink at `path` is replaced, not
// followed.
// REQUIRES: no other thread of this process writes the same `path` at the
// same time (they would share the temporary name).
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

}  // namespace ccreplay

#endif  // CCREPLAY_BASE_FILE_UTIL_H_
