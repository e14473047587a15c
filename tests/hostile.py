"""Hostile files from issue 9, each built into a memory tree by a small function.

Shared by ``tests/memory/test_hostile_tree.py`` and ``scripts/bench_hostile.py`` (which measures each
one alone, before and after the fixes).  ``Hostile.path`` is the path ``Memory.skipped`` lists
for it (None when the file is harmless once parsing is linear and is simply indexed), and
``Hostile.reason`` a phrase its reason must contain.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DEEP_FOLDERS = 2000


@dataclass(frozen=True)
class Hostile:
    name: str
    build: Callable[[Path], None]
    path: str | None
    reason: str = ""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def symlink_loop(root: Path) -> None:
    os.symlink("loop_b.md", root / "loop_a.md")
    os.symlink("loop_a.md", root / "loop_b.md")


def bad_name(root: Path) -> None:
    fd = os.open(os.path.join(os.fsencode(root), b"bad\xff\xfe.md"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.write(fd, b"# Bad name\n\nThe name is not UTF-8.\n")
    os.close(fd)


def toml_deep(root: Path) -> None:
    _write(root, "toml_deep.md", "+++\na = " + "[" * 5000 + "]" * 5000 + "\n+++\n# Deep TOML\n")


def yaml_deep(root: Path) -> None:
    _write(root, "yaml_deep.md", "---\na: " + "[" * 900 + "]" * 900 + "\n---\n# Deep YAML\n")


def yaml_bomb(root: Path) -> None:
    names = "abcdefghi"
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"{n}: &{n} [" + ", ".join([f"*{p}"] * 9) + "]" for p, n in itertools.pairwise(names)]
    _write(root, "yaml_bomb.md", "---\n" + "\n".join(lines) + "\n---\n# Alias bomb\n")


def deep_folders(root: Path) -> None:
    """``deep/d/d/…`` 2,000 levels with a document at the bottom (paths past PATH_MAX: built with dir fds)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in ["deep"] + ["d"] * (DEEP_FOLDERS - 1):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        doc = os.open("bottom.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(doc, b"# Bottom\n\nToo deep to matter.\n")
        os.close(doc)
    finally:
        os.close(fd)


def remove_deep_folders(root: Path) -> None:
    """Remove what ``deep_folders`` built, bottom up, without recursion (``shutil.rmtree`` recurses)
    and holding two folder handles at most (2,000 would pass a CI box's open-file limit)."""
    if not (root / "deep").is_dir():
        return
    fd = os.open(root / "deep", os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(DEEP_FOLDERS - 1):
        child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
    os.unlink("bottom.md", dir_fd=fd)
    for _ in range(DEEP_FOLDERS - 1):
        parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = parent
        os.rmdir("d", dir_fd=fd)
    os.close(fd)
    os.rmdir(root / "deep")


def links_40k(root: Path) -> None:
    _write(root, "links_40k.md", "[a](b" * 8000 + "\n")


def links_1500k(root: Path) -> None:
    _write(root, "links_1500k.md", "[a](b" * 300_000 + "\n")


def headings(root: Path) -> None:
    _write(root, "headings.md", "# \n" * 600_000)


def many_headings(root: Path) -> None:
    _write(root, "many_headings.md", "# h\n" * 150_000)


def fifo(root: Path) -> None:
    os.mkfifo(root / "pipe.md")


def unix_socket(root: Path) -> None:
    """A socket file named like markdown (the socket itself is closed; the file stays)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        here = os.getcwd()
        os.chdir(root)  # a relative bind keeps the address under the 108-byte AF_UNIX limit
        try:
            sock.bind("sock.md")
        finally:
            os.chdir(here)


def random_words(root: Path) -> None:
    # 19,000 distinct 99-letter words (1.9 MB): each is split into word pieces for its meaning vector,
    # which is quadratic in a word's length without the splitter's bounds.
    rng = random.Random(7)
    words = ["".join(rng.choice("qxzjv") for _ in range(99)) for _ in range(19_000)]
    lines = [" ".join(words[i : i + 10]) for i in range(0, len(words), 10)]
    _write(root, "random_words.md", "# Random words\n\n" + "\n".join(lines) + "\n")


HOSTILE: tuple[Hostile, ...] = (
    Hostile("symlink loop", symlink_loop, "loop_a.md", "symlink loop"),
    Hostile("invalid UTF-8 file name", bad_name, "bad\\xff\\xfe.md", "not valid UTF-8"),
    Hostile("TOML nested 5,000 deep", toml_deep, "toml_deep.md", "nested too deeply"),
    Hostile("YAML nested 900 deep", yaml_deep, "yaml_deep.md", "nested too deeply"),
    Hostile("YAML alias bomb", yaml_bomb, "yaml_bomb.md", "aliases"),
    Hostile("2,000 nested folders", deep_folders, "deep/" + "d/" * 63 + "d", "nested deeper than 64"),
    Hostile("[a](b × 8,000 (40 KB)", links_40k, None),
    Hostile("[a](b × 300,000 (1.5 MB)", links_1500k, None),
    Hostile("1.8 MB of '# ' lines", headings, "headings.md", "more than 200,000 lines"),
    Hostile("150,000 '# h' headings (600 KB)", many_headings, "many_headings.md", "more than 5,000 headings"),
    Hostile("FIFO", fifo, "pipe.md", "FIFO"),
    Hostile("socket", unix_socket, "sock.md", "socket"),
    Hostile("19,000 random 99-letter words (1.9 MB)", random_words, None),
)
