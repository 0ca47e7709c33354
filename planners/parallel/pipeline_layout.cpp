#include "planners/parallel/pipeline_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "models/common/parse_number.hpp"
#include "planners/parallel/planner.hpp"

namespace dnnsim {
namespace {

constexpr std::size_t kMaxLetters = std::size_t{1} << 20;
// Groups are read by recursion, one call per '(': 20,000 nested ones overflowed the stack (found
// reading the reader for the 2026-12-01 fuzz campaign, confirmed by fuzz_scenario under ASan; input in
// tests/fuzz/crashers/scenario/). Megatron's layouts nest one level; 64 is far beyond any layout and
// far below any stack.
constexpr int kMaxDepth = 64;

// Expands "Et*3|(t*4|)*14ttL" into "Ettt|tttt|…|ttL"; an empty result with `problem` set on bad syntax.
class Expander {
 public:
  explicit Expander(const std::string& text) {
    for (char c : text)
      if (!std::isspace(static_cast<unsigned char>(c))) text_ += c;
  }
  std::string run(std::string& problem) {
    std::string out = sequence();
    if (problem_.empty() && at_ < text_.size()) fail(fmt::format("unexpected '{}'", text_[at_]));
    problem = problem_;
    return problem_.empty() ? out : std::string{};
  }

 private:
  std::string sequence() {
    std::string out;
    while (problem_.empty() && at_ < text_.size() && text_[at_] != ')') {
      std::string item;
      const char c = text_[at_];
      if (c == '(') {
        if (depth_ == kMaxDepth) return fail(fmt::format("groups nested deeper than {} levels", kMaxDepth));
        ++at_;
        ++depth_;
        item = sequence();
        --depth_;
        if (at_ >= text_.size() || text_[at_] != ')') return fail("a '(' without its ')'");
        ++at_;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        item = std::string(1, c);
        ++at_;
      } else {
        return fail(fmt::format("unknown letter '{}' (E, t, m, L, | and (…)*n only)", c));
      }
      int times = 1;
      if (at_ < text_.size() && text_[at_] == '*') {
        ++at_;
        std::size_t end = at_;
        while (end < text_.size() && std::isdigit(static_cast<unsigned char>(text_[end]))) ++end;
        if (end == at_) return fail("'*' without a count");
        // A layout names at most one letter per layer: a count or an expansion beyond kMaxLetters is
        // a typo, refused before it is multiplied out.
        if (end - at_ > 7) return fail(fmt::format("count '{}' is too large", text_.substr(at_, end - at_)));
        times = *parse_number<int>(std::string_view(text_).substr(at_, end - at_));  // ≤ 7 digits
        at_ = end;
      }
      if (item.size() * static_cast<std::size_t>(times) + out.size() > kMaxLetters)
        return fail(fmt::format("it expands to more than {} letters", kMaxLetters));
      for (int i = 0; i < times; ++i) out += item;
    }
    return out;
  }
  std::string fail(std::string why) {
    if (problem_.empty()) problem_ = fmt::format("pipeline layout '{}': {}", text_, std::move(why));
    return {};
  }

