// A string stored once per distinct value (the flyweight pattern: Gamma et al., "Design Patterns",
// 1994), for fields that millions of records repeat: a TaskGraph at 16,384 GPUs holds 4.5 M tasks
// whose labels ("fwd s3 mb12"), source files and algorithm names are a few thousand distinct
// strings (docs/performance.md, "Compact task records"). Boost.Flyweight keeps the values in one
// process-wide, reference-counted, mutex-guarded table that is never destroyed (LeakyHolder); a
// field is one pointer (8 bytes instead of a 32-byte std::string and, past 15 characters, its heap
// block).
//
// It reads as a const std::string (implicit conversion, comparisons, streams, fmt) and is assigned
// from any string; to change the text, assign a new one. Values compare by content, so output and
// decisions are those of the plain string (determinism: nothing iterates the table).
#pragma once

#include <fmt/format.h>

#include <boost/flyweight.hpp>
#include <compare>
#include <ostream>
#include <string>
#include <string_view>

namespace dnnsim {

// Where the table lives: created on first use and never destroyed (Boost.Flyweight's holder
// interface; its static_holder is a function-local static). A record holding an InternedString may
// outlive any static — GoogleTest's registry keeps parameterized tests' values until its own
// destructor at exit, constructed before the table — and its destructor then still finds the table.
template <class Table>
struct LeakyHolderClass : boost::flyweights::holder_marker {
  static Table& get() {
    static Table* table = new Table;  // NOLINT(cppcoreguidelines-owning-memory): lives to the process's end
    return *table;
  }
  using type = LeakyHolderClass;
  BOOST_MPL_AUX_LAMBDA_SUPPORT(1, LeakyHolderClass, (Table))
};
struct LeakyHolder : boost::flyweights::holder_marker {
  template <class Table>
  struct apply {
    using type = LeakyHolderClass<Table>;
  };
};

class InternedString {
 public:
  // The empty string, copied from one made once: Boost.Flyweight's own default constructor looks ""
  // up in the table under its mutex, and every Task and Compute record starts with two of these
  // (docs/performance.md, "dnnsim's own cost per operation"); a copy only counts a reference.
  InternedString() : value_(empty_value()) {}
  InternedString(const std::string& text) : value_(text) {}  // NOLINT(google-explicit-constructor): reads as a string
  InternedString(std::string_view text) : value_(std::string(text)) {}  // NOLINT(google-explicit-constructor)
  InternedString(const char* text) : value_(std::string(text)) {}       // NOLINT(google-explicit-constructor)

  [[nodiscard]] const std::string& str() const { return value_.get(); }
  operator const std::string&() const { return value_.get(); }  // NOLINT(google-explicit-constructor)
  operator std::string_view() const { return value_.get(); }    // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool empty() const { return str().empty(); }
  [[nodiscard]] std::size_t size() const { return str().size(); }
  [[nodiscard]] const char* c_str() const { return str().c_str(); }
  InternedString& operator+=(std::string_view more) {
    value_ = str() + std::string(more);
    return *this;
  }

  friend bool operator==(const InternedString& a, const InternedString& b) { return a.value_ == b.value_; }
  friend bool operator==(const InternedString& a, std::string_view b) { return a.str() == b; }
  friend bool operator==(const InternedString& a, const std::string& b) { return a.str() == b; }
  friend bool operator==(const InternedString& a, const char* b) { return a.str() == b; }
  friend std::strong_ordering operator<=>(const InternedString& a, const InternedString& b) {
    return a.str().compare(b.str()) <=> 0;
  }
  friend std::strong_ordering operator<=>(const InternedString& a, std::string_view b) {
    return std::string_view(a.str()).compare(b) <=> 0;
  }
  friend std::ostream& operator<<(std::ostream& out, const InternedString& s) { return out << s.str(); }

 private:
  using Value = boost::flyweight<std::string, LeakyHolder>;
  static const Value& empty_value() {
    static const Value* value = new Value(std::string());  // NOLINT(cppcoreguidelines-owning-memory): as the table
    return *value;
  }

  Value value_;
};

}  // namespace dnnsim

template <>
struct fmt::formatter<dnnsim::InternedString> : fmt::formatter<std::string_view> {
  auto format(const dnnsim::InternedString& s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.str(), ctx);
  }
};
