"""What ``retriever init`` writes: a README, one example document of each type, the check's settings, a pre-commit
hook and a CI workflow (``FILES``, path → text).  Data, not code, but for ``workflow(source)``, which fills the
workflow's default source and refuses one that could break out of its YAML.  The example documents name each other
in their relation fields and link each other with relative links, so the scaffold passes ``retriever check``.
"""

from __future__ import annotations

import re

from retriever.errors import InvalidArguments

README = """\
---
type: topic
title: Company Memory
summary: What this memory is, where things go, and the conventions every document follows.
tags: [handbook, conventions]
---

# Company Memory

This folder is the company's shared memory: who we are, who does what, what we decided and why,
and how we run things. Everything is plain markdown, changed through pull requests, and searched
by the retriever when someone asks "what do we know about X?". The documents in the topic folders
are examples written by `retriever init`: edit them into real ones or delete them.

## Folders

Folders are topics. Put each document in the folder of its `type`:

| Folder | What lives there | type |
|---|---|---|
| [people/](people/) | One file per person: role, team, manager, contact | `person` |
| [teams/](teams/) | One file per team: mission, members, lead, projects | `team` |
| [projects/](projects/) | One file per project: goal, lead, milestones, risks | `project` |
| [decisions/](decisions/) | Numbered decision records (`dec_0001_short_name.md`) | `decision` |
| [processes/](processes/) | How recurring work is done, step by step | `process` |
| [policies/](policies/) | Rules that apply to everyone | `policy` |
| [meetings/](meetings/) | Dated notes (`YYYY-MM-DD_topic.md`) with decisions and action items | `meeting` |
| [glossary/](glossary/) | Internal terms and acronyms | `glossary` |

File names are lowercase `snake_case.md`. Hidden files and folders are ignored, and so is anything
`.gitignore` excludes.

## Front matter

Every document starts with a YAML block between `---` lines:

```yaml
---
type: project
title: Billing Migration
aliases: [Stripe migration, billing project]
summary: Move invoicing to Stripe Billing by 2026-04-30.
owner: Maria Lopez
lead: Maria Lopez
team: Platform Team
tags: [billing, stripe]
created: 2026-01-08
updated: 2026-01-20
related: [DEC-0001 — Move Billing to Stripe]
---
```

| Field | Meaning |
|---|---|
| `title` | The document's name. Relation fields refer to documents by this exact title |
| `type` | What it is: a type from the folder table, or `organization`, `topic`, `product`, `strategy`, `document` |
| `aliases` | Other names people use for it; no two documents may share a title or alias |
| `summary` | One sentence |
| `owner` | The person who keeps the document true (the title of a person document) |
| `tags` | Free-form list; quote numbers (`"2027"`) |
| `created`, `updated`, `date` | ISO dates (`2026-01-15`); `date` is a meeting's or decision's date |

## Relation fields

Relation fields name other documents by title (or alias, or file path). The retriever turns them
into relationships between entities, and `retriever check` warns when a name matches no document.

| Field | Used on | Names |
|---|---|---|
| `team`, `reports_to`, `manager` | people | the team, the manager |
| `lead`, `members`, `projects` | teams | people, projects |
| `lead`, `team`, `client` | projects | a person, a team, an organization |
| `decided_by`, `supersedes`, `superseded_by` | decisions | people, other decisions |
| `attendees` | meetings | people |
| `owner`, `related` | any | a person; any related documents |

In the text, link with relative links such as `[Maria Lopez](../people/maria_lopez.md)`.

A newer decision says which one it replaces with `supersedes: DEC-0008` (`replaces` reads the same); the older
one may say `superseded_by: DEC-0009` (or `replaced_by`) or `status: superseded` (`replaced`, `obsolete`). A
superseded record is still cited, ranked below its successor and marked superseded; other `status` values
(`accepted`, `proposed`, `deprecated`) change nothing.

## Sections

Headings split a document into sections, and the retriever cites facts by section and line. Give
every heading some text under it, keep one topic per file, and write facts: names, numbers, dates
and owners.

## Checking the memory

`retriever check` lints the tree: files the retriever cannot read, fields of the wrong type, unknown
types, broken links, links starting with `/` (write them relative), front-matter keys set twice,
names used twice, empty files and sections, and relation values that name no document. Each finding
says how to fix it. It exits with 1 when there are findings.

```bash
retriever check --root .                  # one line per finding
retriever check --root . --format json    # for scripts
retriever check --root . --format github  # GitHub Actions annotations
```

- `.pre-commit-config.yaml` runs it before each commit: `pip install pre-commit && pre-commit install`.
- `.github/workflows/memory-check.yml` runs it on every push and pull request.
- `.retriever.toml` turns rules off (`disable = ["empty-section"]`) or adds document types
  (`types = ["customer_story"]`) under `[check]`; `[tool.retriever.check]` in a `pyproject.toml`
  works too.

If this folder lives inside a larger repository, move those two files to the repository's root and
change `--root .` to the folder's path.
"""

