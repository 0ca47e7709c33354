#include "sim/platform/cluster_routes.hpp"

#include <stdexcept>

namespace dnnsim {

ClusterRoutes::ClusterRoutes(const PlatformLayout& layout) {
  between_nodes_.switch_ports = layout.switch_ports;
  between_nodes_.leaf_spine = layout.leaf_spine;
  between_nodes_.node_routes = layout.node_routes;
  const Route none;
  for (const NodeLayout& node : layout.nodes) {
    const auto gpus = static_cast<std::uint32_t>(node.gpus.size());
    nodes_.push_back(Node{gpus, static_cast<std::uint32_t>(spans_.size())});
    for (std::uint32_t g = 0; g < gpus; ++g) add_span(node.gpu_to_gateway.at(g));
    add_span(node.cpu_to_gateway);
    for (std::uint32_t g = 0; g < gpus; ++g) add_span(g < node.cpu_to_gpu.size() ? node.cpu_to_gpu[g] : none);
    for (std::uint32_t a = 0; a < gpus; ++a)
      for (std::uint32_t b = 0; b < gpus; ++b) {
        const auto found = node.gpu_routes.find({a, b});
        add_span(found == node.gpu_routes.end() ? none : found->second);
      }
  }
}

void ClusterRoutes::add_span(const Route& route) {
  const auto begin = static_cast<std::uint32_t>(hops_.size());
  hops_.insert(hops_.end(), route.begin(), route.end());
  spans_.emplace_back(begin, static_cast<std::uint32_t>(hops_.size()));
}

std::uint32_t ClusterRoutes::add_gpu(std::uint32_t node, std::uint32_t local) {
  if (node >= nodes_.size() || local >= nodes_[node].gpus) throw std::out_of_range("ClusterRoutes: no such GPU");
  hosts_.push_back(Host{node, local});
  return static_cast<std::uint32_t>(hosts_.size() - 1);
}

std::uint32_t ClusterRoutes::add_cpu(std::uint32_t node) {
  if (node >= nodes_.size()) throw std::out_of_range("ClusterRoutes: no such node");
  hosts_.push_back(Host{node, kCpu});
  return static_cast<std::uint32_t>(hosts_.size() - 1);
}

const ClusterRoutes::Span& ClusterRoutes::to_gateway(const Host& host) const {
  const Node& node = nodes_[host.node];
  return spans_[node.first_span + (host.local == kCpu ? node.gpus : host.local)];
}

void ClusterRoutes::append(const Span& span, bool mirrored, Route& hops) const {
  if (!mirrored) {
    hops.insert(hops.end(), hops_.begin() + span.first, hops_.begin() + span.second);
    return;
  }
  for (std::uint32_t h = span.second; h > span.first; --h) hops.push_back(Hop{hops_[h - 1].link, !hops_[h - 1].up});
}

void ClusterRoutes::route(std::uint32_t from, std::uint32_t to, Route& hops, std::size_t* middle_begin,
                          std::size_t* middle_end) const {
  const Host& a = hosts_.at(from);
  const Host& b = hosts_.at(to);
  if (a.node == b.node) {
    const Node& node = nodes_[a.node];
    const std::uint32_t cpu_to_gpu = node.first_span + node.gpus + 1;
    const std::uint32_t pairs = cpu_to_gpu + node.gpus;
    *middle_begin = hops.size();
    if (a.local == kCpu && b.local != kCpu)
      append(spans_[cpu_to_gpu + b.local], false, hops);
    else if (a.local != kCpu && b.local == kCpu)
      append(spans_[cpu_to_gpu + a.local], true, hops);
    else if (a.local != kCpu && a.local < b.local)
      append(spans_[pairs + a.local * node.gpus + b.local], false, hops);
    else if (a.local != kCpu)
      append(spans_[pairs + b.local * node.gpus + a.local], true, hops);
    *middle_end = hops.size();
    return;
  }
  append(to_gateway(a), false, hops);
  *middle_begin = hops.size();
  const Route middle = between_nodes_.node_route(a.node, b.node);
  hops.insert(hops.end(), middle.begin(), middle.end());
  *middle_end = hops.size();
  append(to_gateway(b), true, hops);
}

}  // namespace dnnsim
