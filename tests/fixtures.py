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


ASSISTANT: dict[str, str] = {
    "assistant/business_profile.md": """---
type: business_profile
title: Business Profile
business: Acme Analytics
confirmed: 2026-10-02
---
# Business Profile

## Customers

- Acme serves regional newspapers and radio stations in Portugal.

## Rules

- Never quote a price below the Growth plan floor of 3,900 EUR a month.
- Escalate every security question to the security lead.
""",
    "assistant/agents/tanya.md": """---
type: agent
title: Tanya
agent_id: agent_tanya7k
business: Acme Analytics
---
# Tanya

Inbound sales voice agent.
""",
    "assistant/agents/rex.md": """---
type: agent
title: Rex
agent_id: agent_rex01
business: Other Retail Co
---
# Rex

A reseller's agent for a different business.
""",
    "assistant/episodes/2026-10-14_tanya_hinglish.md": """---
type: episode
title: Hinglish handling for education callers
agent: Tanya
date: 2026-10-14
---
# Hinglish handling for education callers

Tanya now mirrors short Hinglish phrases and slows her speaking rate to 0.92.
""",
    "assistant/episodes/2026-11-02_tanya_pricing.md": """---
type: episode
title: Pricing answers
agent: Tanya
date: 2026-11-02
---
# Pricing answers

Tanya quotes list prices only and never discounts below the Growth plan.
""",
    "assistant/episodes/2026-09-01_rex_greeting.md": """---
type: episode
title: Greeting change
agent: Rex
date: 2026-09-01
---
# Greeting change

Rex greets callers by store name.
""",
    "assistant/decisions/tanya.md": """---
type: decision_ledger
title: Tanya decisions
agent: Tanya
---
# Tanya decisions

| Date | Proposal | Status | Reason |
|---|---|---|---|
| 2026-10-14 | Hinglish mode for education callers | accepted | two of six calls dropped |
| 2026-11-03 | Offer a 20% pricing discount on first call | rejected | breaks the pricing rule |
""",
}

# A paraphrase check: "meals" is never written; "travel" is, most often under Hotels.
TRAVEL = {
    "policies/travel.md": "# Travel policy\n\n## Hotels\n\nWhen you travel, book hotels through the travel desk. "
    "You may spend up to 200 dollars a night in most cities.\n\n## Dining expenses\n\nBreakfast, lunch and dinner "
    "on the road are reimbursed up to 75 dollars a day, with itemised receipts.\n\n## Flights\n\nEconomy class "
    "for flights under six hours; business class needs a director's approval.\n",
    "policies/office.md": "# Office\n\n## Kitchen\n\nThe kitchen is cleaned every evening; label what you leave in "
    "the fridge.\n\n## Parking\n\nParking permits are issued by the front desk for a quarter at a time.\n",
}
