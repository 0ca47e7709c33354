"""README.md and docs/ document every long flag of the CLI and every field of summary.json, with the
CLI itself as the source of truth, so that a flag or an output field added to the code cannot be left
undocumented.

Flags: for `dnnsim --help` and `dnnsim P --help` of every subcommand path P it lists (found by walking
the help, as tests/python/test_readme_commands.py does), every long name but `--help` must appear in
README.md or docs/*.md either in an inline code span of options, one that starts with a flag
(`--out`, `--out DIR`, `--imitate T --imitate-dagger P`), or inside a fenced code block (an example
command). A mention inside a command synopsis such as README's `dnnsim bench [--gpus …] [--iterations
N]` does not count: it lists the flag without saying what it does, and repo.readme_commands checks
those synopses already. A name shared by several subcommands (`--out`, `--seed`) is found once for
all of them: the check cannot tell which subcommand a sentence is about.

Fields: `dnnsim run` of a few shipped scenarios, one per kind of summary.json section (data parallel,
jobs, an Ada-Grouper pipeline, cluster replays with packing and with parameter servers, a
parameter-server run, a GNN run, an SPMD run; about 4 s in all with the release build); every key on
every path of each summary.json (an array: the keys of its elements) must appear as a word of a code span or a
fenced block of the part of the docs that describes its section: the "summary.json" section of
docs/reports.md, its "Cluster workloads" section for `cluster`, and for the sections docs/reports.md
hands over, the "Outputs" section of docs/parameter-server.md, the "Reports" section of docs/gnn.md
and the "Lowering and reports" section of docs/spmd.md. The keys of maps keyed by data (GPU, link
and phase names, group sizes) are not field names: the map is checked, its keys are not. A field that
none of these scenarios writes (the tensor-parallel or window fields of a pipeline, a cluster's
`admission`, a Rhino pipeline plan) is not checked.
Run by ctest with DNNSIM_CLI set to the dnnsim executable.
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_readme_commands import CLI, ROOT, help_text, options, subcommands  # noqa: E402

# Maps whose keys are names from the scenario or the run, not field names, by their key path.
DATA_KEYED = {("devices",),                                              # GPU names: node0/gpu1
              ("links",),                                                # the platform's link names
              ("devices", "<name>", "compute_by_phase_s"),               # task phases: forward, ...
              ("spmd", "ratios"),                                        # GPU names
              ("pipeline", "group_size_per_iteration", "predicted_s")}   # Ada-Grouper's group sizes

SCENARIOS = ["scenarios/quickstart.yaml",                         # data_parallel
             "scenarios/examples/two-jobs-leaf-spine.yaml",       # jobs
             "scenarios/papers/ada-grouper/gpt-preempted.yaml",   # pipeline, group size per iteration
             "scenarios/papers/cluster/gavel-packing.yaml",       # cluster, packing
             "scenarios/papers/cluster/ps-synthetic.yaml",        # cluster, parameter-server jobs
             "scenarios/papers/adsp/adsp-cifar10.yaml",           # parameter_server
             "scenarios/papers/bgl/bgl-pubmed.yaml",              # gnn
             "scenarios/papers/hap/hetero-4-bert-moe.yaml"]       # spmd (HAP)

# Where summary.json's fields are documented: (file, heading of the section), by top-level key;
# docs/reports.md links to the sections of the other files.
SUMMARY_DOC = ("docs/reports.md", "## summary.json")
SECTION_DOCS = {"cluster": ("docs/reports.md", "## Cluster workloads (`kind: cluster`)"),
                "parameter_server": ("docs/parameter-server.md", "## Outputs"),
                "gnn": ("docs/gnn.md", "### Reports"),
                "spmd": ("docs/spmd.md", "## Lowering and reports")}


def code_of(markdown):
    """(inline code spans, lines of fenced code blocks) of a Markdown text."""
    spans, blocks, prose, fence = [], [], [], None
    for line in markdown.split("\n"):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = None
            else:
                blocks.append(line)
            continue
        opening = re.match(r"```+|~~~+", stripped)
        if opening:
            fence = opening.group(0)
        else:
            prose.append(line)
    # A span may wrap onto the next line of its paragraph, never past it.
    for paragraph in re.split(r"\n[ \t]*\n", "\n".join(prose)):
        spans += [m.group(2).strip() for m in re.finditer(r"(`+)(.+?)(?<!`)\1(?!`)", paragraph, re.S)]
    return spans, blocks


def section(markdown, heading):
    """The text under `heading` up to the next heading of its level or above."""
    level = len(heading.split()[0])
    body = markdown.split("\n" + heading + "\n", 1)[1]
    return re.split(r"\n#{1," + str(level) + r"} ", body, maxsplit=1)[0]


def word(name):
    return re.compile(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])")


def documents():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def undocumented_flags(documents_text):
    spans, blocks = [], []
    for text in documents_text:
        more_spans, more_blocks = code_of(text)
        spans += more_spans
        blocks += more_blocks
    option_spans = [span for span in spans if span.startswith("--")]
    missing, queue = [], [[]]
    while queue:
        path = queue.pop(0)
        text = help_text(path)
        for names in options(text):
            for name in (n for n in names if n.startswith("--")):
                pattern = word(name)
                if not any(pattern.search(code) for code in option_spans + blocks):
                    missing.append(" ".join(["dnnsim", *path, name]))
        queue += [path + [child] for child in subcommands(text)]
    return missing


def key_paths(value, path=()):
    """Every key path of a JSON value; an array's elements share its path, a data-keyed map's keys are
    not followed."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield path + (key,)
            if path + (key,) not in DATA_KEYED:
                yield from key_paths(child, path + (key,))
            else:
                for named in child.values():
                    yield from key_paths(named, path + (key, "<name>"))
    elif isinstance(value, list):
        for element in value:
            yield from key_paths(element, path)


