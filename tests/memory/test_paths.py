"""How sections are named to readers: source and tree paths as pure functions of strings."""

from __future__ import annotations

from retriever.memory.paths import folder_titles, source_path, tree_path


def test_the_source_path_puts_the_root_folder_first() -> None:
    assert source_path("company_context", "financials/mrr.md") == "company_context/financials/mrr.md"


def test_the_tree_path_reads_root_folders_title_and_headings() -> None:
    path = tree_path("company_context", "financials/active_accounts_mrr.md", "Active Accounts MRR", ("Headline",))
    assert path == "Company Context > Financials > Active Accounts MRR > Headline"


def test_a_folders_index_file_titles_its_folder_and_an_unknown_title_is_the_file_name() -> None:
    assert tree_path("memory", "teams/README.md", "Teams overview") == "Memory > Teams"
    assert tree_path("memory", "README.md", "About") == "Memory > About"  # the root's own README keeps its title
    assert tree_path("memory", "teams/platform_team.md", None) == "Memory > Teams > Platform Team"
    assert folder_titles("a_b/c-d/e.md") == ["A B", "C D"]
