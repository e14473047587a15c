"""Facts and relations as sentences: table rows, relation lines, the who-answer."""

from __future__ import annotations

from retriever.pipeline.assemble import summarize
from retriever.pipeline.phrasing import fact_sentence, relation_answer, relation_lines, unnamed_names
from retriever.pipeline.query import analyze
from retriever.pipeline.results import Entity, Fact, Relationship


def _fact(statement: str, title: str = "Billing Migration", cells: tuple[tuple[str, str], ...] = ()) -> Fact:
    return Fact(statement, 0.9, "m/b.md", "M > B", (1, 1), "b.md", None, title, 0, cells=cells)


RELATIONS = (
    Relationship("Billing Migration", "Olena Marchenko", "lead"),
    Relationship("Billing Migration", "Hannah Clarke", "follow_up_owner"),
    Relationship("Billing Migration", "Taras Kovalenko", "owner"),
    Relationship("Billing Migration", "Finance Handbook", "related"),
    Relationship("Billing Migration", "Plan", "links_to"),
    Relationship("Olena Marchenko", "Platform Team", "team"),
)


def test_a_table_row_reads_as_its_first_value_and_the_other_columns() -> None:
    cells = (("Step", "Send the DPA annex to Tom"), ("Owner", "Hannah Clarke"), ("Due", "2026-11-27"))
    row = _fact("Step: Send the DPA annex to Tom; Owner: Hannah Clarke; Due: 2026-11-27", cells=cells)
    assert fact_sentence(row) == "Send the DPA annex to Tom — owner Hannah Clarke, due 2026-11-27."


def test_upper_case_columns_keep_their_case_and_a_sentence_keeps_its_own_stop() -> None:
    row = _fact("Account: Helix; MRR: €48,000", cells=(("Account", "Helix"), ("MRR", "€48,000")))
    assert fact_sentence(row) == "Helix — MRR €48,000."
    assert fact_sentence(_fact("Is it done?")) == "Is it done?"
    assert fact_sentence(_fact("Owner: Olena;")) == "Owner: Olena."


def test_relation_lines_name_what_each_document_names_without_generic_links() -> None:
    entities = (Entity("Billing Migration", "project", {}), Entity("Olena Marchenko", "person", {}))
    assert relation_lines([_fact("x")], entities, RELATIONS) == [
        "**Billing Migration** (project): lead Olena Marchenko; follow-up owner Hannah Clarke; owner Taras Kovalenko",
        "**Olena Marchenko** (person): team Platform Team",
    ]


def test_relation_lines_end_with_the_entities_no_line_names() -> None:
    entities = (Entity("Olena Marchenko", "person", {}), Entity("Helix Health Systems", "organization", {}))
    assert relation_lines([_fact("x")], entities, RELATIONS)[-1] == (
        "Also named: **Helix Health Systems** (organization)"
    )
    assert relation_lines([_fact("x")], entities[1:], ()) == ["Also named: **Helix Health Systems** (organization)"]
    team = (Relationship("Team", "Ana Lima", "lead"),)
    assert relation_lines([_fact("x")], (Entity("Ana", "person", {}),), team)[-1] == "Also named: **Ana** (person)"


def test_a_who_question_is_answered_with_the_relation_it_names_first() -> None:
    facts = [_fact("Moving invoices")]
    assert relation_answer("Who owns the billing migration?", facts, RELATIONS) == (
        "Billing Migration: owner Taras Kovalenko, follow-up owner Hannah Clarke, lead Olena Marchenko."
    )
    assert relation_answer("Хто веде міграцію білінгу?", facts, RELATIONS) is not None


def test_a_question_that_asks_no_relation_gets_no_relation_answer() -> None:
    assert relation_answer("When does the billing migration end?", [_fact("x")], RELATIONS) is None
    assert relation_answer("Who owns it?", [], RELATIONS) is None
    assert relation_answer("Who owns it?", [_fact("x", title="Office")], RELATIONS) is None


