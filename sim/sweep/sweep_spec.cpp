// Reads a sweep file (see sweep_spec.hpp and docs/sweeps.md): parse every axis group into a table of
// assignments, expand the groups' cartesian product, then check every point against the base scenario
// (sweep_validation.hpp).
#include "sim/sweep/sweep_spec.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <set>

#include "models/common/parse_number.hpp"
#include "models/common/random.hpp"
#include "models/common/yaml_reader.hpp"
#include "sim/sweep/sweep_validation.hpp"

namespace dnnsim {
namespace {

constexpr std::size_t kMaxPoints = 1'000'000;

// One axis value: the YAML text given to --set, and where in the sweep file it came from.
struct Value {
  std::string text;
  SourceLocation origin;
};

// One axis group as a table: `rows[r][k]` is the value of `keys[k]` in the group's r-th combination.
struct Group {
  std::vector<std::string> keys;
  std::vector<std::vector<Value>> rows;
  SourceLocation where;
};

// A YAML node as text that YAML reads back to the same node ("25MB", "[1, 2]", "{a: 1}").
std::string yaml_text(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Flow);
  out.SetSeqFormat(YAML::Flow);
  out << node;
  return out.c_str();
}

// A number or a quantity as written in the sweep file: "3", "0.5", "10Gbps".
struct Scalar {
  double number = 0.0;       // in `unit` (not the base unit): "10Gbps" → 10
  bool integer = false;      // a plain integer ("3", not "3.0" or "3MB")
  std::string unit;          // empty for a plain number
  Dimension dimension{};     // meaningful when `unit` is set
  double unit_factor = 1.0;  // base units per `unit`: 1.25e8 for Gbps
};

std::optional<Scalar> read_scalar(YamlReader& reader, const YAML::Node& node, std::string_view what) {
  if (!node.IsScalar()) {
    reader.error(node, fmt::format("expected {} (a number, or a quantity with a unit such as \"10Gbps\")", what));
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  Scalar scalar;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (const auto as_int = parse_number<std::int64_t>(text)) {
    scalar.number = static_cast<double>(*as_int);
    scalar.integer = true;
    return scalar;
  }
  auto [stop, status] = std::from_chars(begin, end, scalar.number);
  if (status != std::errc{} || !std::isfinite(scalar.number)) {
    reader.error(node, fmt::format("expected {} (a number, or a quantity with a unit such as \"10Gbps\"), got \"{}\"",
                                   what, text));
    return std::nullopt;
  }
  std::string_view symbol(stop, static_cast<std::size_t>(end - stop));
  while (!symbol.empty() && symbol.front() == ' ') symbol.remove_prefix(1);
  if (symbol.empty()) return scalar;
  // The unit decides the dimension: the unit tables of the five dimensions share no symbol.
  for (const Dimension dimension :
       {Dimension::bytes, Dimension::seconds, Dimension::flop, Dimension::bandwidth, Dimension::flop_rate}) {
    try {
      scalar.unit_factor = parse_quantity(fmt::format("1{}", symbol), dimension);
      scalar.dimension = dimension;
      scalar.unit = std::string(symbol);
      return scalar;
    } catch (const UnitError&) {
    }
  }
  reader.error(node, fmt::format("unknown unit '{}' in \"{}\"", symbol, text));
  return std::nullopt;
}

// The two ends of a range or of a uniform distribution, brought to one unit (that of `low`, or of
// `high` when `low` is a bare 0). Reports mismatched dimensions and a unit on one end only.
std::optional<std::pair<Scalar, Scalar>> read_interval(YamlReader& reader, const YAML::Node& low_node,
                                                       const YAML::Node& high_node, std::string_view low_name,
                                                       std::string_view high_name) {
  auto low = read_scalar(reader, low_node, low_name);
  auto high = read_scalar(reader, high_node, high_name);
  if (!low || !high) return std::nullopt;
  if (low->unit.empty() != high->unit.empty()) {
    // A bare 0 is unambiguous in any unit (as in scenarios); any other bare number is not.
    Scalar& bare = low->unit.empty() ? *low : *high;
    const Scalar& with_unit = low->unit.empty() ? *high : *low;
    if (bare.number != 0.0) {
      reader.error(low->unit.empty() ? low_node : high_node,
                   fmt::format("'{}' and '{}' must both have units or both be plain numbers ('{}' is in {})", low_name,
                               high_name, low->unit.empty() ? high_name : low_name, with_unit.unit));
      return std::nullopt;
    }
    bare = Scalar{0.0, false, with_unit.unit, with_unit.dimension, with_unit.unit_factor};
  }
  if (!low->unit.empty()) {
    if (low->dimension != high->dimension) {
      reader.error(high_node, fmt::format("mismatched units: '{}' is {} ({}) but '{}' is {} ({})", low_name,
                                          dimension_name(low->dimension), low->unit, high_name,
                                          dimension_name(high->dimension), high->unit));
      return std::nullopt;
    }
    // Work in the unit of `low`.
    high->number = high->number * high->unit_factor / low->unit_factor;
    high->unit = low->unit;
    high->unit_factor = low->unit_factor;
    high->integer = false;
    low->integer = false;
  }
  return std::pair{*low, *high};
}

// A value of an interval as text: integers as integers, anything else with 6 significant digits,
// followed by the unit of the interval. 6 digits keep the text readable ("31.6228Gbps") and the point
// runs with exactly the value written (the unit parser reads it back).
std::string format_value(double number, const Scalar& like) {
  if (like.integer) return fmt::format("{}", static_cast<std::int64_t>(std::llround(number)));
  std::string text = fmt::format("{:.6g}", number);
  if (text == "-0") text = "0";
  return text + like.unit;
}

// A distribution of a random axis key.
struct Distribution {
  enum class Kind { integer, uniform, choice } kind = Kind::integer;
  std::int64_t lo = 0, hi = 0;  // int: both included
  Scalar a, b;                  // uniform: in the unit of a
  std::vector<YAML::Node> choices;
  SourceLocation where;
};

class SweepParser {
 public:
  SweepParser(std::string file, DiagnosticSink& sink) : reader_(std::move(file), sink) {}

  SweepSpec parse(bool validate) {
    SweepSpec spec;
    spec.file = reader_.file();
    YAML::Node root = reader_.load_file();
    if (!reader_.sink().empty()) return spec;
    MapReader top(reader_, root, "the sweep");
    if (!top.valid()) return spec;
    if (YAML::Node name = top.require("name"); name.IsDefined()) {
      if (auto text = reader_.string(name)) {
        const bool usable =
            !text->empty() && *text != "." && *text != ".." && std::all_of(text->begin(), text->end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
            });
        if (usable)
          spec.name = *text;
        else
          reader_.error(name, fmt::format("the sweep name names its output directory: use letters, digits, '-', "
                                          "'_' and '.', got \"{}\"",
                                          *text));
      }
    }
    base_node_.reset(top.require("base"));
    if (base_node_.IsDefined()) {
      if (auto base = reader_.string(base_node_)) {
        const std::filesystem::path p(*base);
        spec.base_path = p.is_absolute()
                             ? *base
                             : (std::filesystem::path(reader_.file()).parent_path() / p).lexically_normal().string();
        // The non-throwing form: a path the OS refuses (too long, a loop) is "cannot open", not a crash.
        std::error_code not_a_file;
        if (!std::filesystem::is_regular_file(spec.base_path, not_a_file)) {
          reader_.error(base_node_, fmt::format("cannot open the base scenario '{}'", spec.base_path));
          spec.base_path.clear();
        }
      }
    }
    if (YAML::Node metrics = top.get("metrics"); metrics.IsDefined()) {
      for (const YAML::Node& metric : reader_.list(metrics, "metric paths (e.g. mean.iteration_time_s)")) {
        auto text = reader_.string(metric);
        if (!text) continue;
        if (text->empty() || text->front() == '.' || text->back() == '.' || text->find("..") != std::string::npos) {
          reader_.error(metric, fmt::format("expected a dotted path into summary.json such as "
                                            "mean.iteration_time_s, got \"{}\"",
                                            *text));
        } else if (std::find(spec.metrics.begin(), spec.metrics.end(), *text) != spec.metrics.end()) {
          reader_.error(metric, fmt::format("metric '{}' is listed twice", *text));
        } else {
          spec.metrics.push_back(*text);
          spec.metric_where.push_back(reader_.where(metric));
        }
      }
    }
    if (YAML::Node timeout = top.get("timeout"); timeout.IsDefined()) {
      if (auto value = reader_.quantity<Seconds>(timeout)) {
        if (value->value() <= 0)
          reader_.error(timeout, "the time limit of a point must be positive");
        else
          spec.timeout = *value;
      }
    }
    axes_node_.reset(top.require("axes"));
    std::vector<Group> groups;
    if (axes_node_.IsDefined()) {
      axes_where_ = reader_.where(axes_node_);
      for (const YAML::Node& entry : reader_.list(axes_node_, "axis groups (grid, zip, range, random)"))
        if (auto group = read_group(entry)) groups.push_back(std::move(*group));
    }
    top.finish();
    if (!reader_.sink().empty()) return spec;

    for (const Group& group : groups) spec.axis_keys.insert(spec.axis_keys.end(), group.keys.begin(), group.keys.end());
    std::size_t total = 1;
    for (const Group& group : groups) {
      if (group.rows.empty()) return spec;  // reported while reading the group
      if (total > kMaxPoints / group.rows.size()) {
        reader_.sink().error(axes_where_, fmt::format("the axes expand to more than {} points", kMaxPoints));
        return spec;
      }
      total *= group.rows.size();
    }
    // Mixed radix, last group fastest: point i takes row (i / stride_g) % rows_g of group g.
    std::vector<std::vector<SourceLocation>> origins(total);
    spec.points.resize(total);
    for (std::size_t i = 0; i < total; ++i) {
      SweepPoint& point = spec.points[i];
      point.index = i;
      std::size_t rest = i;
      std::vector<const std::vector<Value>*> chosen(groups.size());
      for (std::size_t g = groups.size(); g-- > 0;) {
        chosen[g] = &groups[g].rows[rest % groups[g].rows.size()];
        rest /= groups[g].rows.size();
      }
      for (std::size_t g = 0; g < groups.size(); ++g) {
        for (std::size_t k = 0; k < groups[g].keys.size(); ++k) {
          point.assignments.emplace_back(groups[g].keys[k], (*chosen[g])[k].text);
          origins[i].push_back((*chosen[g])[k].origin);
        }
      }
    }
    if (validate && !spec.base_path.empty()) {
      std::vector<SourceLocation> key_where;  // each axis key once (read_key), in axis_keys order
      for (const std::string& key : spec.axis_keys)
        key_where.push_back(std::find_if(keys_seen_.begin(), keys_seen_.end(), [&](const auto& seen) {
                              return seen.first == key;
                            })->second);
      validate_sweep_points(spec, origins, key_where, axes_where_, reader_.sink());
    }
    return spec;
  }

 private:
  // ---- axis groups ----

  std::optional<Group> read_group(const YAML::Node& entry) {
    static const std::vector<std::string> kinds{"grid", "zip", "range", "random"};
    if (!entry.IsMap() || entry.size() != 1) {
      reader_.error(entry, "expected an axis group: a mapping with one key, grid, zip, range or random");
      return std::nullopt;
    }
    const auto item = *entry.begin();
    const std::string kind = item.first.IsScalar() ? item.first.Scalar() : "";
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
      reader_.error(item.first, fmt::format("unknown axis kind '{}'{}", kind, suggestion_suffix(kind, kinds)));
      return std::nullopt;
    }
    const std::size_t errors_before = reader_.sink().diagnostics().size();
    Group group;
    group.where = reader_.where(item.first);
    if (kind == "grid" || kind == "zip") {
      read_lists(item.second, kind, group);
    } else if (kind == "range") {
      read_range(item.second, group);
    } else {
      read_random(item.second, group);
    }
    if (reader_.sink().diagnostics().size() != errors_before) return std::nullopt;
    return group;
  }

