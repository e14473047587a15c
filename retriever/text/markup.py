"""Inline markdown to plain text, human titles, and the relative links of a body (sentences: ``sentences``).

Pure string functions, shared by the parser (index time) and the report (output time).
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable
from functools import lru_cache
from itertools import chain, islice
from urllib.parse import unquote

# Every pattern runs in linear time on any input (issue 9: "[a](b" * 8000 took 13 s).  The rule: an
# unbounded repetition never crosses the character (or marker) that starts another match, so each
# character is scanned by a bounded number of attempted matches.  Lazy "opener … closer" patterns
# instead run only up to the last closer (``_before_last``), where every attempt finds one.
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\((?:[^()]|\([^()]*\))*\)")
_LINK = re.compile(r"\[([^\[\]]+)\]\((?:[^()]|\([^()]*\))*\)")
_REF_LINK = re.compile(r"\[([^\[\]]+)\]\[[^\[\]]*\]")
_WIKI_LINK = re.compile(r"!?\[\[([^\[\]|]+)(?:\|([^\[\]]+))?\]\]")  # "!": an embed (Obsidian)
# A wiki link's parts, as a link names a document: its target (group 1, without "#Heading") and what follows its "|"
# (group 2), read by check's broken-link and by a relation value written as a link.  Each part stops at the
# character that ends it, so a match is linear in the text.
WIKI_LINK_PARTS = re.compile(r"\[\[([^\[\]|#]*)(?:#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]")
# The target of an inline link or image: ``](target)``, ``](<target>)``, ``](target "title")``; in angle
# brackets it may hold spaces (CommonMark): ``](<../a b.md>)``.  Group 1 or 2 holds it.
LINK_TARGET = re.compile(r"""\]\(\s*(?:<([^<>\n]*)>|<?([^()\s<>]+)>?)(?:\s+(?:"[^"]*"|'[^']*'|\([^()]*\)))?\s*\)""")
# A link reference definition, ``[label]: target`` or ``[label]: <target>`` (not a footnote, ``[^1]: …``).
LINK_DEFINITION = re.compile(r"(?m)^[ ]{0,3}\[(?!\^)[^\]\n]+\]:[ \t]*(?:<([^<>\n]*)>|<?([^\s<>]+))")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^<>\s]+)>")
# A line break or a block's edge: a space, where dropping the tag had glued two cells' words ("outagePriya").
_HTML_BREAK = re.compile(
    r"</?(?:br|p|div|td|th|tr|li|ul|ol|dl|dt|dd|table|thead|tbody|tfoot|caption|summary|details|section|article|"
    r"blockquote|h[1-6])\b[^<>]*>",
    re.I,
)
_HTML_TAG = re.compile("</?[A-Za-z][^<>\U000f0000-\U000ffffd]*>")  # never over a code span's stand-in (below)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)  # with _before_last
_TEMPLATE_TAG = re.compile(r"\{%-?\s*[\w.]+\s*(.*?)-?%\}", re.S)  # with _before_last
_TEMPLATE_EXPR = re.compile(r"\{\{[<%{]?.*?[>%}]?\}\}", re.S)  # with _before_last
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")
_ANCHOR = re.compile(r"\{#[^{}]*\}")  # the space before it goes when spaces are collapsed
# Strong text ends at the next mark, even after a space: "**Note: **" (common in exported docs) is bold.
_STRONG = re.compile(r"(\*\*|__)(?=\S)((?:(?!\1).)+?)\1")
# An emphasis never runs past a mark that could open another one (intraword marks, as in snake_case, may stay).
_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=\S)((?:(?!(?<![\w*])\*).)+?)(?<=\S)\*(?!\*)"
    r"|(?<![\w_])_(?=\S)((?:(?!(?<![\w_])_).)+?)(?<=\S)_(?!\w)"
)
_CODE_SPAN = re.compile(r"`+([^`]*)`+")
_STRIKE = re.compile(r"~~(.+?)~~")  # "." stops at a line end, and any two "~~" on a line pair up
_SPACES = re.compile(r"\s+")
_EMOJI = re.compile("[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]")



