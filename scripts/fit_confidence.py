#!/usr/bin/env python3
"""Fit the answerability model on the labelled set, report it on the kept-back half, write it.

    python scripts/fit_confidence.py --corpus ../shared/corpora            # fit, report, rewrite MODEL
    python scripts/fit_confidence.py --corpus ../shared/corpora --dry-run  # fit and report only

Each row of ``eval/answerability.jsonl`` names a question (by id in ``../shared/eval/*.jsonl``, or
its text) and the corpus it is asked of (a folder under ``--corpus``, or ``company_context``).
The retriever answers it offline; the features of ``retriever.pipeline.confidence.FEATURES`` are read off
the retrieval; a logistic regression (numpy, L2) is fitted on the rows marked ``fit`` in two stages:
the words' features on every row but the chats', then, on top of that model and on all rows,
``speaker_agreement``'s coefficient and two terms for the rows whose best fact comes from a
two-person conversation: how far the words move an estimate there (τ, at least 0) and those rows' own
level (δ). The chats' questions were written to trap the speaker, so their words say little: the
unanswerable ones reuse the chat's words, the answerable ones are often asked in others (``two_stage``).
AUC, expected calibration error and the coverage bands are printed for the ``heldout`` rows; and
the coefficients replace the ``MODEL`` block of ``retriever/pipeline/confidence.py``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retriever import Retriever, Settings
from retriever.pipeline import confidence

REPO = Path(__file__).resolve().parent.parent
# Memories the labelled set asks that live in the repository, not under --corpus.
BUNDLED = {"company_context": REPO / "company_context", "chat-fit": REPO / "eval" / "chats-for-fitting" / "chat-fit"}

Array = npt.NDArray[np.float64]
SPEAKER = confidence.SPEAKER  # fitted apart, on top of the words' model (``two_stage``)
MEANING = confidence.MEANING  # fitted with the words, but not scaled with them in a conversation
CHATS = ("chat-fit",)  # domains whose rows fit only the second stage (the speaker and conversation terms)
CHAT_SOURCES = ("chats_for_fitting",)  # the chats' own questions (the others are handbooks' and meetings')
L2 = 1.0  # ridge penalty on standardised coefficients: keeps the tiny model stable on a few hundred rows
BINS = 10  # equal-width bins for expected calibration error


@dataclass(frozen=True)
class Example:
    row: dict
    question: str
    x: list[float]
    ms: float
    dialogue: bool = False  # the best fact comes from a two-person conversation (``confidence.in_dialogue``)


def questions_by_id(eval_dir: Path) -> dict[str, str]:
    """Question texts by id, from the shared question files that exist in ``eval_dir``."""
    out: dict[str, str] = {}
    for name in ("dev_queries.jsonl", "qmsum_queries.jsonl"):
        if not (eval_dir / name).is_file():
            continue
        for line in (eval_dir / name).read_text().splitlines():
            if line.strip():
                q = json.loads(line)
                out[q["id"]] = q["question"]
    return out


def root_of(row: dict, corpus: Path, state: Path) -> Path:
    """The folder a row's question is asked of; with ``without``, a copy lacking the matching files."""
    name = row["asked_of"]
    root = BUNDLED.get(name, corpus / name)
    if not row.get("without"):
        return root
    copy = state / "corpora" / f"{name.replace('/', '_')}-without-{row['without'].strip('*')}"
    if not copy.exists():
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(row["without"]))
    return copy


def featurise(rows: Sequence[dict], corpus: Path, eval_dir: Path, state: Path) -> list[Example]:
    """Answer every row's question offline and read the features off the retrieval."""
    texts = questions_by_id(eval_dir)
    settings = Settings.from_env(state_dir=state).model_copy(update={"llm_model": None})
    retrievers: dict[str, Retriever] = {}
    out = []
    for row in rows:
        question = row.get("question") or texts[row["question_id"]]
        name = f"{row['asked_of']}-{row.get('without')}"
        if name not in retrievers:
            retrievers[name] = Retriever(root_of(row, corpus, state), settings, refresh_interval=1e9)
            _ = retrievers[name].memory
        began = time.perf_counter()
        result = retrievers[name].retrieve(question)
        ms = (time.perf_counter() - began) * 1000
        values = confidence.features_of(retrievers[name].memory, result.run)
        x = [values[f.name] for f in confidence.FEATURES]
        out.append(Example(row, question, x, ms, confidence.in_dialogue(result.run)))
    return out


