"""README's command table lists every subcommand of the CLI and every one of its flags, with
`dnnsim COMMAND --help` as the source of truth, so that a flag added to the CLI cannot be left out
of the table.

The rule: for every subcommand path P that `--help` lists (`run`, `calibrate convergence`, ...), the
table of README's "The command line" section has at least one row whose command cell starts with
`dnnsim P` (a command that only groups subcommands, with no option or positional of its own, such as
`model`, needs none); every option of `dnnsim P --help` but `--help` appears in those rows' command
cells under one of its names (`-v` or `--verbose`), and so does every value a positional argument is
limited to (`dnnsim list gpus|links|…|options`). The top level's own options appear in the row of
`dnnsim --version`.
Run by ctest with DNNSIM_CLI set to the dnnsim executable.
"""
import os
import pathlib
import re
import subprocess
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = os.environ.get("DNNSIM_CLI", str(ROOT / "build" / "release" / "sim" / "dnnsim"))


def help_text(path):
    return subprocess.run([CLI, *path, "--help"], capture_output=True, text=True, check=True).stdout


def sections(text):
    """The blocks of a CLI11 help text by their heading ("Options:", "Subcommands:", ...)."""
    blocks, current = {}, None
    for line in text.splitlines():
        if re.fullmatch(r"[A-Z][A-Za-z]*:", line):
            current = line[:-1]
            blocks[current] = []
        elif current and line.strip():
            blocks[current].append(line)
    return blocks


def subcommands(text):
    return [line.split()[0] for line in sections(text).get("Subcommands", []) if line.startswith("  ") and
            not line.startswith("   ")]


def options(text):
    """Each option's names, from the lines that start an option ("  -v,--verbose  …")."""
    found = []
    for line in sections(text).get("Options", []):
        match = re.match(r"  (-[\w-]+(?:,-[\w-]+)*)", line)
        if match:
            names = match.group(1).split(",")
            if "--help" not in names:
                found.append(names)
    return found


def positional_choices(text):
    choices = []
    for line in sections(text).get("Positionals", []):
        match = re.search(r"TEXT:\{([^}]*)\}", line)
        if match:
            choices += match.group(1).split(",")
    return choices


def command_cells():
    """The command cells of the table under README's "## The command line"."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The command line", 1)[1].split("\n## ", 1)[0]
    return [line.split(" | ")[0].lstrip("| ").strip() for line in section.splitlines() if line.startswith("| `dnnsim")]


def rows_of(cells, path, children=()):
    """The rows of `dnnsim PATH`, not those of its subcommands `children`."""
    prefix = "`dnnsim" + "".join(" " + p for p in path)
    rows = [cell for cell in cells if re.match(re.escape(prefix) + r"(?=[\s`\[\\])", cell)]
    return [cell for cell in rows if (cell[len(prefix):].split() or [""])[0].strip("`") not in children]


def mentions(cells, word):
    return any(re.search(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])", cell) for cell in cells)


class ReadmeCommands(unittest.TestCase):
    def test_the_table_is_found(self):
        cells = command_cells()
        self.assertGreater(len(cells), 5)
        self.assertEqual(rows_of(["`dnnsim run SCENARIO`", "`dnnsim runner`"], ["run"]), ["`dnnsim run SCENARIO`"])
        self.assertEqual(rows_of(["`dnnsim calibrate [--quick]`", "`dnnsim calibrate convergence [--quick]`"],
                                 ["calibrate"], ["convergence"]), ["`dnnsim calibrate [--quick]`"])
        self.assertTrue(mentions(["`dnnsim regress [-v]`"], "-v"))
        self.assertFalse(mentions(["`dnnsim regress [--verbose-all]`"], "--verbose"))

    def test_every_subcommand_and_flag_is_in_the_table(self):
        cells = command_cells()
        missing = []
        top = help_text([])
        for names in options(top):
            if not any(mentions(rows_of(cells, ["--version"]), n) for n in names):
                missing.append(f"dnnsim {names[-1]}")
        queue = [[name] for name in subcommands(top)]
        while queue:
            path = queue.pop(0)
            text = help_text(path)
            rows = rows_of(cells, path, subcommands(text))
            command = "dnnsim " + " ".join(path)
            children = subcommands(text)
            if not rows and (options(text) or positional_choices(text) or not children):  # not a mere group
                missing.append(f"{command}: no row")
            for names in options(text):
                if not any(mentions(rows, n) for n in names):
                    missing.append(f"{command} {names[-1]}")
            for choice in positional_choices(text):
                if not mentions(rows, choice):
                    missing.append(f"{command} {choice}")
            queue += [path + [name] for name in children]
        self.assertEqual(missing, [], "README's command table (## The command line) lacks:\n" + "\n".join(missing))


if __name__ == "__main__":
    unittest.main()