def _template_args(match: re.Match[str]) -> str:
    # Keep a template tag's quoted arguments ({% slack_channel "tts-leave" %} → tts-leave): they name things.
    return " ".join(a or b for a, b in _QUOTED.findall(match.group(1)))


_MARKUP_CHARS = re.compile(r"[\[\]<>{}*_`~&]")


def _clean_prose(text: str) -> str:
    """``clean_inline`` of text whose code spans are already out of it (plain prose never comes here)."""
    # Each pattern runs only when the text holds the characters every match of it contains: a
    # substring test is far cheaper than a scan that finds nothing (a paragraph with one "_" in a
    # file name ran all fourteen), and a pattern that cannot match leaves the text as it was.
    # {{< hugo >}} and {{% hugo %}} first: they contain {% … %}
    text = _before_last(_TEMPLATE_EXPR, "}}", " ", text)
    text = _before_last(_TEMPLATE_TAG, "%}", _template_args, text)
    if "[" in text:
        text = _links_to_text(text)
    if "<" in text:
        text = _tags_to_text(text)
    if "{#" in text:
        text = _ANCHOR.sub("", text)
    if _has_marker(text) or ("[" in text and _LEFTOVER_CHARS.search(text)):
        text = _without_leftovers(text)
    if "*" in text or "_" in text:
        text = _emphasis_to_text(text)
    if "~~" in text:
        text = _STRIKE.sub(r"\1", text)
    return " ".join(html.unescape(text).split())


def clean_inline(text: str) -> str:
    """Plain text of inline markdown: link texts kept, URLs, tags and emphasis marks dropped; a code span's
    content kept as written (``acmectl rollback <service>``, ``__init__``, ``{{ .Values.image }}``, ``a &amp; b``),
    as CommonMark reads it: nothing inside a code span is markup.

    Linear in the length of ``text`` whatever it holds.
    """
    # Most texts: no markup and no marker, nothing to strip.  Spaces collapse as ``_SPACES`` would (``str.split`` and
    # regex ``\s`` agree on every code point) at a quarter of its cost.
    if not _MARKUP_CHARS.search(text) and not _has_marker(text):
        return " ".join(text.split())
    if "`" not in text:
        return _clean_prose(text)
    spans = _code_spans(text)
    if not spans or _PRIVATE.search(text):  # no span, or the text holds the stand-ins' characters itself
        return _clean_prose(_CODE_SPAN.sub(r"\1", text) if spans else text)
    # Each span stands in as one private-use character while the rest is cleaned, so a link's text holding code
    # ("[`retriever check`](cli.md)") is still a link, then the span's content comes back unchanged.
    pieces, codes, at = [], {}, 0
    for number, (start, end, inner_start, inner_end) in enumerate(spans):
        stand_in = chr(_PRIVATE_FIRST + number)
        pieces += [text[at:start], stand_in]
        codes[ord(stand_in)] = _code_content(text[inner_start:inner_end])
        at = end
    pieces.append(text[at:])
    return " ".join(_clean_prose("".join(pieces)).translate(codes).split())