def test_a_who_question_about_something_else_is_not_answered_with_the_documents_owner() -> None:
    facts = [_fact("Helix pays 42,000 a month")]
    assert relation_answer("Who are our main enterprise clients?", facts, RELATIONS) is None
    assert relation_answer("Who should I contact about the billing migration?", facts, RELATIONS) is not None
    assert relation_answer("Хто відповідає за міграцію білінгу?", facts, RELATIONS) is not None
    assert relation_answer("Who is the lead?", facts, RELATIONS) == (
        "Billing Migration: lead Olena Marchenko, owner Taras Kovalenko, follow-up owner Hannah Clarke."
    )


def test_a_responsibility_question_is_not_answered_with_a_meetings_attendees() -> None:
    met = (Relationship("Weekly sync", "Olena Marchenko", "attendees"),)
    assert relation_answer("Who is responsible for the restore test?", [_fact("x", title="Weekly sync")], met) is None
    asked = relation_answer("Who attended the weekly sync?", [_fact("x", title="Weekly sync")], met)
    assert asked == "Weekly sync: attendees Olena Marchenko."


def test_a_who_question_about_the_document_itself_is_answered_with_what_it_names() -> None:
    person = [_fact("VP Engineering", title="Olena Marchenko")]
    assert relation_answer("Who is Olena Marchenko?", person, RELATIONS) == "Olena Marchenko: team Platform Team."


def test_a_question_naming_a_document_and_its_relation_is_answered_from_it_wherever_its_facts_rank() -> None:
    facts = [_fact("Kateryna reports completion to Maksym.", title="Policies"), _fact("x", title="Kateryna Melnyk")]
    relations = (Relationship("Kateryna Melnyk", "Rui Costa", "reports_to"), *RELATIONS)
    assert relation_answer("Who does Kateryna Melnyk report to?", facts, relations) == (
        "Kateryna Melnyk: reports to Rui Costa."
    )
    # a document the question does not name keeps the best fact's document as the one answering
    assert relation_answer("Who does she report to?", facts, relations) is None


def test_a_folders_index_does_not_answer_who_owns_what_it_lists_unless_asked_about_itself() -> None:
    index = Fact("Northwind Retail — Tier 3", 0.9, "m/clients/README.md", "M > C", (1, 1), "clients/README.md", None,
                 "Client Organizations", 0)
    relations = (Relationship("Client Organizations", "Sofia Almeida", "owner"),)
    assert relation_answer("Who owns the Northwind Retail account?", [index], relations) is None
    assert relation_answer("Who owns the client organizations list?", [index], relations) == (
        "Client Organizations: owner Sofia Almeida."
    )


def test_a_line_of_fields_reads_as_its_documents_fields() -> None:
    line = _fact("Status: accepted · Date: 2026-04-15 · Decided by: Ana Ferreira, Rui Costa", title="DEC-0049")
    assert fact_sentence(line) == "DEC-0049 — status accepted; date 2026-04-15; decided by Ana Ferreira, Rui Costa."
    # a line with one field, or parts that are no fields, reads as written
    assert fact_sentence(_fact("Owner: Kateryna Melnyk")) == "Owner: Kateryna Melnyk."
    assert fact_sentence(_fact("People lead · Kyiv · k@example.com")) == "People lead · Kyiv · k@example.com."


def test_a_column_named_by_an_acronym_keeps_its_capitals_and_an_empty_cell_is_not_said() -> None:
    cells = (("Month", "October 2026"), ("AWS spend (EUR)", "56,300"), ("Status", "—"), ("iOS build", "ok"))
    row = _fact("Month: October 2026; AWS spend (EUR): 56,300; Status: —; iOS build: ok", cells=cells)
    assert fact_sentence(row) == "October 2026 — AWS spend (EUR) 56,300, iOS build ok."
    assert fact_sentence(_fact("Gate: Go; Status: —", cells=(("Gate", "Go"), ("Status", "—")))) == "Go."


def test_own_as_in_my_own_pocket_asks_no_owner() -> None:
    facts = [_fact("Submit receipts within 7 days", title="Billing Migration")]
    assert relation_answer("I paid out of my own pocket: how long do I have?", facts, RELATIONS) is None