  // An axis key: a --set path ("workload.bucket_size", "cluster.nodes.0.count"), set by one group only.
  bool read_key(const YAML::Node& node, std::string& key) {
    auto text = reader_.string(node);
    if (!text) return false;
    const bool well_formed =
        !text->empty() && text->front() != '.' && text->back() != '.' && text->find("..") == std::string::npos &&
        std::none_of(text->begin(), text->end(),
                     [](char c) { return c == '=' || std::isspace(static_cast<unsigned char>(c)); });
    if (!well_formed) {
      reader_.error(node, fmt::format("expected a scenario key path such as workload.bucket_size, got \"{}\"", *text));
      return false;
    }
    for (const auto& [seen, where] : keys_seen_) {
      if (seen == *text) {
        reader_.error(node, fmt::format("key '{}' is already set by the axis at line {}; a key belongs to one axis",
                                        *text, where.line));
        return false;
      }
    }
    keys_seen_.emplace_back(*text, reader_.where(node));
    key = *text;
    return true;
  }

  // grid: the product of the lists (last key fastest); zip: the lists side by side.
  void read_lists(const YAML::Node& node, const std::string& kind, Group& group) {
    if (!node.IsMap() || node.size() == 0) {
      reader_.error(node, fmt::format("expected a mapping of scenario keys to lists of values for {}", kind));
      return;
    }
    std::vector<std::vector<Value>> lists;
    std::vector<YAML::Node> list_nodes;
    for (const auto& item : node) {
      std::string key;
      const bool key_ok = read_key(item.first, key);
      std::vector<Value> values;
      for (const YAML::Node& value : reader_.list(item.second, fmt::format("values for '{}'", key)))
        values.push_back(Value{yaml_text(value), reader_.where(value)});
      if (item.second.IsSequence() && values.empty()) reader_.error(item.second, "an empty list gives no points");
      if (!key_ok) continue;
      group.keys.push_back(key);
      lists.push_back(std::move(values));
      list_nodes.push_back(item.second);
    }
    if (lists.size() != group.keys.size() || lists.empty()) return;
    if (kind == "zip") {
      // A value that is not a list is said already: its length is not compared as 0.
      std::optional<std::size_t> first;
      for (std::size_t k = 0; k < lists.size(); ++k) {
        if (!list_nodes[k].IsSequence()) continue;
        if (!first) first = k;
        if (lists[k].size() != lists[*first].size())
          reader_.error(list_nodes[k],
                        fmt::format("zip lists must have the same length: '{}' has {} values, '{}' has {}",
                                    group.keys[*first], lists[*first].size(), group.keys[k], lists[k].size()));
      }
      for (std::size_t r = 0; r < lists[0].size(); ++r) {
        std::vector<Value> row;
        for (const auto& list : lists) row.push_back(r < list.size() ? list[r] : Value{});
        group.rows.push_back(std::move(row));
      }
      return;
    }
    std::size_t count = 1;
    for (const auto& list : lists) {
      if (list.empty()) return;
      if (count > kMaxPoints / list.size()) {
        reader_.error(node, fmt::format("the grid has more than {} combinations", kMaxPoints));
        return;
      }
      count *= list.size();
    }
    for (std::size_t r = 0; r < count; ++r) {
      std::vector<Value> row(lists.size());
      std::size_t rest = r;
      for (std::size_t k = lists.size(); k-- > 0;) {
        row[k] = lists[k][rest % lists[k].size()];
        rest /= lists[k].size();
      }
      group.rows.push_back(std::move(row));
    }
  }