PERSON = """\
---
type: person
title: Maria Lopez
aliases: [Maria, ML]
summary: Engineering Manager of the Platform Team in Lisbon; leads the Billing Migration and owns Incident Response.
role: Engineering Manager, Platform
email: maria.lopez@example.com
location: Lisbon, Portugal
team: Platform Team
owner: Maria Lopez
tags: [engineering, platform, lisbon]
created: 2026-01-05
updated: 2026-01-20
related: [Billing Migration, Incident Response]
---

# Maria Lopez

**Engineering Manager, Platform** · Lisbon · `maria.lopez@example.com`

Maria joined in 2023 and leads the [Platform Team](../teams/platform_team.md). She is the lead of the
[Billing Migration](../projects/billing_migration.md) and owns
[Incident Response](../processes/incident_response.md).

## Responsibilities

- Runs the Platform Team's weekly planning and one-to-ones.
- Approves production database changes.
- Is the escalation point for SEV-1 incidents during working hours.

## How to reach her

Slack `#platform` for anything urgent, email for everything else. Office hours on Thursdays, 14:00–15:00.
"""

TEAM = """\
---
type: team
title: Platform Team
aliases: [Platform, platform engineering]
summary: Runs the infrastructure, billing systems and on-call rotation that every product team builds on.
lead: Maria Lopez
members: [Maria Lopez]
projects: [Billing Migration]
owner: Maria Lopez
tags: [team, engineering, infrastructure]
created: 2026-01-05
updated: 2026-01-20
related: [Incident Response, On-Call Policy]
---

# Platform Team

The Platform Team keeps production running and moves shared systems forward. Lead:
[Maria Lopez](../people/maria_lopez.md).

## Mission

Make shipping safe and boring: reliable infrastructure, fast deploys, and billing that never loses an invoice.

## Members

| Person | Role | Location |
|---|---|---|
| Maria Lopez | Engineering Manager | Lisbon |

## Current projects

- [Billing Migration](../projects/billing_migration.md): move invoicing to Stripe by 2026-04-30.

## Rituals

- Weekly planning on Mondays at 10:00 ([latest notes](../meetings/2026-01-15_platform_weekly.md)).
- On-call handover on Fridays at 15:00, as the [On-Call Policy](../policies/on_call.md) sets out.
"""

PROJECT = """\
---
type: project
title: Billing Migration
aliases: [Stripe migration, billing project]
summary: Move invoicing and subscriptions from the in-house billing service to Stripe Billing by 2026-04-30.
lead: Maria Lopez
team: Platform Team
status: active
priority: high
owner: Maria Lopez
tags: [project, billing, stripe]
created: 2026-01-08
updated: 2026-01-20
related: [DEC-0001 — Move Billing to Stripe, Platform Weekly 2026-01-15]
---

# Billing Migration

Move all invoicing and subscriptions to Stripe Billing, as decided in
[DEC-0001](../decisions/dec_0001_move_billing_to_stripe.md). Lead: Maria Lopez.

## Goal

Every customer is invoiced from Stripe by 2026-04-30, with no invoice lost or sent twice.

## Milestones

| Milestone | Due | Status |
|---|---|---|
| Customer and plan data mirrored in Stripe | 2026-02-15 | done |
| New customers billed from Stripe | 2026-03-15 | in progress |
| Existing customers moved at renewal | 2026-04-30 | planned |

## Risks

- Proration differs between the old service and Stripe; Finance checks the first 50 invoices by hand.
"""

