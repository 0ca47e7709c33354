// The declared options of registry entries (models/common/options.hpp) and their one reader
// (option_reader.hpp): defaults, typed values with units, and every kind of bad input located and
// reported at once, naming the entry and its valid options.
#include "models/common/options.hpp"

#include <gtest/gtest.h>

#include "models/common/option_reader.hpp"
#include "tests/support/diagnostics.hpp"

namespace dnnsim {
namespace {

using testing::expect_error;

struct Nothing {};

// A registry of two entries with options, and one without: what a schedule or scheduler registry is.
Registry<Nothing> toy_registry() {
  Registry<Nothing> registry("toy");
  OptionSchema a;
  a.integer("group", 1, "micro-batches per group").at_least(1);
  a.quantity<Seconds>("round", Seconds(60), "period of a scheduling round").at_least(1e-3);
  a.choice("policy", "A", {"A", "B"}, "warm-up policy");
  a.integers("candidates", {}, "group sizes to choose from").at_least(1);
  a.integer("chunks", 2, "model chunks per stage").range(2, 64).keywords({"auto"});
  a.file("table", "a measured table");
  registry.add("alpha", "first", "dnnsim", Nothing{}, std::move(a));
  OptionSchema b;
  b.boolean("flat", false, "one level");
  b.number("weight", 0.5, "a weight").range(0, 1);
  b.integer("stages", std::nullopt, "stages; none: one per device").at_least(1);
  registry.add("beta", "second", "dnnsim", Nothing{}, std::move(b));
  registry.add("gamma", "third", "dnnsim", Nothing{});
  return registry;
}

struct Read {
  std::optional<EntrySelection> selection;
  std::vector<Diagnostic> diagnostics;
};

Read read(const std::string& yaml) {
  DiagnosticSink sink;
  YamlReader reader("s.yaml", sink);
  const YAML::Node root = reader.load_text(yaml);
  Read result;
  result.selection =
      read_entry(reader, root["toy"], toy_registry(), "name", [](const std::string& path) { return "/base/" + path; });
  result.diagnostics = sink.diagnostics();
  return result;
}

TEST(Options, AScalarNamesTheEntryWithItsDefaults) {
  const Read r = read("toy: alpha\n");
  ASSERT_TRUE(r.diagnostics.empty()) << testing::dump(r.diagnostics);
  ASSERT_TRUE(r.selection);
  EXPECT_EQ(r.selection->name, "alpha");
  const Options& o = r.selection->options;
  EXPECT_EQ(o.integer("group"), 1);
  EXPECT_EQ(o.quantity<Seconds>("round"), Seconds(60));
  EXPECT_EQ(o.choice("policy"), "A");
  EXPECT_TRUE(o.integers("candidates").empty());
  EXPECT_FALSE(o.given("group"));
  EXPECT_FALSE(o.file("table"));
  EXPECT_EQ(o.owner(), "toy 'alpha'");
}

TEST(Options, AMappingGivesTypedValuesInBaseUnitsAndResolvesFiles) {
  const Read r = read("toy: {name: alpha, group: 4, round: 2min, policy: B, candidates: [1, 2, 4], table: t.json}\n");
  ASSERT_TRUE(r.diagnostics.empty()) << testing::dump(r.diagnostics);
  const Options& o = r.selection->options;
  EXPECT_EQ(o.integer("group"), 4);
  EXPECT_EQ(o.quantity<Seconds>("round"), Seconds(120));  // 2 min = 120 s
  EXPECT_EQ(o.choice("policy"), "B");
  EXPECT_EQ(o.integers("candidates"), (std::vector<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(o.file("table"), "/base/t.json");
  EXPECT_TRUE(o.given("group"));
  EXPECT_EQ(o.where("group").line, 1);
}

TEST(Options, AKeywordStandsInsteadOfAValue) {
  const Read r = read("toy: {name: alpha, chunks: auto}\n");
  ASSERT_TRUE(r.diagnostics.empty()) << testing::dump(r.diagnostics);
  EXPECT_EQ(r.selection->options.keyword("chunks"), "auto");
  EXPECT_EQ(r.selection->options.integer("chunks"), 2);  // the default stays for code that does not choose
}

TEST(Options, AnOptionWithoutDefaultIsAbsentUntilGiven) {
  EXPECT_FALSE(read("toy: beta\n").selection->options.has("stages"));
  EXPECT_EQ(read("toy: {name: beta, stages: 3}\n").selection->options.integer("stages"), 3);
}

TEST(Options, EveryProblemIsReportedAtOnceAndLocated) {
  // Line 3: an option of another entry; 4: a typo; 5: wrong type; 6: out of range; 7: no unit;
  // 8: an element out of range; 9: an unknown choice.
  const Read all = read(
      "toy:\n"
      "  name: alpha\n"
      "  flat: true\n"
      "  grup: 2\n"
      "  group: two\n"
      "  chunks: 1\n"
      "  round: 60\n"
      "  candidates: [1, 0]\n"
      "  policy: C\n");
  ASSERT_EQ(all.diagnostics.size(), 7u) << testing::dump(all.diagnostics);
  expect_error(all.diagnostics[0], 3, 3,
               "toy 'alpha' has no option 'flat' (an option of beta); its options: group, round");
  expect_error(all.diagnostics[1], 4, 3, "has no option 'grup' (did you mean 'group'?)");
  expect_error(all.diagnostics[2], 5, 10, "option 'group' of toy 'alpha': expected an integer");
  expect_error(all.diagnostics[3], 6, 11, "option 'chunks' of toy 'alpha': expected an integer in [2, 64], got 1");
  expect_error(all.diagnostics[4], 7, 10, "option 'round' of toy 'alpha': \"60\" has no unit");
  expect_error(all.diagnostics[5], 8, 19, "option 'candidates' of toy 'alpha': expected an integer >= 1, got 0");
  expect_error(all.diagnostics[6], 9, 11, "option 'policy' of toy 'alpha': unknown policy 'C'");
}

// An entry built from options the reader refused would report what follows from the defaults put in
// their place: read_cleanly() tells the caller not to build it.
TEST(Options, RefusedOptionsAreKnownToTheCaller) {
  EXPECT_TRUE(read("toy: {name: alpha, group: 4, policy: B}\n").selection->options.read_cleanly());
  EXPECT_TRUE(read("toy: alpha\n").selection->options.read_cleanly());
  EXPECT_FALSE(read("toy: {name: alpha, policy: C}\n").selection->options.read_cleanly());  // unknown choice
  EXPECT_FALSE(read("toy: {name: alpha, grup: 2}\n").selection->options.read_cleanly());    // unknown option
}

TEST(Options, AQuantityOutOfRangeNamesTheBoundInItsUnit) {
  const Read r = read("toy: {name: alpha, round: 0s}\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  expect_error(r.diagnostics[0], 1, 27, "option 'round' of toy 'alpha': expected a duration ≥ 1ms, got 0s");
}

TEST(Options, AnEntryWithoutOptionsSaysSo) {
  const Read r = read("toy: {name: gamma, group: 2}\n");
  ASSERT_EQ(r.diagnostics.size(), 1u);
  expect_error(r.diagnostics[0], 1, 20, "toy 'gamma' has no option 'group' (an option of alpha); it has no options");
}

TEST(Options, AnUnknownEntryIsOneErrorWithASuggestion) {
  const Read r = read("toy: {name: alpah, group: 2}\n");
  ASSERT_EQ(r.diagnostics.size(), 1u) << testing::dump(r.diagnostics);
  expect_error(r.diagnostics[0], 1, 13, "unknown toy 'alpah'; did you mean 'alpha'?");
  EXPECT_FALSE(r.selection);
}

// One entry with a required option: what the marl scheduler's trained policy is.
Registry<Nothing> required_option_registry() {
  Registry<Nothing> registry("toy");
  OptionSchema schema;
  schema.file("policy", "the trained policy").required();
  registry.add("learned", "needs a file", "dnnsim", Nothing{}, std::move(schema));
  return registry;
}

TEST(Options, ARequiredOptionMustBeGiven) {
  const Registry<Nothing> registry = required_option_registry();
  DiagnosticSink sink;
  YamlReader reader("s.yaml", sink);
  const YAML::Node root = reader.load_text("a: learned\nb: {name: learned}\n");
  (void)read_entry(reader, root["a"], registry);
  (void)read_entry(reader, root["b"], registry);
  ASSERT_EQ(sink.diagnostics().size(), 2u) << testing::dump(sink.diagnostics());
  expect_error(sink.diagnostics()[0], 1, 4, "toy 'learned' needs option 'policy'");
  expect_error(sink.diagnostics()[1], 2, 4, "toy 'learned' needs option 'policy'");
  EXPECT_FALSE(read_entry(reader, root["a"], registry)->options.read_cleanly());
  EXPECT_FALSE(read_entry(reader, root["b"], registry)->options.read_cleanly());
}

// A misspelt required option is one mistake: the unknown key's suggestion names the option, which
// is not also reported missing. An unknown key that suggests nothing leaves it missing.
TEST(Options, AMisspeltRequiredOptionIsOneError) {
  const Registry<Nothing> registry = required_option_registry();
  DiagnosticSink sink;
  YamlReader reader("s.yaml", sink);
  const YAML::Node root = reader.load_text("a: {name: learned, polcy: p.pt}\nb: {name: learned, file: p.pt}\n");
  EXPECT_FALSE(read_entry(reader, root["a"], registry)->options.read_cleanly());
  ASSERT_EQ(sink.diagnostics().size(), 1u) << testing::dump(sink.diagnostics());
  expect_error(sink.diagnostics()[0], 1, 20, "toy 'learned' has no option 'polcy' (did you mean 'policy'?)");
  (void)read_entry(reader, root["b"], registry);
  ASSERT_EQ(sink.diagnostics().size(), 3u) << testing::dump(sink.diagnostics());
  expect_error(sink.diagnostics()[1], 2, 20, "toy 'learned' has no option 'file'; its options: policy");
  expect_error(sink.diagnostics()[2], 2, 4, "toy 'learned' needs option 'policy'");
}

TEST(Options, CodeSetsValuesThroughTheSchemaChecks) {
  Options o = toy_registry().defaults("alpha");
  o.set("group", std::int64_t{3});
  EXPECT_EQ(o.integer("group"), 3);
  EXPECT_THROW(o.set("group", std::int64_t{0}), std::logic_error);  // below its range
  EXPECT_THROW(o.set("group", 2.5), std::logic_error);              // a number for an integer
  EXPECT_THROW((void)o.integer("nothing"), std::logic_error);       // undeclared
  EXPECT_THROW((void)o.flag("group"), std::logic_error);            // another type
}

TEST(Options, ListingsComeFromTheDeclarations) {
  const Registry<Nothing> registry = toy_registry();
  const auto& alpha = registry.at("alpha");
  const std::string text = options_text(*alpha.options, "  ");
  EXPECT_EQ(text.substr(0, text.find('\n')), "  group: integer, default 1, ≥ 1 — micro-batches per group");
  const std::string table = options_markdown(*alpha.options);
  EXPECT_NE(table.find("| `round` | duration | 60s | ≥ 1ms | period of a scheduling round |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("| `chunks` | integer | 2 | [2, 64], or auto |"), std::string::npos) << table;
  EXPECT_EQ(options_markdown(*registry.at("gamma").options), "No options.\n");
}

}  // namespace
}  // namespace dnnsim
