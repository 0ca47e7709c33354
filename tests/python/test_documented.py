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

CSV columns: of the same runs (the ADSP one with `outputs.trace` on, for ps_events.csv), the header of
every CSV file must name columns that are words of a code span or fenced block of the section
CSV_DOCS gives for that file; a CSV file with no entry there fails, and so does an entry no run writes.

Keys: every key a reader of a user file declares through MapReader (models/common/yaml_reader.hpp,
whose finish() rejects every key not declared) must be a word of a code span or fenced block of the
documents KEY_SOURCES gives for its source file: for a workload kind that docs/scenarios.md hands to
its own document (cluster, parameter_server, gnn, spmd, chakra, taskgraph) those two, for the other
scenario readers (sim/scenario/, sim/workloads/) docs/scenarios.md and every document it links to,
and for the other file formats
(calibration tables, convergence fits, TaskGraph JSON, operator graphs, sweeps, compare files) their
own document. The keys are the string literals of the first argument of a MapReader method called on
a variable declared as a MapReader in the source; a non-literal argument is resolved when it is a
loop variable over literals (`for (const char* role : {...})`, an array, a function returning a list)
or a `std::string_view` parameter of a function or lambda (the literals its callers pass); one that
is neither must be listed, with why, in INDIRECT_KEYS. Options of registry entries are left to
scripts/update-docs, which writes their tables. Trace files read without MapReader (traces/jobs/) are
external formats and not checked.
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
             "scenarios/papers/adsp/adsp-cifar10.yaml",           # parameter_server (with its trace below)
             "scenarios/papers/bgl/bgl-pubmed.yaml",              # gnn
             "scenarios/papers/hap/hetero-4-bert-moe.yaml"]       # spmd (HAP)

# Settings added to a scenario's run, so that it writes every file it can: ps_events.csv is written with
# `outputs.trace` only, which the ADSP scenario turns off.
SCENARIO_SETTINGS = {"scenarios/papers/adsp/adsp-cifar10.yaml": ["--set", "outputs.trace=true"]}

# Where the columns of the CSV files a run writes are documented: (file, heading of the section).
CSV_DOCS = {"tasks.csv": ("docs/reports.md", "## tasks.csv"),
            "jobs.csv": ("docs/reports.md", "## Cluster workloads (`kind: cluster`)"),
            "utilisation.csv": ("docs/reports.md", "## Cluster workloads (`kind: cluster`)"),
            "ps_workers.csv": ("docs/parameter-server.md", "## Outputs"),
            "loss.csv": ("docs/parameter-server.md", "## Outputs"),
            "ps_events.csv": ("docs/parameter-server.md", "## Outputs"),
            "gnn_batches.csv": ("docs/gnn.md", "### Reports")}

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


# --- Scenario keys -------------------------------------------------------------------------------

# Every reader of a user file declares its keys through MapReader (models/common/yaml_reader.hpp):
# the string literals given to its get/require/has/string/boolean/integer/number/choice/quantity are
# the keys the file accepts, and finish() rejects every other key. By source files (glob; a file
# belongs to the first that matches), the documents that must name the keys they read. A workload
# kind that docs/scenarios.md hands to its own document is checked against the two; the other
# scenario readers against docs/scenarios.md and every document it links to (None).
SCENARIO_DOCS = "docs/scenarios.md"
KEY_SOURCES = {"sim/workloads/cluster/*.cpp": [SCENARIO_DOCS, "docs/cluster.md"],
               "sim/workloads/parameter_server/*.cpp": [SCENARIO_DOCS, "docs/parameter-server.md"],
               "sim/workloads/gnn/*.cpp": [SCENARIO_DOCS, "docs/gnn.md"],
               "sim/workloads/spmd/*.cpp": [SCENARIO_DOCS, "docs/spmd.md"],
               "sim/workloads/chakra/*.cpp": [SCENARIO_DOCS, "docs/chakra.md"],
               "sim/workloads/taskgraph/*.cpp": [SCENARIO_DOCS, "docs/taskgraph.md"],
               "sim/scenario/*.cpp": None,
               "sim/workloads/**/*.cpp": None,
               "models/calibration/calibration.cpp": ["docs/calibration.md"],           # calibration tables
               "models/sync/statistical_efficiency.cpp": ["docs/calibration.md"],       # convergence fits
               "models/program/task_graph_json.cpp": ["docs/taskgraph.md"],             # TaskGraph JSON
               "models/spmd/op_graph_yaml.cpp": ["docs/spmd.md"],                       # operator graphs
               "sim/sweep/sweep_spec.cpp": ["docs/sweeps.md"],                          # sweep files
               "sim/regress/regress_spec.cpp": ["docs/regress.md"]}                     # compare files