DECISION = """\
---
type: decision
title: DEC-0001 — Move Billing to Stripe
aliases: [DEC-0001, Stripe decision]
id: DEC-0001
status: accepted
date: 2026-01-07
decided_by: [Maria Lopez]
summary: Bill every customer from Stripe Billing and retire the in-house billing service once all have moved.
owner: Maria Lopez
tags: [decision, billing, architecture]
created: 2026-01-07
updated: 2026-01-07
related: [Billing Migration, Platform Team]
---

# DEC-0001 — Move Billing to Stripe

**Status:** accepted · **Date:** 2026-01-07 · **Decided by:** Maria Lopez

## Context

The in-house billing service takes about two engineer-days a month to keep running and cannot
bill usage-based plans.

## Decision

Use Stripe Billing for invoices, subscriptions and dunning. The old service stays read-only for audits.

## Consequences

- The [Billing Migration](../projects/billing_migration.md) moves every customer by 2026-04-30.
- Finance reconciles payouts in Stripe from February 2026.

## Alternatives considered

- Keep the in-house service and add usage-based plans: rejected, about three months of work.
"""

PROCESS = """\
---
type: process
title: Incident Response
aliases: [incident process, SEV levels]
summary: How we declare, run and close production incidents, from the first page to the postmortem.
owner: Maria Lopez
team: Platform Team
tags: [process, incidents, reliability]
created: 2026-01-10
updated: 2026-01-18
related: [On-Call Policy, Glossary]
---

# Incident Response

Anyone can declare an incident. When in doubt, declare one: closing a false alarm costs minutes.

## Severity levels

| Level | Meaning | First response |
|---|---|---|
| SEV-1 | Customers cannot use the product | 15 minutes, any time |
| SEV-2 | A major feature is broken | 1 hour, working hours |
| SEV-3 | A minor problem with a workaround | next working day |

## Steps

1. Open a channel named `#inc-YYYY-MM-DD-topic` and post what you see.
2. The on-call engineer becomes incident lead (see the [On-Call Policy](../policies/on_call.md)).
3. Post an update every 30 minutes until the incident is resolved.
4. Write a postmortem within five working days for every SEV-1 and SEV-2.
"""

POLICY = """\
---
type: policy
title: On-Call Policy
aliases: [on-call, pager duty]
summary: Who is on call and for how long, how fast pages are answered, and how on-call time is compensated.
owner: Maria Lopez
team: Platform Team
tags: [policy, on-call, reliability]
created: 2026-01-10
updated: 2026-01-18
related: [Incident Response, Platform Team]
---

# On-Call Policy

Applies to every engineer in the Platform Team.

## Rotation

Engineers take one-week shifts, handed over on Fridays at 15:00.

## Response times

Acknowledge a SEV-1 page within 15 minutes and a SEV-2 page within one hour. The levels are defined in
[Incident Response](../processes/incident_response.md).

## Compensation

Each on-call week earns one day off, to be taken within the following month.
"""

MEETING = """\
---
type: meeting
title: Platform Weekly 2026-01-15
summary: Billing Migration status, the first Stripe invoices, and the on-call handover.
date: 2026-01-15
attendees: [Maria Lopez]
owner: Maria Lopez
team: Platform Team
tags: [meeting, platform, weekly]
created: 2026-01-15
updated: 2026-01-15
related: [Billing Migration, DEC-0001 — Move Billing to Stripe]
---

# Platform Weekly 2026-01-15

Attendees: Maria Lopez.

## Notes

- Customer and plan data is mirrored in Stripe; 3 plans still need manual mapping.
- Finance asked for the first 50 Stripe invoices as a CSV, to compare with the old service.

## Decisions

- New customers are billed from Stripe from 2026-03-15 (see [Billing Migration](../projects/billing_migration.md)).

## Action items

| Owner | Action | Due |
|---|---|---|
| Maria Lopez | Map the 3 remaining plans | 2026-01-22 |
"""

