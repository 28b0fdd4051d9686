// Pieces of a self-contained HTML page (text escaped with XmlEscape of
// report/svg.h) (no script, no network): tables from
// a CSV text or a JSON array of objects, and the page around them with its
// inline CSS. Generic: it knows tables and sections, nothing of collectives.
#ifndef CCREPLAY_REPORT_HTML_H_
#define CCREPLAY_REPORT_HTML_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/json.h"

namespace ccreplay {

// An HTML <table> of a CSV text (RFC 4180, the first record the header);
// cells that read as numbers are right-aligned (class "num").
absl::StatusOr<std::string> HtmlTableFromCsv(const std::string& csv);

// An HTML <table> of a JSON array of flat objects, the columns in the first
// object's key order; doubles print with 4 significant digits, null as "-".
absl::StatusOr<std::string> HtmlTableFromJson(const Json& rows);

struct HtmlSection {
  std::string title;
  std::string intro;  // HTML (escaped by the caller)
  std::string body;   // HTML: tables, inline <svg>
};

// The whole page: <!DOCTYPE html>, UTF-8, a <style> block, the title and
// one <section> per entry.
std::string HtmlPage(const std::string& title, const std::string& subtitle,
                     const std::vector<HtmlSection>& sections);

}  // namespace ccreplay

#endif  // CCREPLAY_REPORT_HTML_H_
