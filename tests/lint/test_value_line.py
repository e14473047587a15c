"""``File.value_line``: where a relation's or alias's name is written, one pass over the key's lines.

No wall-clock asserts: 28,000 names cost the old per-name scan 392 million line tests (20 s); the exact
lines of every written form are pinned.
"""

from __future__ import annotations

from conftest import TreeFactory

from retriever.config import Settings
from retriever.lint import tree as lint_tree
from retriever.lint.check import check
from retriever.memory.memory import Memory


def _file(make_tree: TreeFactory, front_matter: str) -> lint_tree.File:
    root = make_tree({"x.md": "---\ntitle: X\n" + front_matter + "---\n# X\n\nText.\n"})
    memory = Memory.open(root, Settings.from_env())
    (file,) = lint_tree.load(memory, frozenset()).files
    return file


def test_28_000_unknown_relations_are_each_reported_at_their_own_line(make_tree: TreeFactory) -> None:
    n = 28_000
    root = make_tree({"x.md": "---\ntitle: X\nrelated:\n" + "".join(f"- n{i:05d}\n" for i in range(n)) + "---\n# X\n"})
    findings = check(Memory.open(root, Settings.from_env()))
    found = [f for f in findings if f.rule == "unknown-relation"]
    assert [f.line for f in found] == [*range(4, 4 + 50), 4 + 50]  # the first 50 listed, then the rest counted
    assert found[-1].message.startswith(f"and {n - 50:,} more unknown-relation findings in this file")


def test_each_written_form_of_a_name_is_found_at_its_own_line(make_tree: TreeFactory) -> None:
    front_matter = (
        "related:\n"  # line 3: "a" is in "related", but the name is the item on line 5
        "  - ab\n"
        "  - a\n"
        "  - 'it''s'   # quoted, with a comment\n"
        '  - "b c"\n'
        "  - ab\n"  # written again: its first line stands
        "members: [\n"  # line 9
        "  x,\n"
        "  'y',\n"
        "]\n"
        "owner: solo\n"  # line 13: one line holds the whole value
        "aliases:\n"
        "  - folded \\\n"  # a name no line writes as an item: the first line containing it
        "  - zz\n"
    )
    file = _file(make_tree, front_matter)
    found = {name: file.value_line("related", name) for name in ("ab", "a", "it's", "b c", "nowhere")}
    assert found == {"ab": 4, "a": 5, "it's": 6, "b c": 7, "nowhere": 3}
    assert [file.value_line("members", name) for name in ("x", "y")] == [10, 11]
    assert file.value_line("owner", "solo") == file.value_line("owner", "anything") == 13
    assert file.value_line("aliases", "folded") == 15
    assert file.value_line("missing", "x") == 1
