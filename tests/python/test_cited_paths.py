"""Every path of this repository that the documentation or a source comment cites exists, so that a
moved or renamed file cannot leave its citations behind.

What counts as a cited path:
- where: anywhere in a tracked Markdown file (docs/, README.md, data/*/README.md, fenced code
  included), and in the comments of tracked sources (C++ `//`, and `#` in Python, shell, CMake and
  YAML files: the scenarios' comments cite papers' files and the docs);
- what: a token that starts with a top-level folder of the repository and a slash (`models/`,
  `sim/`, `docs/`, `data/`, `scenarios/`, ...), where a token starts at the beginning of the text or
  after a character that cannot be part of a path (so `tensorflow/models/x.py`, `HeliosData/data/x`
  and URLs are other repositories' paths and not checked: cite those with their repository's name);
- how it is read: trailing punctuation is not part of it; `{a,b}` expands to both; a `<placeholder>`
  or a component in capitals (`TARGET`) names a file the reader picks or creates, so only the folder
  before it must exist; `*`, `?` and
  `…` are globs that must match something; a path without an extension may name a module, which
  exists when some file of that stem does (`sim/run/simulation` for simulation.hpp and .cpp).
Pure Python, run by ctest from the source tree; a clone without git metadata is walked instead.
"""
import glob
import itertools
import os
import pathlib
import re
import subprocess
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A path component in capitals (TARGET, NAME, RUN_ID) stands for a name, as `<name>` does.
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]+")

COMMENT_PREFIX = {".cpp": "//", ".hpp": "//", ".h": "//", ".cu": "//", ".in": "//", ".proto": "//",
                  ".py": "#", ".sh": "#", ".cmake": "#", ".yaml": "#", ".yml": "#"}


def tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [str((pathlib.Path(d) / f).relative_to(ROOT)) for d, dirs, files in os.walk(ROOT) for f in files
                if not any(part in ("build", ".git") for part in pathlib.Path(d).relative_to(ROOT).parts)]


def citation_pattern(top_folders):
    tops = "|".join(re.escape(t) for t in sorted(top_folders))
    # A path character, a placeholder in angle brackets (which may hold spaces), or a brace group.
    piece = r"(?:[\w.\-*?…+%/]|<[^<>\n]*>|\{[^{}\s]*\})"
    return re.compile(r"(?<![\w/.\-~$@:<{])((?:" + tops + r")/" + piece + r"*)")


def commented_lines(name, text):
    """(line number, text) of what may cite a path: every line of Markdown, the comments of sources."""
    path = pathlib.PurePath(name)
    if path.suffix == ".md":
        return list(enumerate(text.split("\n"), 1))
    prefix = "#" if path.name == "CMakeLists.txt" or path.name.endswith(".cmake.in") else COMMENT_PREFIX.get(path.suffix)
    if prefix is None:
        return []
    lines = []
    for number, line in enumerate(text.split("\n"), 1):
        at = line.find(prefix)
        if at >= 0:
            lines.append((number, line[at + len(prefix):]))
    return lines


def expand_braces(path):
    match = re.search(r"\{([^{}]*)\}", path)
    if not match:
        return [path]
    return list(itertools.chain.from_iterable(
        expand_braces(path[:match.start()] + alternative + path[match.end():]) for alternative in match.group(1).split(",")))


def clean(cited):
    cited = cited.rstrip(".,;:")
    while cited.endswith("/") and cited.count("/") > 1:
        cited = cited[:-1]
    return cited


def exists(root, cited):
    parts = cited.split("/")
    for k, part in enumerate(parts):
        if "<" in part or PLACEHOLDER.fullmatch(part):  # a name the reader picks: its folder must exist
            return (root / "/".join(parts[:k])).is_dir()
    pattern = cited.replace("…", "*")
    if any(c in pattern for c in "*?"):
        return bool(glob.glob(str(root / pattern)))
    target = root / pattern
    return target.exists() or bool(glob.glob(glob.escape(str(target)) + ".*"))


def broken_citations(root, names):
    top_folders = {name.split("/")[0] for name in names if "/" in name and not name.startswith(".")}
    pattern = citation_pattern(top_folders)
    broken = []
    for name in names:
        path = root / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary data
        for number, line in commented_lines(name, text):
            for match in pattern.finditer(line):
                cited = clean(match.group(1))
                if not all(exists(root, alternative) for alternative in expand_braces(cited)):
                    broken.append(f"{name}:{number}: {cited}")
    return broken


class CitedPaths(unittest.TestCase):
    def test_the_rule_on_examples(self):
        pattern = citation_pattern({"docs", "sim", "data"})
        found = lambda line: [clean(m.group(1)) for m in pattern.finditer(line)]
        self.assertEqual(found("see `sim/run/simulation.hpp`, and docs/a.md."), ["sim/run/simulation.hpp", "docs/a.md"])
        self.assertEqual(found("tensorflow/models/x.py, https://github.com/a/docs/b, HeliosData/data/y"), [])
        self.assertEqual(found("`data/calibration/<catalog name>.yaml`"), ["data/calibration/<catalog name>.yaml"])
        self.assertEqual(found("{source: pollux, tables: data/t}`"), ["data/t"])
        self.assertEqual(expand_braces("data/{a,b}_x.hpp"), ["data/a_x.hpp", "data/b_x.hpp"])
        self.assertTrue(exists(ROOT, "tests/fuzz/crashers/TARGET"))
        self.assertTrue(exists(ROOT, "planners/jobs/placement_<name>.cpp"))
        self.assertFalse(exists(ROOT, "planners/nowhere/<name>.cpp"))
        self.assertTrue(exists(ROOT, "sim/run/simulation"))  # a module: simulation.hpp and .cpp
        self.assertFalse(exists(ROOT, "sim/run/simulatio"))
        self.assertTrue(exists(ROOT, "scenarios/papers/megatron/row*.yaml"))
        self.assertEqual(commented_lines("a.cpp", 'int x;  // sim/a.hpp\nstd::string s = "sim/b";'),
                         [(1, " sim/a.hpp")])
        self.assertEqual(commented_lines("s.yaml", "a: 1  # docs/architecture.md"), [(1, " docs/architecture.md")])

    def test_every_cited_path_exists(self):
        broken = broken_citations(ROOT, tracked_files())
        self.assertEqual(broken, [], "paths cited but absent (move the citation with the file, or cite another "
                                     "repository's file with its repository's name first):\n" + "\n".join(broken))


if __name__ == "__main__":
    unittest.main()