def test_who_approves_is_not_answered_with_the_documents_owner() -> None:
    facts = [_fact("Conference trips need the manager and the budget owner", title="Billing Migration")]
    assert relation_answer("Who approves a conference trip?", facts, RELATIONS) is None


def test_a_row_naming_the_relation_asked_answers_it_before_the_documents_own_owner() -> None:
    cells = (("Line", "Cloud infrastructure"), ("Budget (EUR)", "640,000"), ("Budget owner", "Andriy Lysenko"))
    row = _fact("Line: Cloud infrastructure; …", title="Budget 2027", cells=cells)
    relations = (Relationship("Budget 2027", "Rui Costa", "owner"),)
    question = "What is the 2027 budget for cloud infrastructure and who owns that line?"
    assert relation_answer(question, [row], relations) is None
    assert relation_answer("Who owns the 2027 budget?", [row], relations) == "Budget 2027: owner Rui Costa."


def test_a_who_question_naming_a_document_by_its_alias_is_answered_with_that_documents_relation() -> None:
    owned = (
        Relationship("Helix Health Systems", "Hannah Clarke", "owner"),
        Relationship("Helix EU Data Residency", "Andriy Lysenko", "owner"),
    )
    facts = [
        _fact("Account: Helix Health Systems", title="Hannah Clarke"),
        _fact("Provision the cluster", title="Helix EU Data Residency"),
        _fact("A hospital network", title="Helix Health Systems"),
    ]
    aliases = {"Helix Health Systems": ("Helix", "HHS"), "Helix EU Data Residency": ("ch-helix-1",)}
    assert relation_answer("Who owns Helix?", facts, owned, aliases) == "Helix Health Systems: owner Hannah Clarke."
    # Without its aliases the question names no document: the best fact's, Hannah Clarke's page, has no relation.
    assert relation_answer("Who owns Helix?", facts, owned) is None


def test_an_alias_names_a_document_only_with_all_its_words_and_a_short_one_never() -> None:
    owned = (Relationship("Helix EU Data Residency", "Andriy Lysenko", "owner"),)
    facts = [_fact("Account: Helix", title="Hannah Clarke"), _fact("Provision", title="Helix EU Data Residency")]
    # "ch-helix-1" needs its "ch" and "1" as well as "helix"; "EU" alone (no word of three letters) names nothing.
    aliases = {"Helix EU Data Residency": ("ch-helix-1", "EU")}
    assert relation_answer("Who owns Helix?", facts, owned, aliases) is None
    assert relation_answer("Who owns the EU?", facts, owned, aliases) is None
    assert relation_answer("Who owns ch-helix-1?", facts, owned, aliases) == (
        "Helix EU Data Residency: owner Andriy Lysenko."
    )


def test_a_question_naming_a_document_by_a_word_still_needs_a_relation_it_asks_for() -> None:
    # "travel" names the travel policy, yet its owner approves no trip; a postmortem's attendees delayed nothing.
    travel = [_fact("Trips to Ukraine need the CEO's approval", title="Travel Policy")]
    owned = (Relationship("Travel Policy", "Rui Costa", "owner"),)
    aliases = {"Travel Policy": ("travel",), "Expenses": ("spending",), "INC-2026-031 Postmortem": ("INC-2026-031",)}
    assert relation_answer("Who approves travel to Ukraine?", travel, owned, aliases) is None
    spent = [_fact("Client dinners: up to €60 a head", title="Expenses")]
    assert relation_answer("What is the spending limit for a client dinner?", spent, (
        Relationship("Expenses", "Rui Costa", "owner"),), aliases) is None
    met = (Relationship("INC-2026-031 Postmortem", "Olena Marchenko", "attendees"),)
    late = [_fact("Dashboards lagged 3 h 40 min", title="INC-2026-031 Postmortem")]
    assert relation_answer("How long were client dashboards delayed during INC-2026-031?", late, met, aliases) is None
    # a question naming no document asks nothing of the best fact's: "HR" is only mentioned there
    assert relation_answer("Who is HR?", [_fact("HR books flights", title="Travel Policy")], owned, aliases) is None
    assert relation_answer("Who is it?", travel, owned, aliases) is None
    # asking who it is, or the relation itself, still answers
    assert relation_answer("Who owns travel?", travel, owned, aliases) == "Travel Policy: owner Rui Costa."
    assert relation_answer("Who attended INC-2026-031?", late, met, aliases) == (
        "INC-2026-031 Postmortem: attendees Olena Marchenko."
    )