  // range: `steps` values from `from` to `to` inclusive; linear v_i = from + (to − from)·i/(steps − 1),
  // log v_i = from·(to/from)^(i/(steps − 1)). Integer ends give integers (rounded to nearest).
  void read_range(const YAML::Node& node, Group& group) {
    MapReader map(reader_, node, "a range");
    if (!map.valid()) return;
    std::string key;
    const YAML::Node key_node = map.require("key");
    const bool key_ok = key_node.IsDefined() && read_key(key_node, key);
    const YAML::Node from_node = map.require("from");
    const YAML::Node to_node = map.require("to");
    const YAML::Node steps_node = map.require("steps");
    const std::int64_t steps = steps_node.IsDefined() ? reader_.integer(steps_node, 2, 100000).value_or(0) : 0;
    const bool log = map.choice("scale", {"linear", "log"}).value_or("linear") == "log";
    map.finish();
    if (!from_node.IsDefined() || !to_node.IsDefined()) return;
    auto ends = read_interval(reader_, from_node, to_node, "from", "to");
    if (!ends || steps == 0 || !key_ok) return;
    const auto& [from, to] = *ends;
    if (log && (from.number <= 0 || to.number <= 0)) {
      reader_.error(from.number <= 0 ? from_node : to_node, "a log range needs 'from' and 'to' above zero");
      return;
    }
    const bool integers = from.integer && to.integer;
    group.keys.push_back(key);
    const SourceLocation where = reader_.where(node);
    std::set<std::int64_t> distinct;
    for (std::int64_t i = 0; i < steps; ++i) {
      const double t = static_cast<double>(i) / static_cast<double>(steps - 1);
      double value =
          log ? from.number * std::pow(to.number / from.number, t) : from.number + (to.number - from.number) * t;
      if (i == 0) value = from.number;  // the ends exactly as written, whatever the rounding
      if (i == steps - 1) value = to.number;
      if (integers) distinct.insert(std::llround(value));
      group.rows.push_back({Value{format_value(value, from), where}});
    }
    if (integers && distinct.size() != group.rows.size()) {
      reader_.error(steps_node,
                    fmt::format("an integer range from {} to {} has only {} distinct values; {} steps "
                                "would repeat some",
                                format_value(from.number, from), format_value(to.number, to), distinct.size(), steps));
      group.rows.clear();
    }
  }