  std::string text_;
  std::size_t at_ = 0;
  int depth_ = 0;
  std::string problem_;
};

bool is_mtp(const Layer& layer) { return layer.name.rfind("mtp", 0) == 0; }

}  // namespace

std::string layout_syntax_problem(const std::string& layout) {
  std::string problem;
  const std::string expanded = Expander(layout).run(problem);
  if (problem.empty() && expanded.empty()) problem = fmt::format("pipeline layout '{}' is empty", layout);
  return problem;
}

LayoutSplit split_by_layout(const std::string& layout, const LayerModel& model, std::size_t stages) {
  LayoutSplit split;
  const std::string expanded = Expander(layout).run(split.problem);
  if (!split.problem.empty()) return split;
  // The units each letter takes, in order.
  std::vector<LayerRange> blocks, mtp;
  for (const LayerRange& block : model_blocks(model))
    (is_mtp(model.layers[block.begin]) ? mtp : blocks).push_back(block);
  if (blocks.empty()) {
    split.problem = fmt::format("a pipeline layout needs a model of transformer blocks; '{}' has none", model.name);
    return split;
  }
  const std::size_t first_mtp =
      static_cast<std::size_t>(std::find_if(model.layers.begin(), model.layers.end(), is_mtp) - model.layers.begin());
  const LayerRange embedding{0, blocks.front().begin};
  const LayerRange loss{blocks.back().end, first_mtp};
  // Each MTP layer: from its first layer (its norms) to the next MTP layer's first.
  std::vector<LayerRange> mtp_layers;
  for (std::size_t i = 0; i < mtp.size(); ++i) {
    const std::size_t begin = i == 0 ? first_mtp : mtp_layers.back().end;
    mtp_layers.push_back({begin, i + 1 < mtp.size() ? mtp[i + 1].begin : model.layers.size()});
  }
  std::size_t next_block = 0, next_mtp = 0;
  bool embedding_placed = false, loss_placed = false;
  std::vector<LayerRange> units;
  const auto close_stage = [&]() {
    std::sort(units.begin(), units.end(), [](const LayerRange& a, const LayerRange& b) { return a.begin < b.begin; });
    LayerRange range{units.empty() ? 0 : units.front().begin, units.empty() ? 0 : units.front().end};
    for (std::size_t i = 1; i < units.size(); ++i) {
      if (units[i].begin != range.end && units[i].size() > 0 && range.size() > 0) {
        split.problem = fmt::format("pipeline layout '{}': virtual stage {} holds layers that are not contiguous",
                                    layout, split.virtual_stages.size());
        return;
      }
      range.end = std::max(range.end, units[i].end);
    }
    split.virtual_stages.push_back(range);
    units.clear();
  };
  for (char c : expanded) {
    if (!split.problem.empty()) return split;
    if (c == '|') {
      close_stage();
    } else if (c == 't' || c == 'm') {
      const std::vector<LayerRange>& list = c == 't' ? blocks : mtp_layers;
      std::size_t& next = c == 't' ? next_block : next_mtp;
      if (next >= list.size()) {
        split.problem = fmt::format("pipeline layout '{}' places more than the {} {} of '{}'", layout, list.size(),
                                    c == 't' ? "blocks" : "MTP layers", model.name);
        return split;
      }
      units.push_back(list[next++]);
    } else {
      bool& placed = c == 'E' ? embedding_placed : loss_placed;
      if (placed) {
        split.problem = fmt::format("pipeline layout '{}' places '{}' twice", layout, c);
        return split;
      }
      placed = true;
      units.push_back(c == 'E' ? embedding : loss);
    }
  }
  if (!units.empty() || expanded.empty() || expanded.back() != '|') close_stage();
  if (!split.problem.empty()) return split;
  if (next_block != blocks.size() || next_mtp != mtp_layers.size() || !embedding_placed || !loss_placed)
    split.problem = fmt::format("pipeline layout '{}' places {} of the {} blocks and {} of the {} MTP layers of '{}'{}",
                                layout, next_block, blocks.size(), next_mtp, mtp_layers.size(), model.name,
                                embedding_placed && loss_placed ? "" : ", and needs one E and one L");
  else if (split.virtual_stages.size() != stages)
    split.problem = fmt::format("pipeline layout '{}' has {} virtual stages, the plan {} (stages × chunks)", layout,
                                split.virtual_stages.size(), stages);
  else
    for (std::size_t i = 0; i + 1 < stages && split.problem.empty(); ++i)
      if (split.virtual_stages[i].end != split.virtual_stages[i + 1].begin || split.virtual_stages[i].size() == 0)
        split.problem = fmt::format("pipeline layout '{}': virtual stage {} is empty or out of order", layout, i);
  if (!split.problem.empty()) split.virtual_stages.clear();
  return split;
}

}  // namespace dnnsim