def fit(x: Array, y: Array) -> tuple[float, Array]:
    """L2-regularised logistic regression by Newton's method, on standardised columns."""
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    penalty = np.eye(z.shape[1]) * L2
    penalty[0, 0] = 0.0  # the intercept is not shrunk
    beta = _newton(z, y, penalty)
    weights = beta[1:] / scale
    return float(beta[0] - (weights * mean).sum()), weights


def _newton(z: Array, y: Array, penalty: Array, offset: Array | float = 0.0) -> Array:
    """The β that maximises the log-likelihood of ``σ(offset + z·β)`` less ``½ β·penalty·β``, by Newton's
    method, each step halved until the objective improves (a full step can overshoot where a large
    offset saturates σ, and then swing back and forth for ever)."""
    beta = np.zeros(z.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(offset + z @ beta)))
        gradient = z.T @ (p - y) + penalty @ beta
        hessian = (z * (p * (1 - p))[:, None]).T @ z + penalty
        step = np.linalg.solve(hessian, gradient)
        before = _loss(z, y, penalty, offset, beta)
        while _loss(z, y, penalty, offset, beta - step) > before and np.abs(step).max() > 1e-12:
            step = step / 2
        beta -= step
        if np.abs(step).max() < 1e-10:
            break
    return beta


def _loss(z: Array, y: Array, penalty: Array, offset: Array | float, beta: Array) -> float:
    """The negative penalised log-likelihood ``_newton`` minimises (log σ computed without overflow)."""
    margin = offset + z @ beta
    return float((np.logaddexp(0.0, margin) - y * margin).sum() + 0.5 * beta @ penalty @ beta)


def two_stage(examples: Sequence[Example], x: Array, y: Array) -> confidence.Model:
    """The words' model, then the speaker's term and the conversations' own terms on top of it (see the
    module docstring).

    Stage one fits every feature but ``SPEAKER`` on the rows that are not chats. Stage two keeps that
    model's logit as a fixed offset and fits, on all rows, three coefficients: γ for ``SPEAKER − 1``
    (only rows whose question names a speaker the facts disagree with move it); τ − 1 for
    ``d · (W − W̄)``, where W is that logit less its ``MEANING`` term (the words' part), d marks the rows
    whose best fact comes from a two-person conversation and W̄ is the mean W over those rows, so τ
    scales how far the words move an estimate there; and δ for d, the conversation rows' own level.
    Returned as one model: γ joins the weights, −γ the intercept, τ, W̄ and δ the dialogue fields."""
    names = [f.name for f in confidence.FEATURES]
    at = names.index(SPEAKER)
    words = _not_chats(examples)
    lexical = np.delete(x, at, axis=1)
    intercept, weights = fit(lexical[words], y[words])
    offset = intercept + lexical @ weights
    meaning = names.index(MEANING)
    said = offset - weights[meaning - (meaning > at)] * x[:, meaning]  # W: the words' part of the offset
    dialogue = np.array([e.dialogue for e in examples])
    centre = float(said[dialogue].mean()) if dialogue.any() else 0.0
    spread = np.where(dialogue, said - centre, 0.0)
    u = np.column_stack([x[:, at] - 1.0, dialogue.astype(float), spread])
    gamma, shift, scale_less_one = (float(v) for v in _offset_fit(offset, u, y))
    if scale_less_one < -1.0:  # the words point the wrong way in conversations: τ = 0 ignores them there
        gamma, shift = (float(v) for v in _offset_fit(offset - spread, u[:, :2], y))
        scale_less_one = -1.0
    return confidence.Model(
        intercept=float(intercept) - gamma,
        weights={name: float(w) for name, w in zip(names, np.insert(weights, at, gamma), strict=True)},
        dialogue_scale=1.0 + scale_less_one,
        dialogue_centre=centre,
        dialogue_shift=shift,
    )


def _not_chats(examples: Sequence[Example]) -> npt.NDArray[np.bool_]:
    """Which rows are not chats' (the rows the words' model is fitted and reported on apart)."""
    return np.array([domain(e.row) not in CHATS for e in examples])


def _offset_fit(offset: Array, u: Array, y: Array) -> Array:
    """β of ``σ(offset + u·β)`` by Newton's method, with ``L2`` on β itself: each column of ``u`` is 0 on
    most rows, so ``fit``'s ridge on standardised columns would shrink β to nothing."""
    return _newton(u, y, np.eye(u.shape[1]) * L2, offset)


def predict(model: confidence.Model, examples: Sequence[Example]) -> Array:
    """The model's estimate for each example, as the retriever computes and rounds it."""
    names = [f.name for f in confidence.FEATURES]
    return np.array(
        [round(model.probability(dict(zip(names, e.x, strict=True)), e.dialogue), confidence.DIGITS) for e in examples]
    )