# Users of MapReader that declare no keys of their own.
KEY_EXEMPT = {"models/common/yaml_reader.cpp": "MapReader itself",
              "models/common/option_reader.cpp": "an extension point's options, declared by its registry "
                                                 "entry: scripts/update-docs writes their tables"}
# Key arguments that are no literal, with why they are not checked: (file, argument) -> reason.
INDIRECT_KEYS = {
    ("models/calibration/calibration.cpp", "name"):
        "the peak of each dtype: dtype_names() of models/program/task_graph.cpp (fp32, bf16, …)",
    ("models/program/task_graph_json.cpp", "key"):
        "kComputeKeys, kTransferKeys and kCollectiveKeys, accepted alike when a task's kind is unknown: each "
        "key is also read by name where its kind is read",
    ("sim/workloads/pipeline/pipeline_kind.cpp", "key"):
        "the keys a planner chooses (kLlmLayoutChosen, kTensorParallelChosen), refused here and read by "
        "name in the pipeline reader"}
MAP_METHOD = r"(?:get|require|has|string|boolean|integer|number|choice|quantity\s*<[^<>()]*>)"
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def arguments(text, open_paren):
    """The top-level arguments of the C++ call whose '(' is at `open_paren`."""
    args, depth, start, k = [], 0, open_paren + 1, open_paren
    while k < len(text):
        c = text[k]
        if c in "\"'":  # a string or character literal: skip it, escapes included
            k += 1
            while text[k] != c:
                k += 2 if text[k] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:k].strip())
                return args
        elif c == "," and depth == 1:
            args.append(text[start:k].strip())
            start = k + 1
        k += 1
    return args


def literals_of_range(name, texts):
    """The string literals a name that a loop runs over stands for: `{"a", "b"}`, an array or vector
    initialised with literals, or a function that returns a list of literals; None if none is found."""
    name = name.strip()
    if name.startswith("{"):
        return LITERAL.findall(name)
    bare = re.escape(name.rstrip("()"))
    for text in texts:
        m = (re.search(r"\b" + bare + r"\s*\(\)\s*\{\s*return\s*\{([^}]*)\}", text) if name.endswith("()") else
             re.search(r"\b" + bare + r"\s*(?:\[\w*\]\s*=\s*|=\s*|)\{((?:[^{};]|\{[^{}]*\})*)\}\s*;", text))
        if m:
            inner = re.findall(r"\{\s*\"([^\"]*)\"", m.group(1))  # an array of pairs: their first members
            return inner or LITERAL.findall(m.group(1))
    return None


def keys_by_argument(argument, text, position, texts):
    """The keys a MapReader method's first argument at `position` of `text` stands for, or None if they
    cannot be found."""
    found = LITERAL.findall(argument)
    if found:
        return found  # "key", or a choice of literals: has_bytes ? "per_gpu" : "fraction"
    name = re.fullmatch(r"(\w+)(\[\w+\])?", argument)
    if not name:
        return None
    if name.group(2):  # names[d] of `const char* names[3] = {"m", "n", "k"}`
        return literals_of_range(name.group(1), [text])
    name = name.group(1)
    # A loop variable just above the call: `for (const char* role : {…})`, `for (… [key, field] : peaks)`.
    loops = list(re.finditer(r"for\s*\([^;{}]*?\b" + name + r"\b[^;{}:]*?:\s*(.+?)\)\s*(?:[{(\n]|\w)",
                             text[max(0, position - 400):position]))
    if loops:
        return literals_of_range(loops[-1].group(1), [text] + texts)
    # A parameter `std::string_view name` of the function or lambda around the call: the literals its
    # callers pass there.
    enclosing = list(re.finditer(r"(\w+)\s*(?:=\s*\[[^\]]*\]\s*)?\(([^()]*\bstd::string_view\s+" + name +
                                 r"\b[^()]*)\)", text[:position]))
    if not enclosing:
        return None
    function, parameters = enclosing[-1].groups()
    names = [re.sub(r"\s*=.*", "", p).split()[-1] for p in parameters.split(",")]
    if name not in names:
        return None  # a comma inside a parameter's type: not a simple parameter list
    slot, keys = names.index(name), []
    for calling in texts:
        for call in re.finditer(r"(?<![\w:])" + function + r"\s*\(", calling):
            args = arguments(calling, call.end() - 1)
            if slot < len(args):
                keys += LITERAL.findall(args[slot])
    return keys or None