def words_in_code(file, heading):
    spans, blocks = code_of(section((ROOT / file).read_text(encoding="utf-8"), heading))
    return set(re.findall(r"[A-Za-z_]\w*", "\n".join(spans + blocks)))


class Documented(unittest.TestCase):
    def test_the_rules_on_examples(self):
        spans, blocks = code_of("a `--out DIR` b ``x ` y``\n\n```sh\ndnnsim run s --gantt\n```\n"
                                "`dnnsim bench [--iterations N]`")
        self.assertEqual(spans, ["--out DIR", "x ` y", "dnnsim bench [--iterations N]"])
        self.assertEqual(blocks, ["dnnsim run s --gantt"])
        self.assertTrue(word("--out").match("--out DIR"))
        self.assertFalse(word("--out").match("--output"))
        self.assertEqual(section("# A\n## B\nb\n### C\nc\n## D\nd", "## B"), "b\n### C\nc")
        self.assertEqual(sorted(set(key_paths({"a": [{"b": 1}, {"c": 2}], "devices": {"n0/g0": {"gpu": "x"}}}))),
                         [("a",), ("a", "b"), ("a", "c"), ("devices",), ("devices", "<name>", "gpu")])

    def test_every_long_flag_is_documented(self):
        missing = undocumented_flags(p.read_text(encoding="utf-8") for p in documents())
        self.assertFalse(missing, "flags of `--help` not documented in README.md or docs/*.md (as `--flag …` "
                                      "in backticks or in a code block):\n" + "\n".join(missing))

    def test_every_summary_field_is_documented(self):
        words = {top: words_in_code(*doc) for top, doc in SECTION_DOCS.items()}
        summary_words = words_in_code(*SUMMARY_DOC)
        missing = {}  # path -> (document, the first scenario that wrote it)
        with tempfile.TemporaryDirectory() as out:
            for k, scenario in enumerate(SCENARIOS):
                run = subprocess.run([CLI, "run", scenario, "--out", os.path.join(out, str(k))], cwd=ROOT,
                                     capture_output=True, text=True)
                # 3: an expectation of the scenario's `expect:` block missed; its reports are written.
                self.assertIn(run.returncode, (0, 3), f"{scenario}: {run.stderr}")
                summary = json.loads(pathlib.Path(out, str(k), "summary.json").read_text(encoding="utf-8"))
                for path in key_paths(summary):
                    if path[-1] not in words.get(path[0], summary_words):
                        where = '{} "{}"'.format(*SECTION_DOCS.get(path[0], SUMMARY_DOC))
                        missing.setdefault(".".join(path), (where, scenario))
        missing = [f"{where}: {path} (in {scenario})" for path, (where, scenario) in sorted(missing.items())]
        self.assertFalse(missing, "summary.json fields whose name is in no code span of their document:\n" +
                         "\n".join(missing))


if __name__ == "__main__":
    unittest.main()