def auc(p: Array, y: Array) -> float:
    """Probability that an answerable row scores above an unanswerable one (ties count half)."""
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def ece(p: Array, y: Array, bins: int = BINS) -> float:
    """Expected calibration error: bin-weighted |mean estimate − share answerable|."""
    index = np.minimum((p * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        mask = index == b
        if mask.any():
            total += mask.sum() / len(p) * abs(p[mask].mean() - y[mask].mean())
    return float(total)


def domain(row: dict) -> str:
    name = row["asked_of"]
    if name.startswith("qmsum"):
        return "meetings"
    return name if name in BUNDLED else "handbooks"


def report(name: str, examples: Sequence[Example], p: Array, y: Array, thresholds: dict[str, float]) -> None:
    print(f"\n## {name}: {len(y)} retrievals, {int(y.sum())} answerable\n")
    print(f"AUC {auc(p, y):.3f} · ECE {ece(p, y):.3f} · Brier {float(((p - y) ** 2).mean()):.3f}")
    top = np.array([e.x[[f.name for f in confidence.FEATURES].index("top_fact")] for e in examples])
    print(f"(top relevance score alone: AUC {auc(top, y):.3f})")
    groups: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(examples):
        groups[domain(e.row)].append(i)
    for group, idx in sorted(groups.items()):
        g = np.array(idx)
        print(
            f"- {group}: {len(g)} rows, AUC {auc(p[g], y[g]):.3f}, ECE {ece(p[g], y[g]):.3f}"
            f" (top relevance alone: AUC {auc(top[g], y[g]):.3f})"
        )
    words = _not_chats(examples)
    if not words.all():
        print(f"- all but the chats: {int(words.sum())} rows, AUC {auc(p[words], y[words]):.3f}, "
              f"ECE {ece(p[words], y[words]):.3f}")
    meet = np.array([domain(e.row) == "meetings" and (e.row["answerable"] or bool(e.row.get("without")))
                     for e in examples])
    if meet.any():
        print(
            f"- same-kind meetings without the one asked about, vs answerable meeting questions: AUC "
            f"{auc(p[meet], y[meet]):.3f} (top relevance alone: {auc(top[meet], y[meet]):.3f})"
        )
    _chats_line(examples, p, y, thresholds["partial"])
    print("\n| coverage | rows | answerable share | mean estimate |\n|---|---|---|---|")
    for label in ("comprehensive", "partial", "limited", "none"):
        mask = np.array([confidence.coverage(float(v), True, thresholds) == label for v in p])
        if mask.any():
            print(f"| {label} | {mask.sum()} | {y[mask].mean():.2f} | {p[mask].mean():.2f} |")


def _chats_line(examples: Sequence[Example], p: Array, y: Array, partial: float) -> None:
    """The chats' own questions apart from other memories' questions asked of them (a chat must not call
    those partly answered)."""
    chats = np.array([domain(e.row) in CHATS for e in examples])
    foreign = chats & np.array([e.row.get("source") not in CHAT_SOURCES for e in examples])
    if foreign.any():
        on_topic = chats & ~foreign
        print(
            f"- the chats' own questions: {int(on_topic.sum())} rows, AUC {auc(p[on_topic], y[on_topic]):.3f}; "
            f"other memories' questions asked of the chats: {int(foreign.sum())}, called partial or better: "
            f"{int((p[foreign] >= partial).sum())}"
        )


def univariate(examples: Sequence[Example], y: Array) -> None:
    print("\n| feature | AUC on the fitted half |\n|---|---|")
    x = np.array([e.x for e in examples])
    for j, f in enumerate(confidence.FEATURES):
        print(f"| {f.name} | {auc(x[:, j], y):.3f} |")


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpora")
    parser.add_argument("--labels", type=Path, default=REPO / "eval" / "answerability.jsonl")
    parser.add_argument("--eval-dir", type=Path, help="folder of dev/qmsum questions (default: CORPUS/../eval)")
    parser.add_argument("--model-file", type=Path, default=REPO / "retriever" / "pipeline" / "confidence.py")
    parser.add_argument("--dry-run", action="store_true", help="fit and report; do not rewrite the model")
    args = parser.parse_args(argv)
    args.eval_dir = args.eval_dir or args.corpus.parent / "eval"
    return args


def _load(args: argparse.Namespace) -> list[dict] | str:
    """The labelled rows, or why they cannot be used (with the next step)."""
    if not args.corpus.is_dir():
        return f"error: no corpora at {args.corpus}; pass --corpus DIR (the shared folder's corpora)"
    if not args.labels.is_file():
        return f"error: no labelled set at {args.labels}; pass --labels FILE (see eval/README.md)"
    rows = [json.loads(x) for x in args.labels.read_text().splitlines() if x.strip()]
    known = questions_by_id(args.eval_dir)
    unknown = [r["id"] for r in rows if not r.get("question") and r.get("question_id") not in known]
    if unknown:
        return f"error: {len(unknown)} rows name questions not found under {args.eval_dir} (first: {unknown[0]})"
    return rows


def _arrays(examples: Sequence[Example]) -> tuple[Array, Array]:
    return np.array([e.x for e in examples]), np.array([float(e.row["answerable"]) for e in examples])


_BLOCK = re.compile(r"^(# BEGIN MODEL\b[^\n]*\n).*?^(# END MODEL)$", re.S | re.M)


def write_model(path: Path, model: confidence.Model) -> None:
    """Replace the ``MODEL`` block of ``path`` (``retriever/pipeline/confidence.py``) with ``model``."""
    weights_src = "".join(f"        {json.dumps(name)}: {w!r},\n" for name, w in model.weights.items())
    cuts = ", ".join(f"{json.dumps(k)}: {v!r}" for k, v in model.thresholds.items())
    neutral = ", ".join(f"{json.dumps(k)}: {v!r}" for k, v in model.neutral.items())
    body = (
        "MODEL = Model(\n"
        f"    intercept={model.intercept!r},\n"
        f"    weights={{\n{weights_src}    }},\n"
        f"    thresholds={{{cuts}}},\n"
        f"    dialogue_scale={model.dialogue_scale!r},\n"
        f"    dialogue_centre={model.dialogue_centre!r},\n"
        f"    dialogue_shift={model.dialogue_shift!r},\n"
        f"    neutral={{{neutral}}},\n"
        f"    heldout_auc={model.heldout_auc!r},\n"
        f"    heldout_ece={model.heldout_ece!r},\n"
        f"    rows={model.rows!r},\n"
        ")\n"
    )
    source = path.read_text(encoding="utf-8")
    if not _BLOCK.search(source):
        raise ValueError(f"{path} has no MODEL block (between BEGIN and END MODEL comment lines) to rewrite")
    path.write_text(_BLOCK.sub(lambda m: m.group(1) + body + m.group(2), source, count=1), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    rows = _load(args)
    if isinstance(rows, str):
        print(rows, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="retriever-fit-") as state:
        examples = featurise(rows, args.corpus, args.eval_dir, Path(state))
    fit_part = [e for e in examples if e.row["part"] == "fit"]
    held = [e for e in examples if e.row["part"] == "heldout"]
    if not fit_part or not held:
        print("error: the labelled set needs rows in both parts ('fit' and 'heldout')", file=sys.stderr)
        return 2
    (xf, yf), (_, yh) = _arrays(fit_part), _arrays(held)
    fitted = two_stage(fit_part, xf, yf)
    thresholds = dict(confidence.MODEL.thresholds)
    univariate(fit_part, yf)
    report("fitted half", fit_part, predict(fitted, fit_part), yf, thresholds)
    ph = predict(fitted, held)
    report("kept-back half", held, ph, yh, thresholds)
    print(
        f"\nin two-person conversations: the words count ×{fitted.dialogue_scale:.3f} around a logit of "
        f"{fitted.dialogue_centre:.3f}, shifted by {fitted.dialogue_shift:.3f}; the speaker's term is "
        f"{fitted.weights[SPEAKER]:.3f}"
    )
    print(f"\nretrieval p50 over the labelled questions: {np.median([e.ms for e in examples]):.1f} ms")
    if not args.dry_run:
        model = confidence.Model(
            intercept=round(fitted.intercept, 4),
            weights={name: round(w, 4) for name, w in fitted.weights.items()},
            thresholds=thresholds,
            dialogue_scale=round(fitted.dialogue_scale, 4),
            dialogue_centre=round(fitted.dialogue_centre, 4),
            dialogue_shift=round(fitted.dialogue_shift, 4),
            neutral={MEANING: round(float(xf[:, [f.name for f in confidence.FEATURES].index(MEANING)].mean()), 4)},
            heldout_auc=round(auc(ph, yh), 3),
            heldout_ece=round(ece(ph, yh), 3),
            rows=len(rows),
        )
        write_model(args.model_file, model)
        print(f"\nwrote the model to {args.model_file}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