  // random: `samples` points; for each sample, each key in file order takes one draw u ∈ [0, 1):
  //   int: [lo, hi]     → lo + ⌊u·(hi − lo + 1)⌋   (both ends included)
  //   uniform: [a, b]   → a + u·(b − a)             (numbers, or quantities in one dimension)
  //   choice: [x, …]    → the ⌊u·n⌋-th value
  void read_random(const YAML::Node& node, Group& group) {
    MapReader map(reader_, node, "a random axis");
    if (!map.valid()) return;
    const auto samples = map.integer("samples", 1, static_cast<std::int64_t>(kMaxPoints), true);
    const auto seed = map.integer("seed", 0, std::numeric_limits<std::int64_t>::max()).value_or(1);
    const YAML::Node keys = map.require("keys");
    map.finish();
    if (!keys.IsDefined()) return;
    if (!keys.IsMap() || keys.size() == 0) {
      reader_.error(keys,
                    "expected a mapping of scenario keys to distributions ({int: [lo, hi]}, "
                    "{uniform: [a, b]}, {choice: [values]})");
      return;
    }
    std::vector<Distribution> distributions;
    bool ok = true;
    for (const auto& item : keys) {
      std::string key;
      const bool key_ok = read_key(item.first, key);
      auto distribution = read_distribution(item.second);
      if (!key_ok || !distribution) {
        ok = false;
        continue;
      }
      group.keys.push_back(key);
      distributions.push_back(std::move(*distribution));
    }
    if (!ok || !samples) return;
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    for (std::int64_t s = 0; s < *samples; ++s) {
      std::vector<Value> row;
      for (const Distribution& d : distributions) {
        const double u = uniform_draw(rng);
        switch (d.kind) {
          case Distribution::Kind::integer: {
            const auto span = static_cast<std::uint64_t>(d.hi - d.lo) + 1;
            const auto offset = std::min(static_cast<std::uint64_t>(u * static_cast<double>(span)), span - 1);
            row.push_back(Value{fmt::format("{}", d.lo + static_cast<std::int64_t>(offset)), d.where});
            break;
          }
          case Distribution::Kind::uniform:
            row.push_back(Value{format_value(d.a.number + u * (d.b.number - d.a.number), d.a), d.where});
            break;
          case Distribution::Kind::choice: {
            const auto n = d.choices.size();
            const auto k = std::min(static_cast<std::size_t>(u * static_cast<double>(n)), n - 1);
            row.push_back(Value{yaml_text(d.choices[k]), reader_.where(d.choices[k])});
            break;
          }
        }
      }
      group.rows.push_back(std::move(row));
    }
  }

