"""The C++ lines a branch changes follow .clang-format (Google style, 120 columns), checked the way
clang-format-diff checks a patch: only the lines added or changed since the merge base with `main`
(committed or not) are looked at, so that the check never asks to reformat code nobody touched.

The base is `git merge-base HEAD main` (else `origin/main`); on main itself, or in a clone without
either branch or without git, there is nothing to compare and the check passes. clang-format-14's
clang-format-diff (Debian package clang-format-14, installed by scripts/install-deps) does the work;
its output is the patch that would format the changed lines, shown when the test fails. To apply it:
  git diff -U0 --no-color $(git merge-base HEAD main) -- '*.cpp' '*.hpp' '*.h' '*.cu' | clang-format-diff-14 -p1 -i
"""
import pathlib
import shutil
import subprocess
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ["*.cpp", "*.hpp", "*.h", "*.cu"]


def git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def merge_base():
    """The commit the branch started from, or None when there is no main to compare with."""
    if shutil.which("git") is None or git("rev-parse", "--git-dir").returncode != 0:
        return None
    for branch in ("main", "origin/main"):
        base = git("merge-base", "HEAD", branch)
        if base.returncode == 0:
            return base.stdout.strip()
    return None


def tool(*names):
    return next((found for name in names if (found := shutil.which(name))), None)


class FormatOfChangedLines(unittest.TestCase):
    def test_changed_lines_are_formatted(self):
        base = merge_base()
        if base is None:
            self.skipTest("no git checkout with a main branch: nothing to compare")
        format_diff = tool("clang-format-diff-14", "clang-format-diff")
        binary = tool("clang-format-14", "clang-format")
        if format_diff is None or binary is None:
            self.fail("clang-format-diff-14 not found: install clang-format-14 (scripts/install-deps does)")
        patch = git("diff", "-U0", "--no-color", "--no-ext-diff", base, "--", *SOURCES)
        self.assertEqual(patch.returncode, 0, patch.stderr)
        if not patch.stdout:
            return
        fixes = subprocess.run([format_diff, "-p1", "-binary", binary, "-iregex", r".*\.(cpp|hpp|h|cu)"],
                               cwd=ROOT, input=patch.stdout, capture_output=True, text=True)
        self.assertEqual(fixes.returncode, 0, fixes.stderr)
        self.assertEqual(fixes.stdout, "", "changed lines that .clang-format would write otherwise (the patch "
                                           "below formats them; see this file's docstring to apply it):\n" + fixes.stdout)


if __name__ == "__main__":
    unittest.main()