def declared_keys(files, callers=()):
    """{key: [file, …]} declared through MapReader in `files`, and the key arguments that could not be
    resolved to literals as {(file, argument)}; a helper's key parameter is also looked up in the calls
    of the sources `callers`."""
    texts = [(ROOT / f).read_text(encoding="utf-8") for f in files]
    every_text = texts + [(ROOT / f).read_text(encoding="utf-8") for f in callers if f not in files]
    keys, unresolved = {}, set()
    for file, text in zip(files, texts):
        readers = set(re.findall(r"\bMapReader>?\s*&?\s*(\w+)\b(?!::)", text)) - {"MapReader"}
        if "ctx.map" in text:
            readers.add("map")  # WorkloadContext::map, the section of a workload kind
        if not readers:
            continue
        call = re.compile(r"\b(?:" + "|".join(sorted(readers)) + r")\s*(?:\.|->)\s*" + MAP_METHOD + r"\s*\(")
        for m in call.finditer(text):
            args = arguments(text, m.end() - 1)
            if not args or not args[0]:
                continue
            found = keys_by_argument(args[0], text, m.start(), every_text)
            if found is None:
                unresolved.add((file, args[0]))
            for key in found or []:
                keys.setdefault(key, []).append(file)
    return keys, unresolved


def key_sources():
    """{documents: [source files]} of KEY_SOURCES, and every source using MapReader in no group."""
    groups, covered = {}, set()
    scenario_docs = [SCENARIO_DOCS, *sorted({"docs/" + link for link in re.findall(
        r"\]\(([\w-]+\.md)(?:#[^)]*)?\)", (ROOT / SCENARIO_DOCS).read_text(encoding="utf-8"))})]
    for pattern, docs in KEY_SOURCES.items():
        files = sorted({str(p.relative_to(ROOT)) for p in ROOT.glob(pattern)} - covered)
        groups.setdefault(tuple(docs or scenario_docs), []).extend(files)
        covered.update(files)
    users = {str(p.relative_to(ROOT)) for tree in ("sim", "models", "traces", "planners")
             for p in (ROOT / tree).rglob("*.cpp") if re.search(r"\bMapReader\b", p.read_text(encoding="utf-8"))}
    return groups, sorted(users - covered - set(KEY_EXEMPT))