def test_who_runs_a_thing_is_the_lead_of_the_document_named_after_it_not_the_best_facts_owner() -> None:
    facts = [
        _fact("Economic buyer: the person who signs the budget", title="Sales and Customer Success Terms"),
        _fact("Average sales cycle, Tier 1: 142 days.", title="Revenue Team"),
    ]
    relations = (
        Relationship("Sales and Customer Success Terms", "Sofia Almeida", "owner"),
        Relationship("Revenue Team", "Miguel Santos", "lead"),
        Relationship("Revenue Team", "João Pereira", "members"),
    )
    aliases = {"Revenue Team": ("sales", "sales team", "GTM")}
    assert relation_answer("Who runs sales?", facts, relations, aliases) == "Revenue Team: lead Miguel Santos."


def test_a_relation_with_several_names_says_its_label_once() -> None:
    met = tuple(Relationship("Weekly sync", name, "attendees") for name in ("Olena", "Hannah", "Taras"))
    facts = [_fact("x", title="Weekly sync")]
    assert relation_answer("Who attended the weekly sync?", facts, met) == (
        "Weekly sync: attendees Olena, Hannah and Taras."
    )
    assert relation_lines(facts, (), (*met, Relationship("Weekly sync", "Olena", "owner"))) == [
        "**Weekly sync**: attendees Olena, Hannah and Taras; owner Olena"
    ]


def test_the_names_a_question_asks_about_that_the_leading_facts_do_not_hold_are_named() -> None:
    warsaw = [_fact("Rejected. We stay remote-first with two offices.", title="DEC-0050 — Open a Warsaw Office")]
    asked = analyze("What did we decide about opening a Berlin office?")
    assert unnamed_names(asked, warsaw) == ["Berlin"]  # "What" opens the sentence: no name
    assert unnamed_names(analyze("What did we decide about the Warsaw office?"), warsaw) == []
    assert unnamed_names(asked, []) == []


def test_a_summary_says_first_that_its_leading_facts_do_not_name_what_was_asked() -> None:
    warsaw = (_fact("Rejected. We stay remote-first with two offices.", title="DEC-0050 — Open a Warsaw Office"),)
    summary = summarize(warsaw, "partial", "What did we decide about opening a Berlin office?")
    assert summary.startswith("The leading facts do not name Berlin. Rejected.")
    assert summarize(warsaw, "partial", "Що вирішили щодо офісу в Берліні? А Berlin?").startswith(
        "Провідні факти не згадують Berlin."
    )


MATRIX = (("", "Support"), ("Starter", "email, 8 business hours"), ("Growth", "Slack, 4 hours"), ("Enterprise", "CSM"))


def test_a_matrix_row_names_the_column_asked_about_first_and_parts_cells_that_hold_commas() -> None:
    row = _fact("Support; Starter: email, 8 business hours; Growth: Slack, 4 hours; Enterprise: CSM", cells=MATRIX)
    assert fact_sentence(row, frozenset({"enterpris", "support"})) == (
        "Support — enterprise CSM; starter email, 8 business hours; growth Slack, 4 hours."
    )
    assert fact_sentence(row).startswith("Support — starter email, 8 business hours; growth")  # nothing asked


def test_the_columns_of_a_table_whose_first_column_is_named_keep_their_order() -> None:
    cells = (("Add-on", "Extra seat"), ("Price / month", "€60"), ("Available on", "Growth"))
    row = _fact("Add-on: Extra seat; Price / month: €60; Available on: Growth", cells=cells)
    assert fact_sentence(row, frozenset({"avail"})) == "Extra seat — price / month €60, available on Growth."
