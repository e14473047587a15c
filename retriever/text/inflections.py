"""Irregular English verb forms, mapped to the base form before stemming.

Snowball stems by suffix, so "met" never meets "meet" nor "bought" "buy".  A question asks in the
base form ("Where did Kwame meet Morven?", "What did she buy?") and the memory tells in the past
("someone I met at the wall", "I bought…"): in conversations and meeting notes that is the rule,
not the exception.  ``BASE_FORMS`` maps each past or participle form below to its base; the analyser
applies it at index and query time alike.

Left out, as data too:
- forms that are also common words of another meaning (``AMBIGUOUS``: "left" the side, "felt" the
  cloth, "saw" the tool, "found" a company), which would join unrelated topics;
- forms of verbs that are stop words or question-framing words ("got", "told", "made", "gave":
  ``stopwords``), which say how a question is asked, not what it is about;
- forms of reporting verbs (``REPORTING``: "said", "thought"): in a transcript every turn is someone
  saying or thinking something, so "What did Grad B say…" would match every turn that reports speech.
"""

from __future__ import annotations

from retriever.text.stopwords import FRAMING, WORDS

# base form, then its irregular past and participle forms
_VERBS = """
meet met; buy bought; go went gone; take took taken; give gave given; get got gotten; make made;
say said; tell told; find found; think thought; bring brought; pay paid; spend spent; lose lost;
win won; run ran; sell sold; send sent; keep kept; build built; hold held; lend lent; catch caught;
teach taught; choose chose chosen; write wrote written; eat ate eaten; drive drove driven;
fly flew flown; break broke broken; begin began begun; forget forgot forgotten; know knew known;
grow grew grown; throw threw thrown; wake woke woken; wear wore worn; steal stole stolen;
hide hid hidden; fight fought; mean meant; hear heard; understand understood; stand stood; sit sat;
sleep slept; swim swam swum; sing sang sung; drink drank drunk; speak spoke spoken; become became;
come came; feel felt; fall fell fallen; ride rode ridden; see saw seen; draw drew drawn; leave left
"""
AMBIGUOUS = frozenset({"left", "felt", "saw", "found"})  # forms kept as they are
REPORTING = frozenset({"say", "think"})  # verbs whose forms are kept as they are


def _base_forms() -> dict[str, str]:
    out: dict[str, str] = {}
    for entry in _VERBS.split(";"):
        base, *forms = entry.split()
        if base in WORDS or base in FRAMING or base in REPORTING:
            continue
        out.update({form: base for form in forms if form not in WORDS and form not in AMBIGUOUS})
    return out


BASE_FORMS = _base_forms()