def undocumented_keys():
    missing, unresolved = [], set()
    groups, strays = key_sources()
    sources = [f for files in groups.values() for f in files]
    for docs, files in groups.items():
        spans, blocks = [], []
        for doc in docs:
            more_spans, more_blocks = code_of((ROOT / doc).read_text(encoding="utf-8"))
            spans += more_spans
            blocks += more_blocks
        keys, more_unresolved = declared_keys(files, sources)
        unresolved |= more_unresolved
        for key, where in sorted(keys.items()):
            if not any(word(key).search(code) for code in spans + blocks):
                missing.append(f"{key} ({', '.join(sorted(set(where)))}; not in {', '.join(docs)})")
    return missing, unresolved, strays


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
        self.assertEqual(arguments('f(a, g(b, c), "x,)", \'"\')', 1), ["a", "g(b, c)", '"x,)"', "\'\"\'"])
        self.assertEqual(literals_of_range("peaks", ['std::pair<const char*, int> peaks[] = {{"p", 1}, {"q", 2}};']),
                         ["p", "q"])
        loop = 'for (const char* role : {"sample", "gather"})\n  m.integer(role'
        self.assertEqual(keys_by_argument("role", loop, len(loop), [loop]), ["sample", "gather"])
        callers = 'bool f(MapReader& m, std::string_view key) { return m.has(key); }\nf(map, "k1"); f(map, "k2");'
        self.assertEqual(keys_by_argument("key", callers, 60, [callers]), ["k1", "k2"])
        self.assertIsNone(keys_by_argument("key", "for (auto key : *keys) m.get(key)", 30, []))

    def test_every_long_flag_is_documented(self):
        missing = undocumented_flags(p.read_text(encoding="utf-8") for p in documents())
        self.assertFalse(missing, "flags of `--help` not documented in README.md or docs/*.md (as `--flag …` "
                                      "in backticks or in a code block):\n" + "\n".join(missing))

    @classmethod
    def setUpClass(cls):
        """Runs SCENARIOS once, for the summary and CSV checks: {scenario: its output directory}."""
        cls.out = tempfile.TemporaryDirectory()
        cls.runs = {}
        for k, scenario in enumerate(SCENARIOS):
            out = os.path.join(cls.out.name, str(k))
            run = subprocess.run([CLI, "run", scenario, "--out", out, *SCENARIO_SETTINGS.get(scenario, [])],
                                 cwd=ROOT, capture_output=True, text=True)
            # 3: an expectation of the scenario's `expect:` block missed; its reports are written.
            if run.returncode not in (0, 3):
                raise AssertionError(f"{scenario}: {run.stderr}")
            cls.runs[scenario] = pathlib.Path(out)

    @classmethod
    def tearDownClass(cls):
        cls.out.cleanup()

    def test_every_summary_field_is_documented(self):
        words = {top: words_in_code(*doc) for top, doc in SECTION_DOCS.items()}
        summary_words = words_in_code(*SUMMARY_DOC)
        missing = {}  # path -> (document, the first scenario that wrote it)
        for scenario, out in self.runs.items():
            summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
            for path in key_paths(summary):
                if path[-1] not in words.get(path[0], summary_words):
                    where = '{} "{}"'.format(*SECTION_DOCS.get(path[0], SUMMARY_DOC))
                    missing.setdefault(".".join(path), (where, scenario))
        missing = [f"{where}: {path} (in {scenario})" for path, (where, scenario) in sorted(missing.items())]
        self.assertFalse(missing, "summary.json fields whose name is in no code span of their document:\n" +
                         "\n".join(missing))

    def test_every_csv_column_is_documented(self):
        missing, written = [], set()
        for scenario, out in self.runs.items():
            for table in sorted(out.glob("*.csv")):
                written.add(table.name)
                if table.name not in CSV_DOCS:
                    missing.append(f"{table.name} (in {scenario}): no section of the docs in CSV_DOCS")
                    continue
                words, where = words_in_code(*CSV_DOCS[table.name]), '{} "{}"'.format(*CSV_DOCS[table.name])
                header = table.read_text(encoding="utf-8").split("\n", 1)[0].split(",")
                missing += [f"{where}: {table.name} column {column} (in {scenario})"
                            for column in header if column not in words]
        self.assertEqual(sorted(set(CSV_DOCS) - written), [], "CSV files no scenario of SCENARIOS writes")
        self.assertFalse(missing, "CSV columns whose name is in no code span of their document:\n" + "\n".join(missing))

    def test_every_scenario_key_is_documented(self):
        missing, unresolved, strays = undocumented_keys()
        self.assertEqual(strays, [], "readers using MapReader in neither KEY_SOURCES nor KEY_EXEMPT")
        self.assertEqual(sorted(unresolved), sorted(INDIRECT_KEYS),
                         "MapReader key arguments that are no literal, no loop over literals and no parameter "
                         "given literals: list them in INDIRECT_KEYS with why, or read the key by name")
        self.assertFalse(missing, "keys read through MapReader in no code span of their documents:\n" +
                         "\n".join(missing))

if __name__ == "__main__":
    unittest.main()