GLOSSARY = """\
---
type: glossary
title: Glossary
aliases: [terms, company glossary]
summary: Words and abbreviations we use internally, with one-line definitions.
owner: Maria Lopez
tags: [glossary, terminology]
created: 2026-01-05
updated: 2026-01-18
related: [Incident Response]
---

# Glossary

One row per term. Write an acronym as "MRR (monthly recurring revenue)" and the retriever learns it,
so a question about recurring revenue also finds MRR.

## Terms

| Term | Meaning |
|---|---|
| MRR (monthly recurring revenue) | Subscription revenue per month, without one-off fees |
| SEV-1 | The highest incident severity; see [Incident Response](../processes/incident_response.md) |
| Handover | The Friday meeting where on-call passes to the next engineer |
"""

PRE_COMMIT = """\
# pre-commit hooks for this memory tree (https://pre-commit.com).
# Install once: pip install pre-commit && pre-commit install
repos:
  - repo: local
    hooks:
      - id: retriever-check
        name: retriever check (lint the memory tree)
        # Errors block a commit; warnings (a meeting's outside attendee with no page) are listed and let it pass.
        entry: retriever check --root . --fail-on error
        language: system
        pass_filenames: false
        # Every commit: pre-commit passes no deleted file, so a commit that only deletes a document (and breaks
        # the links to it) would otherwise run no check at all.
        always_run: true
"""

WORKFLOW_TEMPLATE = """\
name: memory-check

on:
  push:
  pull_request:

jobs:
  check:
    runs-on: ubuntu-latest
    env:
      # Where pip installs the retriever from: a git URL (git+https://host/org/repo@tag), a package
      # name or a wheel's URL. Set the repository variable RETRIEVER_SOURCE (Settings > Secrets and
      # variables > Actions > Variables) to override the default written by `retriever init`.
      RETRIEVER_SOURCE: "${{{{ vars.RETRIEVER_SOURCE || '{source}' }}}}"
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Install the retriever
        run: |
          if [ -z "$RETRIEVER_SOURCE" ]; then
            echo "::error::Set the repository variable RETRIEVER_SOURCE to where pip installs the retriever from, e.g. git+https://github.com/ORG/company-memory-retriever@v0.1.0"
            exit 1
          fi
          python -m pip install "$RETRIEVER_SOURCE"
      # Errors fail the job; warnings are annotations. Drop --fail-on error to fail on warnings too.
      - run: retriever check --root . --format github --fail-on error
"""
_SOURCE = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._~:/?#@!$&()*+,;=%<>=-]*")  # no quotes, braces or newlines


def workflow(source: str | None = None) -> str:
    """The CI workflow; ``source`` (a pip requirement) is its default when RETRIEVER_SOURCE is not set.

    Raises ``InvalidArguments`` for a source that could break out of the YAML or the expression.
    """
    if source and (len(source) > 500 or not _SOURCE.fullmatch(source)):
        raise InvalidArguments(
            f"--source {source[:80]!r} is not a pip requirement this workflow can hold (no quotes, braces, "
            "backslashes or line breaks); pass e.g. git+https://github.com/ORG/company-memory-retriever@v0.1.0"
        )
    return WORKFLOW_TEMPLATE.format(source=source or "")


WORKFLOW = workflow()

CONFIG = """\
# Settings for `retriever check` (see README.md).
[check]
# Rules to turn off, e.g. ["empty-section"].
disable = []
# Document types besides the built-in ones, e.g. ["customer_story"].
types = []
"""

WORKFLOW_PATH = ".github/workflows/memory-check.yml"
FILES: dict[str, str] = {
    "README.md": README,
    "people/maria_lopez.md": PERSON,
    "teams/platform_team.md": TEAM,
    "projects/billing_migration.md": PROJECT,
    "decisions/dec_0001_move_billing_to_stripe.md": DECISION,
    "processes/incident_response.md": PROCESS,
    "policies/on_call.md": POLICY,
    "meetings/2026-01-15_platform_weekly.md": MEETING,
    "glossary/glossary.md": GLOSSARY,
    ".retriever.toml": CONFIG,
    ".pre-commit-config.yaml": PRE_COMMIT,
    WORKFLOW_PATH: WORKFLOW,
}
