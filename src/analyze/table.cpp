#include "table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "src/common/json_input.hpp"
#include "svg.hpp"

namespace zb {
namespace {

// A cell as a terminal or a viewer may show it: control characters escaped.
std::string printable(const std::string& cell) { return escape_control_characters(cell); }

std::string csv_cell(const std::string& raw) {
  const std::string cell = printable(raw);
  if (cell.find_first_of(",\"") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char ch : cell) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::size_t display_width(const std::string& s) {  // UTF-8 code points (for "±")
  std::size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

}  // namespace

std::string markdown_cell(const std::string& text) {
  std::string cell;
  for (char ch : printable(text)) cell += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return cell;
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

std::string fixed_or_na(const std::optional<double>& value, int decimals) {
  return value ? fixed(*value, decimals) : "n/a";
}

std::string percent(double value, int decimals) { return fixed(value, decimals) + " %"; }

int seconds_decimals(double seconds) {
  const double magnitude = std::fabs(seconds);
  if (!(magnitude >= 1e-12) || !std::isfinite(magnitude) || magnitude >= 0.01) return 3;
  return std::clamp(2 - static_cast<int>(std::floor(std::log10(magnitude))), 3, 12);
}

std::string seconds_with_spread(double seconds, double spread, const char* open, const char* close) {
  const int decimals = seconds_decimals(seconds);
  return fixed(seconds, decimals) + open + fixed(spread, decimals + 2) + close;
}

std::string render_text(const Table& table) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : table.rows) {
    rows.emplace_back();
    for (const auto& cell : row) rows.back().push_back(printable(cell));
  }
  std::vector<std::size_t> width(table.header.size(), 0);
  auto widen = [&](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], display_width(row[i]));
  };
  widen(table.header);
  for (const auto& row : rows) widen(row);
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - display_width(row[i]), ' ');
      const bool left = i < table.label_columns || (table.last_column_text && i + 1 == table.header.size());
      out += (i ? std::string(table.column_gap, ' ') : "") + (left ? row[i] + pad : pad + row[i]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = table.title.empty() ? "" : table.title + "\n";
  out += line(table.header);
  for (const auto& row : rows) out += line(row);
  return out;
}

std::string render_html(const Table& table) {
  using svg::escape;
  std::string out = "<table>\n";
  if (!table.title.empty()) out += "<caption>" + escape(table.title) + "</caption>\n";
  out += "<thead><tr>";
  for (const auto& h : table.header) out += "<th>" + escape(h) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out += std::string(i < table.label_columns ? "<td>" : "<td class=\"num\">") + escape(printable(row[i])) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string render_markdown(const Table& table) {
  std::string out = table.title.empty() ? "" : table.title + "\n\n";
  out += "|";
  for (const auto& h : table.header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t i = 0; i < table.header.size(); ++i) out += i < table.label_columns ? "---|" : "---:|";
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) out += " " + markdown_cell(cell) + " |";
    out += "\n";
  }
  return out;
}

std::string render_csv(const Table& table) {
  auto line = [](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + csv_cell(row[i]);
    return out + "\n";
  };
  std::string out = line(table.header);
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string gbps_or_na(const std::optional<double>& bytes_per_s) {
  return bytes_per_s ? fixed(*bytes_per_s / 1e9, 3) : "n/a";
}

std::string listed_words(const std::vector<std::string>& items, std::size_t most) {
  std::string out;
  const std::size_t shown = std::min(items.size(), most);
  for (std::size_t i = 0; i < shown; ++i)
    out += (i == 0 ? "" : i + 1 == shown && shown == items.size() ? " and " : ", ") + items[i];
  if (items.size() > shown) out += " and " + std::to_string(items.size() - shown) + " more";
  return out;
}

std::string ranks_words(const std::vector<int>& ranks) {
  std::vector<std::string> words;
  for (int r : ranks) words.push_back(std::to_string(r));
  return std::string(ranks.size() > 1 ? "ranks " : "rank ") + listed_words(words);
}

BinaryUnit binary_unit_for(double bytes) {
  for (BinaryUnit u :
       {BinaryUnit{"GiB", 1024.0 * 1024 * 1024}, BinaryUnit{"MiB", 1024.0 * 1024}, BinaryUnit{"KiB", 1024.0}})
    if (bytes >= u.bytes) return u;
  return {"bytes", 1};
}

}  // namespace zb
