// TaskGraph ⇄ JSON (schema and error behaviour: docs/taskgraph.md): read by task_graph_json.cpp,
// written by task_graph_json_writer.cpp.
//
// Reading goes through yaml-cpp (JSON is a subset of YAML 1.2 flow syntax for these files) and
// YamlReader/MapReader, so that every problem carries file:line:col; it is stricter than YAML where
// JSON is: strings must be quoted, numbers must not be, a key may appear only once. Writing uses
// nlohmann::ordered_json: fixed key order, shortest round-trip numbers, integral values written as
// integers, so that the same graph always gives the same bytes and dump → parse → dump is exact.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "models/program/task_graph.hpp"

namespace dnnsim {

// The file's `format` and `version` keys.
inline constexpr std::string_view kTaskGraphFormat = "dnnsim-taskgraph";
inline constexpr std::int64_t kTaskGraphVersion = 1;

// Reads a TaskGraph file. Devices, streams and dependencies are referred to by name and id in the
// file; the returned graph numbers tasks in file order (TaskId = position), which is also each
// stream's order. Every task's `origin` is its location in the file.
// @throw InputError with every problem found (file:line:col), including those of TaskGraph::validate().
[[nodiscard]] TaskGraph load_task_graph(const std::string& path);

// Same as load_task_graph() on text already in memory; `file_name_for_messages` prefixes locations.
// @throw InputError
[[nodiscard]] TaskGraph parse_task_graph(const std::string& text, const std::string& file_name_for_messages);

// The graph as JSON text: 2-space indent, trailing newline, every field written (defaults too) except
// `measured_time_s`/`measured_on` when no measured time is set and `root` for non-broadcast
// collectives. Ids are the TaskIds.
// @throw std::invalid_argument when a task refers to a device or stream index the graph does not have
//        (a programming error: graphs read by parse_task_graph() never do).
[[nodiscard]] std::string dump_task_graph(const TaskGraph& graph);

// Writes dump_task_graph(graph) to `path`, replacing the file.
// @throw InputError when the file cannot be written.
void save_task_graph(const TaskGraph& graph, const std::string& path);

}  // namespace dnnsim