  std::optional<Distribution> read_distribution(const YAML::Node& node) {
    static const std::vector<std::string> kinds{"int", "uniform", "choice"};
    if (!node.IsMap() || node.size() != 1) {
      reader_.error(node, "expected a distribution: {int: [lo, hi]}, {uniform: [a, b]} or {choice: [values]}");
      return std::nullopt;
    }
    const auto item = *node.begin();
    const std::string kind = item.first.IsScalar() ? item.first.Scalar() : "";
    Distribution d;
    d.where = reader_.where(item.second);
    if (kind == "choice") {
      d.kind = Distribution::Kind::choice;
      d.choices = reader_.list(item.second, "values to choose from");
      if (item.second.IsSequence() && d.choices.empty()) {
        reader_.error(item.second, "choice needs at least one value");
        return std::nullopt;
      }
      return d.choices.empty() ? std::nullopt : std::optional(d);
    }
    if (kind != "int" && kind != "uniform") {
      reader_.error(item.first, fmt::format("unknown distribution '{}'{}", kind, suggestion_suffix(kind, kinds)));
      return std::nullopt;
    }
    if (!item.second.IsSequence() || item.second.size() != 2) {
      reader_.error(item.second, fmt::format("{} expects two bounds, [low, high]", kind));
      return std::nullopt;
    }
    if (kind == "int") {
      d.kind = Distribution::Kind::integer;
      constexpr std::int64_t limit = std::int64_t{1} << 52;  // u·span is exact below 2^53
      auto lo = reader_.integer(item.second[0], -limit, limit);
      auto hi = reader_.integer(item.second[1], -limit, limit);
      if (!lo || !hi) return std::nullopt;
      if (*lo > *hi) {
        reader_.error(item.second, fmt::format("int needs low <= high, got [{}, {}]", *lo, *hi));
        return std::nullopt;
      }
      d.lo = *lo;
      d.hi = *hi;
      return d;
    }
    d.kind = Distribution::Kind::uniform;
    auto ends = read_interval(reader_, item.second[0], item.second[1], "low", "high");
    if (!ends) return std::nullopt;
    d.a = ends->first;
    d.b = ends->second;
    d.a.integer = false;  // uniform draws are real numbers even between integer bounds
    if (d.a.number > d.b.number) {
      reader_.error(item.second, "uniform needs low <= high");
      return std::nullopt;
    }
    return d;
  }

  YamlReader reader_;
  YAML::Node base_node_;
  YAML::Node axes_node_;
  SourceLocation axes_where_;
  std::vector<std::pair<std::string, SourceLocation>> keys_seen_;
};

SweepSpec load(const std::string& path, bool validate) {
  DiagnosticSink sink;
  SweepParser parser(path, sink);
  SweepSpec spec = parser.parse(validate);
  sink.throw_if_any();
  return spec;
}

}  // namespace

SweepSpec load_sweep(const std::string& path) { return load(path, true); }

SweepSpec load_sweep_unvalidated(const std::string& path) { return load(path, false); }

std::string point_id(std::size_t index, std::size_t total) {
  const std::size_t width = std::max<std::size_t>(4, fmt::format("{}", total > 0 ? total - 1 : 0).size());
  return fmt::format("p{:0{}}", index, width);
}

std::string display_value(const std::string& yaml_text) {
  try {
    const YAML::Node node = YAML::Load(yaml_text);
    if (node.IsScalar()) return node.Scalar();
  } catch (const YAML::Exception&) {
  }
  return yaml_text;
}

}  // namespace dnnsim
