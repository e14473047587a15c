"""``retriever init``: a new memory repository, ready to edit, lint and check in CI.

Contract: ``scaffold(target)`` writes ``FILES`` under ``target`` (which must not exist, or be an
empty folder of the user's own, else ``TargetNotEmpty`` / ``TargetNotOwned``; ``TargetTooLong`` for a
path over ``MAX_NEW_LEVELS`` new folders deep or too long for the system) and returns the files it wrote,
in order.  It never overwrites and never follows a symlink: every folder and file under
``target`` is created new (``mkdir`` that fails on an existing name, ``O_CREAT|O_EXCL|O_NOFOLLOW``), so
something that appears there while it writes stops it (``TargetChanged``) instead of being written
through.  The example documents name each other in their relation fields and link each other with
relative links, so the scaffold passes ``retriever check`` with no findings.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from pathlib import Path

from retriever.errors import InvalidArguments
from retriever.text.safe import preview

MAX_NEW_LEVELS = 64  # folders init makes above the tree: more is a mistyped (or hostile) path
FOLDERS = ("people", "teams", "projects", "decisions", "processes", "policies", "meetings", "glossary")
# Create, never open what is there: O_EXCL fails on any existing name (a symlink included) and O_NOFOLLOW
# says so again; O_BINARY keeps Windows from turning "\n" into "\r\n".  Both are missing on some systems.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


class TargetNotEmpty(InvalidArguments):
    """``retriever init`` never writes into a folder that already holds something."""


class TargetNotOwned(InvalidArguments):
    """``retriever init`` never writes into a folder that belongs to another user: they could swap its
    contents for links to your files while it writes."""


class TargetTooLong(InvalidArguments):
    """``retriever init`` makes at most ``MAX_NEW_LEVELS`` nested folders, in a path the system accepts."""


class TargetChanged(InvalidArguments):
    """Something appeared in the folder ``retriever init`` was filling; it stopped without touching it."""


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
        entry: retriever check --root .
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
      - run: retriever check --root . --format github
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


def scaffold(target: Path, source: str | None = None) -> list[Path]:
    """Write a new memory tree under ``target``; the files written, in order.

    ``source`` is where the CI workflow installs the retriever from unless the repository variable
    RETRIEVER_SOURCE says otherwise; without either, the workflow fails saying how to set it.  Raises
    ``TargetNotEmpty``, ``TargetNotOwned``, ``TargetTooLong`` or ``TargetChanged`` (see the module's
    contract); files written before a ``TargetChanged`` or ``TargetTooLong`` stay.
    """
    files = {**FILES, WORKFLOW_PATH: workflow(source)}  # a bad source stops it before anything is made
    try:
        _claim(target)
    except OSError as exc:
        raise _too_long(exc, target, "nothing was written") from None
    made = {target}
    written: list[Path] = []
    try:
        for rel_path, content in files.items():
            path = target / rel_path
            _make_folders(target, path.parent, made)
            _create(target, path, content)
            written.append(path)
    except OSError as exc:
        raise _too_long(exc, target, "the files written before it stay") from None
    return written


def _too_long(exc: OSError, target: Path, left: str) -> Exception:
    """``TargetTooLong`` naming the path (bounded) when ``exc`` says it is too long, else ``exc`` itself."""
    if exc.errno != errno.ENAMETOOLONG:
        return exc
    return TargetTooLong(
        f"cannot write {preview(str(exc.filename or target))}: {exc.strerror}; {left}: pass a shorter path"
    )


def _claim(target: Path) -> None:
    """Make ``target`` (and its missing parents), or accept it as it is: an empty folder of this user's.

    ``mkdir`` without ``exist_ok``: a folder made here is new, this user's and empty.  Otherwise
    ``TargetNotEmpty`` for anything but an empty folder (saying what it is when it is no folder) and
    ``TargetNotOwned`` for another user's (where the system has user ids).  ``TargetTooLong`` when more
    than ``MAX_NEW_LEVELS`` folders would be made, or the system finds the path too long.
    """
    try:
        _make_new(target)
        return
    except FileExistsError:
        if not os.path.lexists(target):
            raise  # a parent is a file: the OSError names it
    try:
        info = target.stat()  # follows a link: a link to your own empty folder is fine
    except OSError as exc:
        raise TargetNotEmpty(_not_a_folder(target, _unfollowable(exc))) from None  # dangling, or a loop
    if not stat.S_ISDIR(info.st_mode):
        raise TargetNotEmpty(_not_a_folder(target, _kind(info.st_mode)))
    if next(target.iterdir(), None) is not None:
        raise TargetNotEmpty(f"{target} already exists and is not empty; choose a new or empty folder")
    geteuid = getattr(os, "geteuid", None)  # files made here would be this (effective) user's
    if geteuid is not None and info.st_uid != geteuid():
        raise TargetNotOwned(
            f"{target} belongs to another user (uid {info.st_uid}), who could swap what init writes for links "
            f"to your files; nothing was written: pass a folder that does not exist yet (init creates it) or "
            f"one you own"
        )


def _make_new(target: Path) -> None:
    """Create ``target`` and its missing parents, top down (a loop: ``mkdir(parents=True)`` and
    ``os.makedirs`` recurse once per missing parent).  ``FileExistsError`` when ``target`` exists;
    ``TargetTooLong`` before anything is made when over ``MAX_NEW_LEVELS`` folders are missing."""
    missing: list[Path] = []
    folder = target
    while not os.path.lexists(folder) and folder.parent != folder:
        if len(missing) == MAX_NEW_LEVELS:
            raise TargetTooLong(
                f"cannot write {preview(str(target))}: init makes at most {MAX_NEW_LEVELS} new nested folders; "
                "nothing was written: pass a shorter path"
            )
        missing.append(folder)
        folder = folder.parent
    if not missing:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target))
    made: list[Path] = []
    try:
        for folder in reversed(missing[1:]):
            with contextlib.suppress(FileExistsError):  # a parent made meanwhile is fine, as with parents=True
                folder.mkdir()
                made.append(folder)
        target.mkdir()  # never exist_ok: a folder made here is new
    except OSError:
        for folder in reversed(made):  # e.g. the path grew too long halfway: leave no empty folders behind
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _not_a_folder(target: Path, what: str) -> str:
    return f"{target} already exists and is {what}, not a folder; choose a new or empty folder"


def _unfollowable(exc: OSError) -> str:
    """What a link ``stat`` cannot follow is, from the error following it gave."""
    if exc.errno == errno.ELOOP:
        return "a symlink that loops"
    if exc.errno == errno.ENOENT:
        return "a dangling symlink (it points to nothing)"
    return f"a symlink that cannot be followed ({exc.strerror})"


def _kind(mode: int) -> str:
    """What a file system entry that is no folder is, in a few words, from its ``st_mode``."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "something other than a file"


def _make_folders(target: Path, folder: Path, made: set[Path]) -> None:
    """Create ``folder`` and those between it and ``target`` not made yet, each new (``TargetChanged``
    when the name is already taken: a folder or link someone else put there)."""
    missing: list[Path] = []
    while folder not in made:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            raise _changed(target, folder) from None
        made.add(folder)


def _create(target: Path, path: Path, content: str) -> None:
    """Create ``path`` holding ``content``; ``TargetChanged`` when the name is taken (a symlink included)."""
    try:
        handle = os.open(path, _CREATE, 0o666)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ELOOP):  # ELOOP: O_NOFOLLOW met a link
            raise _changed(target, path) from None
        raise
    with os.fdopen(handle, "wb") as out:
        out.write(content.encode("utf-8"))


def _changed(target: Path, path: Path) -> TargetChanged:
    """The error for ``path`` found taken while ``target`` was being filled."""
    return TargetChanged(
        f"{path} appeared while init was filling {target} (another process is writing there); init stopped "
        f"and overwrote nothing: look at what is in {target}, then run init on a new folder you own"
    )
