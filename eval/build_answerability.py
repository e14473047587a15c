#!/usr/bin/env python3
"""Write ``eval/answerability.jsonl``: retrievals labelled answerable or not, from recorded judgements.

    python eval/build_answerability.py --shared ../shared

Every judgement below was made by reading: the corpus a question is asked of was searched
(grep for the topic's words, and the retriever's top facts were read) before a label was
written; pairs that could not be settled are left out (``UNSURE``).  See ``eval/README.md``.
The output is deterministic: re-running it rewrites the same file.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

HANDBOOKS = ("18f-handbook", "reg-handbook", "sourcegraph-handbook")
MEETINGS = ("academic", "committee", "product")

# Dev questions asked of another handbook: (question id, corpus asked of) → answerable?
# Absent means unsure; only settled pairs are listed.
CROSS_HANDBOOK: dict[tuple[str, str], bool] = {
    ("reg-handbook-003", "18f-handbook"): False,  # open source hacksessions: REG event
    ("reg-handbook-003", "sourcegraph-handbook"): False,
    ("reg-handbook-006", "sourcegraph-handbook"): True,  # anonymous report through Convercent
    ("reg-handbook-009", "18f-handbook"): False,  # REG's default licence
    ("reg-handbook-009", "sourcegraph-handbook"): False,
    ("reg-handbook-012", "18f-handbook"): False,  # Hut23 emoji voting
    ("reg-handbook-012", "sourcegraph-handbook"): False,
    ("reg-handbook-015", "18f-handbook"): False,  # Turing drop-in sessions
    ("reg-handbook-015", "sourcegraph-handbook"): False,
    ("reg-handbook-018", "sourcegraph-handbook"): False,  # 80/10/10 time split, service areas
    ("reg-handbook-024", "18f-handbook"): True,  # tools/zoom.md: user type, meetings over 40 minutes
    ("reg-handbook-024", "sourcegraph-handbook"): False,  # Zoom pages say nothing of account type or length
    ("reg-handbook-033", "18f-handbook"): False,  # the Turing's pension
    ("reg-handbook-033", "sourcegraph-handbook"): False,
    ("reg-handbook-036", "18f-handbook"): False,  # Society of RSE
    ("reg-handbook-036", "sourcegraph-handbook"): False,
    ("reg-handbook-039", "18f-handbook"): True,  # leave, sick leave included, is requested in HR Links
    ("reg-handbook-042", "18f-handbook"): True,  # Employee Assistance Program, FEHB plans
    ("reg-handbook-042", "sourcegraph-handbook"): True,  # mental health perks and insurance
    ("reg-handbook-048", "18f-handbook"): False,  # REG's Junior vs Standard roles
    ("reg-handbook-048", "sourcegraph-handbook"): False,
    ("reg-handbook-054", "18f-handbook"): False,  # Gray Dawes booking approval
    ("reg-handbook-054", "sourcegraph-handbook"): False,
    ("reg-handbook-057", "18f-handbook"): False,  # no meditation app offered
    ("reg-handbook-057", "sourcegraph-handbook"): True,  # Calm free for US teammates on Kaiser
    ("reg-handbook-060", "18f-handbook"): False,  # no Python lint/format setup
    ("reg-handbook-060", "sourcegraph-handbook"): False,
    ("18f-handbook-003", "reg-handbook"): False,  # federal sick leave accrual
    ("18f-handbook-003", "sourcegraph-handbook"): False,
    ("18f-handbook-006", "reg-handbook"): False,  # no leave to vote
    ("18f-handbook-006", "sourcegraph-handbook"): True,  # PTO "life" reasons include voting
    ("18f-handbook-009", "reg-handbook"): False,  # Tock timecards
    ("18f-handbook-009", "sourcegraph-handbook"): False,
    ("18f-handbook-012", "reg-handbook"): False,  # federal credit hours
    ("18f-handbook-012", "sourcegraph-handbook"): False,
    ("18f-handbook-015", "reg-handbook"): True,  # Report + Support platform
    ("18f-handbook-015", "sourcegraph-handbook"): True,  # manager, People Team, Legal
    ("18f-handbook-021", "reg-handbook"): False,  # nothing on lost equipment
    ("18f-handbook-027", "reg-handbook"): False,  # no IT incident reporting deadline
    ("18f-handbook-030", "reg-handbook"): False,  # no transit subsidy
    ("18f-handbook-030", "sourcegraph-handbook"): False,
    ("18f-handbook-042", "reg-handbook"): False,  # comp time
    ("18f-handbook-042", "sourcegraph-handbook"): False,
    ("18f-handbook-045", "reg-handbook"): False,  # TTS term appointments
    ("18f-handbook-045", "sourcegraph-handbook"): False,
    ("18f-handbook-048", "reg-handbook"): False,  # TTS term extensions
    ("18f-handbook-048", "sourcegraph-handbook"): False,
    ("18f-handbook-051", "reg-handbook"): False,  # M&IE per diem
    ("18f-handbook-051", "sourcegraph-handbook"): False,
    ("18f-handbook-057", "reg-handbook"): True,  # flexible hours around core hours 10-4
    ("18f-handbook-057", "sourcegraph-handbook"): True,  # "You choose when you want to work"
    ("18f-handbook-060", "reg-handbook"): False,  # benefits of a TTS employee
    ("18f-handbook-060", "sourcegraph-handbook"): False,
    ("sourcegraph-handbook-003", "18f-handbook"): False,  # monthly stipends
    ("sourcegraph-handbook-003", "reg-handbook"): False,
    ("sourcegraph-handbook-006", "18f-handbook"): False,  # coworking membership expense
    ("sourcegraph-handbook-006", "reg-handbook"): False,
    ("sourcegraph-handbook-012", "18f-handbook"): False,  # Sourcegraph's 401k match
    ("sourcegraph-handbook-012", "reg-handbook"): False,
    ("sourcegraph-handbook-015", "18f-handbook"): False,  # executive business partners
    ("sourcegraph-handbook-015", "reg-handbook"): False,
    ("sourcegraph-handbook-018", "18f-handbook"): False,  # team offsite budgets
    ("sourcegraph-handbook-018", "reg-handbook"): False,
    ("sourcegraph-handbook-030", "reg-handbook"): False,  # sending a customer a password
    ("sourcegraph-handbook-033", "18f-handbook"): False,  # no severity levels defined
    ("sourcegraph-handbook-033", "reg-handbook"): False,
    ("sourcegraph-handbook-042", "18f-handbook"): False,  # anniversary gifts
    ("sourcegraph-handbook-042", "reg-handbook"): False,
    ("sourcegraph-handbook-045", "18f-handbook"): False,  # babysitting on trips
    ("sourcegraph-handbook-045", "reg-handbook"): False,
    ("sourcegraph-handbook-051", "18f-handbook"): False,  # "lock your computer", no timeout
    ("sourcegraph-handbook-051", "reg-handbook"): False,
    ("sourcegraph-handbook-057", "reg-handbook"): False,  # switching teams
}

# Meeting questions too generic to be unanswerable in another kind of meeting.
GENERIC_MEETING = frozenset(
    "Bed003-05 Bmr014-00 ES2004c-00 ES2011d-02 ES2011d-04 ES2011d-05 covid_9-00 education_4-00 Bro004-05 "
    "TS3011b-03 TS3004d-03 ES2011a-05 IS1003a-03".split()
)
# Handbook questions a meeting folder might touch (Covid committee on mental-health support).
RISKY_HANDBOOK_IN_MEETINGS = frozenset({("reg-handbook-042", "committee"), ("18f-handbook-060", "committee")})

# Questions written for this set; each "absent" topic was grepped for in the corpus it is asked of.
WRITTEN: dict[str, tuple[tuple[str, bool], ...]] = {
    "18f-handbook": (
        ("What is the vesting schedule for employee stock options?", False),
        ("How many weeks of sabbatical can I take?", False),
        ("How much is the referral bonus for recommending a new hire?", False),
        ("When is the next company hackathon?", False),
        ("Is there a dress code for client meetings?", False),
        ("Which Kubernetes cluster runs our production services?", False),
        ("When is the annual company ski trip?", False),
        ("Can I bring my dog to the office?", False),
        ("How do I book a meeting room in the London office?", False),
        ("What is the budget for a team offsite?", False),
        ("What are the rules for using ChatGPT at work?", False),
    ),
    "reg-handbook": (
        ("Is there an on-call rotation for production services?", False),
        ("Does the Turing provide a company car?", False),
        ("How much is the Christmas bonus?", False),
        ("Can I bring my dog to the office?", False),
        ("How do I get a corporate credit card?", False),
        ("What are the rules for using ChatGPT or Copilot at work?", False),
        ("Will the Turing pay for my home internet?", False),
        ("Is there a gym in the building?", False),
        ("What is the notice period if I resign?", False),
        ("How many days of compassionate leave do I get?", False),
        ("Who sits on the Turing's board of trustees?", False),
        ("What should I do when the fire alarm goes off?", False),
        ("How many weeks of maternity leave do I get?", False),
        ("Do employees get stock options?", False),
        ("When is the next hackathon?", False),
        ("Is there a lactation room in the office?", False),
        ("How many sick days do I get per year?", False),
    ),
    "sourcegraph-handbook": (
        ("Is there a gym at the Sourcegraph office?", False),
        ("What is the office dress code?", False),
        ("How long is the sabbatical after four years?", False),
        ("Does Sourcegraph offer a bicycle commuting benefit?", False),
        ("Who is the fire warden for the office?", False),
        ("Where is the first aid kit kept?", False),
        ("Is there a laundry service for employees?", False),
        ("Will Sourcegraph reimburse tuition for a degree?", False),
        ("Can I bring my dog to the office?", False),
    ),
    "company_context": (
        ("How many PTO days do we get per year?", True),
        ("How far ahead do I need to request time off?", True),
        ("What is the coworking stipend?", True),
        ("What are our core hours?", True),
        ("What is the hotel limit per night in London?", True),
        ("What do I do if my laptop is stolen?", True),
        ("How many approvals does an infrastructure change need?", True),
        ("How many days of bereavement leave are there?", True),
        ("Who owns the leave policy?", True),
        ("How much sick leave can I take without a medical certificate?", True),
        ("Do employees get stock options, and how do they vest?", False),
        ("Is there a company gym?", False),
        ("What is the dress code for client meetings?", False),
        ("When is the annual ski trip?", False),
        ("Who won last year's hackathon?", False),
        ("What is the sabbatical policy?", False),
        ("Is there a pension plan?", False),
        ("Does the company pay tuition for an MBA?", False),
        ("When is the Christmas party?", False),
        ("Does Brightwave offer pet insurance for employees?", False),
    ),
}


def part(key: str) -> str:
    """Half the questions are kept back: every asking of one question lands in the same part."""
    return "heldout" if int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 2 else "fit"


def row(key: str, asked_of: str, answerable: bool, source: str, how: str, **extra: str) -> dict[str, object]:
    """One labelled retrieval; ``without`` (a file-name pattern) removes files from the corpus asked of."""
    without = extra.pop("without", None)
    rid = f"{key}@{asked_of}" + (f"-{without}" if without else "")
    place = {"asked_of": asked_of, **({"without": without} if without else {})}
    return {"id": rid, **extra, **place, "answerable": answerable, "source": source, "how": how, "part": part(key)}


def from_dev(dev: list[dict]) -> list[dict[str, object]]:
    out = []
    for q in dev:
        if q["kind"] == "lowinfo":
            continue
        answerable = q["kind"] != "absent"
        how = "gold section in its own corpus" if answerable else "dev 'absent' question"
        out.append(row(q["id"], q["corpus"], answerable, "dev_queries", how, question_id=q["id"]))
    for (qid, corpus), answerable in sorted(CROSS_HANDBOOK.items()):
        how = "asked of another handbook; checked by grep and by reading the top facts"
        out.append(row(qid, corpus, answerable, "dev_queries", how, question_id=qid))
    answerable_dev = [q for q in dev if q["kind"] not in ("absent", "lowinfo")]
    for n, q in enumerate(answerable_dev):
        folder = MEETINGS[n % 3]
        if (q["id"], folder) not in RISKY_HANDBOOK_IN_MEETINGS:
            how = "handbook question asked of meeting transcripts"
            out.append(row(q["id"], f"qmsum-test/{folder}", False, "dev_queries", how, question_id=q["id"]))
    return out


def series(path: str) -> str:
    """The meeting series a transcript belongs to: ES2004a → ES2004, Bed003 → Bed, covid_4 → covid."""
    stem = Path(path).stem
    if "_" in stem:
        return stem.split("_")[0]
    return stem[:3] if stem.startswith("B") else stem.rstrip("abcd")


def from_qmsum(qmsum: list[dict]) -> list[dict[str, object]]:
    out = []
    for n, q in enumerate(qmsum):
        own = q["gold"][0]["path"].split("/")[0]
        out.append(row(q["id"], f"qmsum-test/{own}", True, "qmsum_queries", "gold turns in its own meeting folder",
                       question_id=q["id"]))
        if q["id"].removeprefix("qmsum-") in GENERIC_MEETING:
            continue
        how = "asked of the same kind of meetings without the series it is about"
        without = f"{series(q['gold'][0]['path'])}*"
        out.append(row(q["id"], f"qmsum-test/{own}", False, "qmsum_queries", how, question_id=q["id"],
                       without=without))
        if n % 2 == 0:
            others = [f for f in MEETINGS if f != own]
            how = "asked of another kind of meeting (design team / research group / parliament)"
            out.append(row(q["id"], f"qmsum-test/{others[n // 2 % 2]}", False, "qmsum_queries", how,
                           question_id=q["id"]))
        if n % 4 == 0:
            how = "meeting question asked of a staff handbook"
            out.append(row(q["id"], HANDBOOKS[(n // 4) % 3], False, "qmsum_queries", how, question_id=q["id"]))
    return out


def from_written() -> list[dict[str, object]]:
    out = []
    for corpus, questions in WRITTEN.items():
        for n, (question, answerable) in enumerate(questions, 1):
            key = f"written-{corpus}-{n:02d}"
            how = "written; answer read in the corpus" if answerable else "written; topic grepped for, absent"
            out.append(row(key, corpus, answerable, "written", how, question=question))
    return out


CHATS = Path(__file__).resolve().parent / "chats-for-fitting" / "questions.jsonl"


def from_chats(questions: list[dict]) -> list[dict[str, object]]:
    """Questions written with the chats kept for fitting (``chats-for-fitting/``; never the chats
    ``scripts/eval.py`` reports on): the gold sessions, and the unanswerable ones as written."""
    out = []
    for q in questions:
        answerable = q["kind"] != "absent"
        if answerable:
            how = "gold session in its chat"
        elif q.get("note") == "speaker swapped":
            how = "another speaker's event asked of the wrong one; read in the chat"
        else:
            how = "a detail the chat never gives; read in the chat"
        out.append(row(q["id"], q["corpus"], answerable, "chats_for_fitting", how, question=q["question"]))
    return out


def foreign_to_chats(dev: list[dict], qmsum: list[dict]) -> list[dict[str, object]]:
    """Staff-handbook and meeting questions asked of the fitting chats, which are two people's private lives:
    a memory that never speaks of the topic, where a conversation's estimate must still fall."""
    out = []
    for q in dev:
        if q["kind"] not in ("absent", "lowinfo"):
            how = "handbook question asked of private chats"
            out.append(row(q["id"], "chat-fit", False, "dev_queries", how, question_id=q["id"]))
    for q in qmsum[::8]:
        how = "meeting question asked of private chats"
        out.append(row(q["id"], "chat-fit", False, "qmsum_queries", how, question_id=q["id"]))
    return out


def _questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "answerability.jsonl")
    args = parser.parse_args()
    dev, qmsum = (_questions(args.shared / "eval" / name) for name in ("dev_queries.jsonl", "qmsum_queries.jsonl"))
    rows = from_dev(dev) + from_qmsum(qmsum) + from_written() + from_chats(_questions(CHATS))
    rows += foreign_to_chats(dev, qmsum)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} rows: {sum(bool(r['answerable']) for r in rows)} answerable → {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
