"""A user's clone is whole: no tracked file may point at the workplace folder beside the repository
(named `shared`) or at an absolute path of the machine the project is developed on, because a clone
elsewhere has neither. Data a test, scenario or script reads lives under data/ with its README and
licence; a citation names the public source or a doc inside the repository (docs/research/).
Pure Python, run by ctest from the source tree; a clone without git metadata is walked instead.
"""
import os
import pathlib
import re
import subprocess
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Written in pieces so that this file does not match itself (nor the project's before-stop grep).
SHARED = "sha" + "red/"
FORBIDDEN = re.compile(
    "|".join(
        [
            r"\.\./" + SHARED[:-1] + r"\b",         # the workplace folder beside the repository
            r"/[a-z]+/" + SHARED,                 # its absolute path
            r"parents?\[\d+\][^\n]*\"" + SHARED,  # Python's pathlib route to it
            r"(?<![\w.~-])/(?:wo" + r"rk|ro" + r"ot)/",  # this machine's absolute roots
        ]
    )
)


def tracked_files():
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        return [ROOT / name for name in out.decode().split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        return [pathlib.Path(d) / f for d, dirs, files in os.walk(ROOT)
                for f in files if not any(part in ("build", ".git") for part in pathlib.Path(d).relative_to(ROOT).parts)]


class WholeClone(unittest.TestCase):
    def test_the_pattern_catches_what_it_is_for(self):
        for bad in ("file: ../../" + SHARED + "data/x.csv", "see ../" + SHARED[:-1] + " papers.md",
                    "/w" + "ork/" + SHARED + "research/a.md", 'HERE.parents[3].parent / "' + SHARED + 'data/x"',
                    "see /r" + "oot/x", "at /wo" + "rk/main"):
            self.assertRegex(bad, FORBIDDEN, bad)
        for good in ("data/traces/gavel/x.json", "docs/research/papers-cluster.md", "cores: shared",
                     "exec /opt/dnnsim/bin/dnnsim sweep /home/u/bw.yaml", "~/work/x", "a/work/b"):
            self.assertNotRegex(good, FORBIDDEN, good)

    def test_no_tracked_file_points_outside_the_clone(self):
        own = str(ROOT)
        hits = []
        for path in tracked_files():
            if not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # binary data (e.g. a CSR graph)
            for number, line in enumerate(text.splitlines(), 1):
                if FORBIDDEN.search(line) or own in line:
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
        self.assertEqual(hits, [], "tracked files point at ../" + SHARED + " or a machine path:\n" + "\n".join(hits))


if __name__ == "__main__":
    unittest.main()
