"""The Python module `import dnnsim` (sim/python, docs/python.md), run by ctest with the system python3.

Environment (set by tests/CMakeLists.txt): PYTHONPATH holds the built module, DNNSIM_CLI is the dnnsim
executable, the working directory is the source tree.
"""
import csv
import json
import os
import subprocess
import tempfile
import unittest

import dnnsim

# One V100 at half its fp32 peak, one compute-bound layer (tests/component/metrics_test.cpp derives
# it): MFU = 0.5 minus the optimizer step's few microseconds.
ONE_GPU = {
    "name": "one-gpu",
    "cluster": {
        "node_types": {"box": {"gpu": "V100-16GB", "gpus_per_node": 1, "compute_efficiency": 0.5,
                               "nic": {"link": "Ethernet-25G"}}},
        "nodes": [{"type": "box", "count": 1}],
    },
    "workload": {"kind": "data_parallel",
                 "model": {"layers": [{"forward_flops": "0.5TFlop", "parameter_bytes": "4MB"}]},
                 "global_batch": 2},
}


class Run(unittest.TestCase):
    def test_quickstart_matches_the_cli_golden_summary(self):
        # The same engine and scenario as tests/golden/quickstart.summary.json, in a child process.
        summary = dnnsim.run("scenarios/quickstart.yaml")
        with open("tests/golden/quickstart.summary.json") as f:
            golden = json.load(f)
        self.assertEqual(summary["mean"]["iteration_time_s"], golden["mean"]["iteration_time_s"])
        self.assertEqual(summary["devices"], golden["devices"])

    def test_runs_repeat_in_one_process(self):
        # SimGrid allows one engine per process: each run forks, so a notebook can run many.
        first = dnnsim.run(ONE_GPU)
        second = dnnsim.run(ONE_GPU)
        self.assertEqual(first["makespan_s"], second["makespan_s"])
        self.assertAlmostEqual(first["mean"]["mfu"], 0.5, delta=1e-4)

    def test_tasks_are_columns(self):
        summary = dnnsim.run(ONE_GPU)
        tasks = summary["tasks"]
        lengths = {len(column) for column in tasks.values()}
        self.assertEqual(lengths, {summary["simulation"]["tasks"]})
        self.assertEqual(tasks["label"][:2], ["fwd layer0", "bwd layer0"])
        self.assertEqual(tasks["kind"][0], "compute")

    def test_tasks_can_be_left_out_and_read_from_tasks_csv(self):
        # The columns cost memory per task in both processes; without them the same tasks are in
        # tasks.csv, written row by row, when `out` asks for the reports.
        with tempfile.TemporaryDirectory() as out:
            summary = dnnsim.run(ONE_GPU, out=out, tasks=False)
            self.assertNotIn("tasks", summary)
            with open(os.path.join(out, "tasks.csv")) as f:
                rows = list(csv.DictReader(f))
        columns = dnnsim.run(ONE_GPU)["tasks"]
        self.assertEqual(len(rows), summary["simulation"]["tasks"])
        self.assertEqual([row["label"] for row in rows], columns["label"])
        for row, start in zip(rows, columns["start_s"]):  # the CSV's dates have 9 significant digits
            self.assertAlmostEqual(float(row["start_s"]), start, delta=1e-8 * abs(start))

    def test_yaml_string_and_overrides(self):
        text = json.dumps(ONE_GPU)  # JSON is YAML
        summary = dnnsim.run(text, set=["run.iterations=2"])
        self.assertEqual(summary["iterations"], 2)


class Errors(unittest.TestCase):
    def test_input_error_text_is_the_cli_text(self):
        path = "tests/golden/bad_scenario.yaml"
        cli = subprocess.run([os.environ["DNNSIM_CLI"], "validate", path], capture_output=True, text=True)
        self.assertEqual(cli.returncode, 2)
        with self.assertRaises(dnnsim.InputError) as raised:
            dnnsim.run(path)
        self.assertEqual(str(raised.exception), cli.stderr)
        self.assertIsInstance(raised.exception, ValueError)

    def test_dict_errors_are_located_in_the_dict(self):
        bad = json.loads(json.dumps(ONE_GPU))
        bad["workload"]["global_batch"] = 0
        with self.assertRaises(dnnsim.InputError) as raised:
            dnnsim.validate(bad)
        self.assertIn("<dict>:1:", str(raised.exception))


