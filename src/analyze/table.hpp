// A table of preformatted cells, rendered as aligned text, markdown or CSV.
// The analyses build one Table for the human formats; their JSON carries
// the unformatted numbers.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace zb {

struct Table {
  std::string title;  // a line above the text/markdown table; not in CSV
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t label_columns = 2;  // left-aligned in text; the rest (numbers) right-aligned
  std::size_t column_gap = 2;     // spaces between text columns
  bool last_column_text = false;  // the last column left-aligned too (words after the numbers)
};

// Every renderer shows a cell's control characters escaped ("\x1b"): a cell
// may hold a name from a run directory, and a terminal acts on them.
std::string render_text(const Table& table);
std::string render_markdown(const Table& table);
std::string render_csv(const Table& table);   // RFC 4180 quoting where needed
std::string render_html(const Table& table);  // <table> with the title as its caption, cells escaped

// A markdown table cell: control characters escaped, and a '|' (a name may
// hold one) escaped so that it does not end the cell.
std::string markdown_cell(const std::string& text);

std::string fixed(double value, int decimals);                              // "%.*f"
std::string fixed_or_na(const std::optional<double>& value, int decimals);  // fixed, or "n/a" when absent
std::string percent(double value, int decimals = 2);                        // "12.34 %"
// The seed's three decimals where they show at least two significant digits
// (from 0.01 s up); below, as many as show three: 6 for 0.3 ms (0.000313). Zero: 3.
int seconds_decimals(double seconds);
// The seed's "%.3f (%.5f)" for a time and its spread, with more decimals
// where three would not show three digits of the time ("0.000313 (0.00000121)").
std::string seconds_with_spread(double seconds, double spread, const char* open = " (", const char* close = ")");
std::string gbps_or_na(const std::optional<double>& bytes_per_s);  // "1.234" (GB/s, 1e9), or "n/a"
// "1, 2 and 5": the first `most` of `items`, then "and N more".
std::string listed_words(const std::vector<std::string>& items, std::size_t most = 6);
// "rank 3", "ranks 1, 2 and 5": listed_words of the ranks.
std::string ranks_words(const std::vector<int>& ranks);
// The largest binary unit `bytes` reaches (GiB, MiB, KiB), else {"bytes", 1}.
struct BinaryUnit {
  const char* name;
  double bytes;
};
BinaryUnit binary_unit_for(double bytes);

}  // namespace zb