# What wikis' and site generators' exports leave in a paragraph that is markup, not prose (wiki-migration review):
# Obsidian's and GitHub's callout marker ("[!warning] Title"), a task box ("[ ] ", "[x] "), a block id (" ^dec1"
# ending a line), a comment ("%% … %%"), an embed of an attachment ("![[chart.png]]"), a footnote's mark ("[^2]")
# and its definition's ("[^2]: "), Docusaurus's and MkDocs's admonition fences (":::tip Title", ":::", '!!! note
# "Title"', '??? info') and content tabs ('=== "Tab"'), whose title is kept, and Confluence's CDATA, whose content is.
_CALLOUT = re.compile(r"^\s*\[![A-Za-z][\w-]{0,30}\][+-]?[ \t]*")
_TASK_BOX = re.compile(r"^\s*\[[ xX]\][ \t]+")
# A block id holds a letter and two characters at least: "press ^C" and "10 m ^2" end in no id.
_BLOCK_ID = re.compile(r"[ \t]\^(?=[A-Za-z0-9-]{0,40}[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]{1,40}[ \t]*(?=\n|$)")
_OBSIDIAN_COMMENT = re.compile(r"(?<![\d%])%%.*?%%", re.S)  # with _before_last; "100%% of it" opens none
_EMBEDDED_FILE = re.compile(
    r"!\[\[[^\[\]|]*\.(?:png|jpe?g|gif|svg|webp|bmp|pdf|mp4|mov|webm|mp3|wav|excalidraw)(?:\|[^\[\]]*)?\]\]", re.I
)
_FOOTNOTE = re.compile(r"(?m)^[ \t]*\[\^[^\[\]\s]{1,40}\]:[ \t]*|\[\^[^\[\]\s]{1,40}\]")
# Each a whole line, as the generators write them (":::tip Title", ":::note[Title]", ":::", '!!! note "Title"',
# "???+ tip", '=== "Tab"'): a line of prose opening with "::: ", "!!! Important:" or "??? why" is none.
_ADMONITION = re.compile(
    r"""(?m)^[ \t]*(?::{3,}(?:[a-z][\w-]{0,30}(?:\[([^\]\n]*)\]|[ \t]+([^\n]*))?)?"""
    r"""|(?:!!!|\?\?\?\+?)[ \t]+[a-z][\w-]{0,30}(?:[ \t]+"([^"\n]*)")?|===\+?[ \t]+"([^"\n]*)")[ \t]*$"""
)
_CDATA = re.compile(r"<!\[CDATA\[(.*?)\]\]>", re.S)  # with _before_last
_LEFTOVER_CHARS = re.compile(r"\[[!^ xX]|[ \t]\^|%%|:::|!!!|\?\?\?|===|<!\[CDATA\[")  # each holds one of these


def _has_marker(text: str) -> bool:
    """Whether ``text`` may hold an exporter's marker that holds no markup character (``_LEFTOVER_CHARS`` less its
    bracket forms): substring tests, four times cheaper than the pattern on prose."""
    return "^" in text or "%%" in text or ":::" in text or "!!!" in text or "???" in text or "===" in text


def _without_leftovers(text: str) -> str:
    """``text`` without the exporters' markup above; each pattern stops at its line's end or its closer: linear."""
    if "[!" in text:
        text = _CALLOUT.sub("", text, count=1)
    text = _TASK_BOX.sub("", text, count=1)
    if "^" in text:
        text = _FOOTNOTE.sub("", _BLOCK_ID.sub("", text))
    if "%%" in text:
        text = _before_last(_OBSIDIAN_COMMENT, "%%", " ", text)
    if ":::" in text or "!!!" in text or "???" in text or "===" in text:
        text = _ADMONITION.sub(_admonition_title, text)
    return _before_last(_CDATA, "]]>", r"\1", text) if "<![CDATA[" in text else text


def _admonition_title(match: re.Match[str]) -> str:
    # The title labels what follows it, as a bold lead-in does: "Staging quota: Each team gets 8 CPUs."
    title = (match.group(1) or match.group(2) or match.group(3) or match.group(4) or "").strip()
    return f"{title.rstrip(':')}: " if title else " "


_PRIVATE_FIRST, _PRIVATE_LAST = 0xF0000, 0xFFFFD  # Supplementary Private Use Area-A: stand-ins for code spans
_PRIVATE = re.compile(f"[{chr(_PRIVATE_FIRST)}-{chr(_PRIVATE_LAST)}]")
_BACKTICKS = re.compile(r"`+")


def _code_spans(text: str) -> list[tuple[int, int, int, int]]:
    """The code spans of ``text`` as (start, end, content start, content end), CommonMark's way: a run of N
    backticks opens one and the next run of exactly N closes it; an opener with no closer is literal text. At most
    as many as there are stand-ins. Linear: each run is visited once, and each length's runs are walked in order."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    cursor = dict.fromkeys(by_length, 0)  # per length: the first of its runs not yet passed
    spans: list[tuple[int, int, int, int]] = []
    index = 0
    while index < len(runs) and len(spans) <= _PRIVATE_LAST - _PRIVATE_FIRST:
        start, end = runs[index]
        same = by_length[end - start]
        while cursor[end - start] < len(same) and same[cursor[end - start]] <= index:
            cursor[end - start] += 1
        if cursor[end - start] == len(same):  # no closer: these backticks are text
            index += 1
            continue
        closer = same[cursor[end - start]]
        spans.append((start, runs[closer][1], end, runs[closer][0]))
        index = closer + 1
    return spans


def _code_content(code: str) -> str:
    """A code span's content: line breaks as spaces; one space each side dropped when both are there (CommonMark)."""
    code = code.replace("\r\n", " ").replace("\n", " ")
    if len(code) > 2 and code[0] == " " and code[-1] == " " and code.strip():
        code = code[1:-1]
    return code


