"""A small memory tree whose rankings the tests know exactly."""

from __future__ import annotations

ACME: dict[str, str] = {
    "people/olena_marchenko.md": """---
type: person
title: Olena Marchenko
aliases: [Olena, OM]
role: Head of Platform
email: olena.marchenko@acme.test
team: Platform Team
---
# Olena Marchenko

Olena leads the Platform Team from Kyiv.

## Responsibilities

- Owns the billing migration and its follow-up with finance.
- Approves production database changes.
""",
    "teams/platform.md": """---
type: team
title: Platform Team
lead: Olena Marchenko
members: [Olena Marchenko, Taras Kovalenko]
projects: [Billing Migration]
---
# Platform Team

The Platform Team runs the shared infrastructure: CI, databases and the billing service.
""",
    "people/taras_kovalenko.md": """---
type: person
title: Taras Kovalenko
role: Backend Engineer
team: Platform Team
reports_to: Olena Marchenko
---
Taras maintains the invoice exporter and is on call every fourth week.
""",
    "projects/billing_migration.md": """---
type: project
title: Billing Migration
owner: Olena Marchenko
client: Northwind Retail
related: [DEC-0054 Move invoices to Stripe]
---
# Billing Migration

Moving every customer invoice from the legacy billing system to Stripe.

## Status

The billing migration is 60% complete and due on 2026-12-15.

## Follow-up

| Action | Owner | Due |
|---|---|---|
| Reconcile November invoices | Taras Kovalenko | 2026-12-05 |
| Sign off the cut-over plan | Olena Marchenko | 2026-12-10 |
""",
    "decisions/dec_0054.md": """---
type: decision
title: DEC-0054 Move invoices to Stripe
status: accepted
date: 2026-09-14
decided_by: [Olena Marchenko]
---
# DEC-0054 Move invoices to Stripe

We decided to move invoicing to Stripe because the legacy system cannot issue EU e-invoices.
""",
    "policies/leave.md": """---
type: policy
title: Leave Policy
---
# Leave Policy

## Sick leave

Employees earn 10 sick days per year. Unused sick days do not carry over.

## Parental leave

New parents get 16 weeks of paid parental leave.
""",
    "relationships/northwind_retail.md": """---
type: organization
title: Northwind Retail
relationship_to_company: client
industry: Retail
account_owner: Olena Marchenko
---
# Northwind Retail

A retail chain in Portugal; client since 2024 on the Starter plan.
""",
    "policies/vidpustka.md": """---
type: policy
title: Відпустки і лікарняні
---
# Відпустки і лікарняні

## Лікарняні

Працівники отримують 10 днів лікарняних на рік без довідки.

## Щорічна відпустка

Кожен працівник має 24 календарні дні оплачуваної відпустки.
""",
}