class Queries(unittest.TestCase):
    def test_validate(self):
        self.assertTrue(dnnsim.validate("scenarios/quickstart.yaml").startswith("ok"))

    def test_list(self):
        names = [entry["name"] for entry in dnnsim.list("workloads")]
        self.assertIn("chakra", names)
        self.assertIn("parameter_server", names)
        self.assertIn("gnn", names)
        self.assertEqual([e["name"] for e in dnnsim.list("sync-policies")], ["bsp", "ssp", "asp", "adacomm", "adsp"])
        self.assertIn("threshold-price", [e["name"] for e in dnnsim.list("admissions")])
        self.assertIn("metis", [e["name"] for e in dnnsim.list("partitioners")])
        self.assertIn("fifo", [e["name"] for e in dnnsim.list("caches")])
        gpus = {gpu["name"]: gpu for gpu in dnnsim.list("gpus")}
        self.assertEqual(gpus["V100-16GB"]["peak_fp32_flops_per_s"], 15.7e12)
        with self.assertRaises(ValueError):
            dnnsim.list("nothing")
        # No argument: one row per catalog and registry, each with its entry count, as `dnnsim list`.
        overview = {row["name"]: row for row in dnnsim.list()}
        self.assertEqual(overview["sync-policies"]["entries"], 5)
        self.assertEqual(overview["gpus"]["entries"], len(gpus))
        self.assertIn("workload.schedule", overview["schedules"]["what"])

    def test_plan(self):
        # A uniform split of gpt2-small (seq 128) over 2 GPUs; `planner=` replaces the scenario's.
        pipeline = json.loads(json.dumps(ONE_GPU))
        pipeline["cluster"]["node_types"]["box"]["gpus_per_node"] = 2
        pipeline["workload"] = {"kind": "pipeline", "model": {"zoo": "gpt2-small", "seq": 128},
                                "global_batch": 4, "micro_batches": 2, "schedule": "1f1b",
                                "stages": [{"layers": 40, "gpus": 1}, {"layers": 48, "gpus": 1}]}
        plan = dnnsim.plan(pipeline)
        self.assertTrue(plan["feasible"])
        self.assertEqual(plan["planner"], "explicit")
        self.assertEqual([stage["layers"] for stage in plan["stages"]], [40, 48])
        pipeline["workload"]["stages"] = None
        del pipeline["workload"]["stages"]
        pipeline["workload"]["planner"] = {"name": "uniform", "stages": 2}
        self.assertEqual(dnnsim.plan(pipeline)["stage_count"], 2)

    def test_plan_replaces_the_planner_as_the_cli_does(self):
        # `planner=` edits the file before it is read, as `dnnsim plan --planner` (replace_planner):
        # uniform's `stages` and the tensor-parallel degree the megatron planner chooses go, so the
        # plan is that of the file written for megatron.
        pipeline = json.loads(json.dumps(ONE_GPU))
        pipeline["cluster"]["node_types"]["box"]["gpus_per_node"] = 2
        pipeline["workload"] = {"kind": "pipeline", "model": {"zoo": "gpt2-small", "seq": 128},
                                "global_batch": 4, "micro_batches": 2, "schedule": "1f1b",
                                "planner": {"name": "uniform", "stages": 2}, "tensor_parallel": 2}
        replaced = dnnsim.plan(pipeline, planner="megatron")
        del pipeline["workload"]["tensor_parallel"]
        pipeline["workload"]["planner"] = "megatron"
        self.assertEqual(replaced, dnnsim.plan(pipeline))
        self.assertEqual(replaced["planner"], "megatron")
        with self.assertRaises(ValueError):
            dnnsim.plan(pipeline, planner="nothing")


if __name__ == "__main__":
    unittest.main()