def _links_to_text(text: str) -> str:
    """Images, links, reference links and wiki links as their texts (``clean_inline``'s order)."""
    if "](" in text:  # every image and inline link holds it
        text = _IMAGE.sub(r"\1", text)
        text = _LINK.sub(r"\1", text)
    if "][" in text:
        text = _REF_LINK.sub(r"\1", text)
    if "![[" in text:  # an embedded image or file says nothing; an embedded note is named, as a link is
        text = _EMBEDDED_FILE.sub(" ", text)
    if "[[" in text:
        text = _WIKI_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return text


def _tags_to_text(text: str) -> str:
    """Autolinks as their URLs; line breaks, comments and HTML tags dropped (``clean_inline``'s order)."""
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_BREAK.sub(" ", text)
    text = _before_last(_HTML_COMMENT, "-->", "", text)
    return _HTML_TAG.sub("", text) if "<" in text else text


def _emphasis_to_text(text: str) -> str:
    if "**" in text or "__" in text:
        text = _STRONG.sub(r"\2", text)
    return _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)


def _before_last(pattern: re.Pattern[str], closer: str, repl: str | Callable[[re.Match[str]], str], text: str) -> str:
    """``pattern.sub`` over the text up to the last ``closer`` only: a lazy "opener … closer" pattern
    tried at every opener after the last closer would scan to the end each time (quadratic)."""
    end = text.rfind(closer)
    if end < 0:
        return text
    end += len(closer)
    return pattern.sub(repl, text[:end]) + text[end:]


def normalize_heading(text: str | None) -> str:
    """A heading compared the way the evaluation compares them: marks, emoji, links, colon removed."""
    if text is None:
        return ""
    text = _LINK.sub(r"\1", text)
    text = _HTML_TAG.sub("", _before_last(_HTML_COMMENT, "-->", "", _ANCHOR.sub("", text)))
    text = _EMOJI.sub("", re.sub(r"[*_`]", "", text))
    return _SPACES.sub(" ", text).strip().rstrip(":").strip().casefold()


# The names a markdown file ends with (``.mdx``, MDX pages, read without their MDX-only syntax: ``text.mdx``).
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")
# Files that stand for their folder.
INDEX_NAMES = frozenset(f"{stem}{suffix}" for stem in ("readme", "_index", "index") for suffix in (".md", ".mdx"))


def markdown_stem(name: str) -> str:
    """A file name without its markdown suffix (``MARKDOWN_SUFFIXES``, in any case); another name as it is."""
    lowered = name.lower()
    suffix = next((s for s in MARKDOWN_SUFFIXES if lowered.endswith(s)), "")
    return name[: len(name) - len(suffix)]


_NOTION_ID = re.compile(r"(?<=\S)[ _-][0-9a-f]{32}$")  # Notion's export names "Runbooks 3f2a…c9": the id says nothing


@lru_cache(maxsize=4096)  # called for every path a report shows; the same few folders recur
def humanize(name: str) -> str:
    """A file or folder name as a title: ``active_accounts_mrr`` → ``Active Accounts Mrr``.

    Words already capitalised or upper-case (``MRR``, ``iOS``) keep their case.
    """
    stem = _NOTION_ID.sub("", markdown_stem(name))
    words = [w for w in re.split(r"[_\-\s]+", stem) if w]
    return " ".join(w if any(c.isupper() for c in w) else w[:1].upper() + w[1:] for w in words)


def default_title(rel_path: str) -> str:
    """A document's title when neither front matter nor a leading H1 gives one."""
    parts = rel_path.split("/")
    if parts[-1].lower() in INDEX_NAMES and len(parts) > 1:
        return humanize(parts[-2])
    return humanize(parts[-1])


