// A one-hidden-layer tanh network (a multilayer perceptron, Rumelhart, Hinton & Williams, Nature
// 1986) as the statistical-efficiency calibration's non-convex proxy. Its loss surface has the
// symmetries and saddle points of a deep network's, so a gradient computed at parameters σ commits
// old, or a local model that drifted for m steps, can point somewhere the global model no longer is —
// the costs ADSP's and ADACOMM's policies trade against waiting, which the convex softmax barely has.
//
// Initialisation: weights N(0, 1/fan_in), biases 0 (LeCun, Bottou, Orr & Müller, "Efficient
// BackProp", 1998, §4.6: unit-variance pre-activations keep tanh out of saturation). Everything is
// double precision on one CPU thread, so that a seed gives the same bytes on every run.
#include "planners/torch/digits_mlp.hpp"

// Before any other torch header (see plugin.cpp).
#include <ATen/core/ivalue.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <cstring>

namespace dnnsim {
namespace {

constexpr std::int64_t kClasses = 10;

class DigitsMlp final : public ProxyModel {
 public:
  DigitsMlp(const DigitsData& data, int hidden, std::uint64_t seed)
      : samples_(static_cast<std::int64_t>(data.labels.size())), inputs_(data.inputs.cols()), hidden_(hidden) {
    torch::set_num_threads(1);
    // DigitsData's inputs are column-major: copy them row by row into a row-major tensor.
    inputs_all_ = torch::empty({samples_, inputs_}, torch::kFloat64);
    auto rows = inputs_all_.accessor<double, 2>();
    for (std::int64_t i = 0; i < samples_; ++i)
      for (std::int64_t j = 0; j < inputs_; ++j) rows[i][j] = data.inputs(i, j);
    labels_all_ = torch::empty({samples_}, torch::kInt64);
    for (std::int64_t i = 0; i < samples_; ++i) labels_all_[i] = data.labels[static_cast<std::size_t>(i)];
    torch::manual_seed(seed);
    // The last input is the constant 1, the bias: its weights start at 0, the pixels' at N(0, 1/64).
    auto w1 = torch::randn({inputs_, hidden_}, torch::kFloat64) / std::sqrt(static_cast<double>(inputs_ - 1));
    w1[inputs_ - 1].zero_();
    auto w2 = torch::randn({hidden_ + 1, kClasses}, torch::kFloat64) / std::sqrt(static_cast<double>(hidden_));
    w2[hidden_].zero_();
    initial_ = torch::cat({w1.flatten(), w2.flatten()});
  }

  Eigen::VectorXd initial_parameters() const override { return to_eigen(initial_); }

  double loss(const Eigen::VectorXd& w) const override {
    torch::NoGradGuard no_grad;
    return objective(view(w), inputs_all_, labels_all_).item<double>();
  }

  void gradient(const Eigen::VectorXd& w, const std::vector<std::size_t>& samples, Eigen::VectorXd& out) override {
    const auto theta = view(w).clone().set_requires_grad(true);
    std::vector<std::int64_t> picked(samples.begin(), samples.end());
    const auto index = torch::from_blob(picked.data(), {static_cast<std::int64_t>(picked.size())}, torch::kInt64);
    objective(theta, inputs_all_.index_select(0, index), labels_all_.index_select(0, index)).backward();
    out = to_eigen(theta.grad());
  }

  std::size_t sample_count() const override { return static_cast<std::size_t>(samples_); }

  std::string description() const override {
    return fmt::format(
        "one-hidden-layer tanh network (libtorch; 64 pixels + bias -> {} tanh + bias -> 10 classes, weights N(0, "
        "1/fan_in) from the seed, mean cross-entropy over all {} samples)",
        hidden_, samples_);
  }

 private:
  // Mean cross-entropy of softmax([tanh(X·W1), 1]·W2) against the labels.
  torch::Tensor objective(const torch::Tensor& theta, const torch::Tensor& x, const torch::Tensor& y) const {
    const auto w1 = theta.narrow(0, 0, inputs_ * hidden_).view({inputs_, hidden_});
    const auto w2 = theta.narrow(0, inputs_ * hidden_, (hidden_ + 1) * kClasses).view({hidden_ + 1, kClasses});
    const auto h = torch::tanh(x.mm(w1));
    const auto z = torch::cat({h, torch::ones({h.size(0), 1}, torch::kFloat64)}, 1).mm(w2);
    return torch::nll_loss(torch::log_softmax(z, 1), y);
  }
  // The flat parameters as a tensor sharing their memory (read only).
  static torch::Tensor view(const Eigen::VectorXd& w) {
    return torch::from_blob(const_cast<double*>(w.data()), {static_cast<std::int64_t>(w.size())}, torch::kFloat64);
  }
  static Eigen::VectorXd to_eigen(const torch::Tensor& t) {
    const auto flat = t.contiguous();
    Eigen::VectorXd out(flat.numel());
    std::memcpy(out.data(), flat.data_ptr<double>(), static_cast<std::size_t>(flat.numel()) * sizeof(double));
    return out;
  }

  std::int64_t samples_, inputs_, hidden_;
  torch::Tensor inputs_all_, labels_all_, initial_;
};

}  // namespace

std::unique_ptr<ProxyModel> make_digits_mlp(const DigitsData& data, int hidden, std::uint64_t seed) {
  return std::make_unique<DigitsMlp>(data, hidden, seed);
}

}  // namespace dnnsim