def title_key(text: str) -> str:
    """What two titles must share to be the same title: their letters and digits, case-folded."""
    # "Sync — 2026-11-12" repeats the title "Sync 2026-11-12".
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def truncate(text: str, limit: int, marker: str = " … [truncated]") -> tuple[str, bool]:
    """``text`` cut at a word boundary to at most ``limit`` characters, plus a visible marker."""
    if len(text) <= limit:
        return text, False
    if text[limit] == " ":  # the cut falls exactly between words
        cut = text[:limit]
    else:
        cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:") + marker, True


_ACRONYM = re.compile(r"[A-Z][A-Za-z0-9&]{1,7}")
_PARENS = re.compile(r"\(([^()]{2,80})\)")
_WORD_BEFORE = re.compile(r"([A-Z][A-Za-z0-9&]{1,7})\s*$")
_MINOR_WORDS = frozenset({"and", "of", "for", "the", "a", "an", "to", "in", "on", "&"})


def _initials_match(acronym: str, expansion: str) -> str | None:
    """The expansion's words that spell ``acronym`` (ending at the last word), or None."""
    letters = [c.lower() for c in acronym if c.isalnum()]
    words = [w for w in re.split(r"[\s-]+", expansion.strip()) if w]
    # Take the shortest run of words, ending at the last, whose initials spell the acronym.
    for start in range(len(words) - 1, max(-1, len(words) - 12), -1):
        run = [w for w in words[start:] if w.lower() not in _MINOR_WORDS]
        if [w[0].lower() for w in run] == letters:
            return " ".join(words[start:])
    return None


def _is_acronym(word: str) -> bool:
    return bool(_ACRONYM.fullmatch(word)) and sum(c.isupper() for c in word) >= 2


ACRONYM_CANDIDATES = 2_000  # bracketed phrases of one text looked at for an acronym's definition


def find_acronyms(text: str) -> list[tuple[str, str]]:
    """(acronym, expansion) pairs defined in ``text``, as "MRR (monthly recurring revenue)"
    or "Monthly Recurring Revenue (MRR)"; only pairs whose initials spell the acronym."""
    found: list[tuple[str, str]] = []
    if "(" not in text:
        return found
    # The first ACRONYM_CANDIDATES brackets only: 1.9 MB of "(AB)" took 8.5 s (5-10 times any other input), and
    # each pair found joins the memory's acronyms.  A real page defines a few.
    for match in islice(_PARENS.finditer(text), ACRONYM_CANDIDATES):
        inner = match.group(1).strip()
        before = text[max(0, match.start() - 120) : match.start()]
        if _is_acronym(inner):
            words = re.findall(r"[A-Za-z][\w'&-]*", before)[-10:]
            expansion = _initials_match(inner, " ".join(words)) if words else None
            if expansion:
                found.append((inner, expansion))
        elif (word := _WORD_BEFORE.search(before)) and _is_acronym(word.group(1)):
            expansion = _initials_match(word.group(1), inner)
            if expansion is not None and expansion == inner:
                found.append((word.group(1), expansion))
    return list(dict.fromkeys(found))


def markdown_links(rel_path: str, body: str) -> tuple[str, ...]:
    """Relative links to other markdown files, resolved to tree-relative posix paths (first seen first): inline
    links and link reference definitions, percent-decoded."""
    here = posixpath.dirname(rel_path)
    found: dict[str, None] = {}  # a dict, not a list: 100,000 links must not cost 10^10 comparisons
    definitions = LINK_DEFINITION.findall(body) if "]:" in body else ()  # most bodies hold none: skip the scan
    for bracketed, bare in chain(LINK_TARGET.findall(body), definitions):
        target = unquote((bracketed or bare).split("#", 1)[0])  # "a%20b.md" names "a b.md"
        if not target or "://" in target or target.startswith(("mailto:", "/")):
            continue
        resolved = posixpath.normpath(posixpath.join(here, target))
        if resolved.lower().endswith(MARKDOWN_SUFFIXES) and not resolved.startswith(".."):
            found.setdefault(resolved)
    return tuple(found)
