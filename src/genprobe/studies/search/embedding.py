"""Text embeddings of inputs (a printed problem, a command), for k-means seed selection (SAGGA's
and the failure search's `--selection kmeans`), and SAGGA's `target_problems` fitness and
cluster report.

The default needs no GPU and no download: hashed character n-grams of the printed input
(scikit-learn's `HashingVectorizer`, l2-normalized, so a dot product is a cosine similarity).
It is stateless, so a problem's vector never depends on the rest of its generation. The
original used SciBERT's pooled output; a sentence-transformers model can stand in where that
package is installed (`--embedding st:MODEL`).

Example:
    vectors = make_embedder("char").embed(["2*x + 1", "sin(x)"])   # shape (2, 1024)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from genprobe.errors import ConfigError


class Embedder(Protocol):
    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One l2-normalized row per text."""
        ...


class CharNgrams:
    """Hashed counts of 1- to 3-character n-grams of the printed problem."""

    name = "char"

    def __init__(self, n_features: int = 1024) -> None:
        self.n_features = n_features
        self._vectorizer: Any = None  # made at the first `embed`: scikit-learn takes seconds
        # to import, and a finished search's rerun embeds nothing

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._vectorizer is None:
            from sklearn.feature_extraction.text import HashingVectorizer

            self._vectorizer = HashingVectorizer(
                analyzer="char", ngram_range=(1, 3), n_features=self.n_features,
                alternate_sign=False, norm="l2", lowercase=False,
            )  # fmt: skip
        return self._vectorizer.transform(list(texts)).toarray().astype(np.float32)


class SentenceTransformer:
    """A sentence-transformers model (an optional extra; loaded on first use)."""

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer as Loader
        except ImportError:
            raise ConfigError(
                "--embedding", "'char' here: sentence-transformers is not installed", f"st:{model}"
            ) from None
        self.name = f"st:{model}"
        self._model = Loader(model)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode(list(texts), normalize_embeddings=True)
        return np.asarray(vectors, dtype=np.float32)


def make_embedder(name: str) -> Embedder:
    """`char` (default) or `st:MODEL`.

    Raises:
        ConfigError: an unknown name, or sentence-transformers missing.
    """
    if name == "char":
        return CharNgrams()
    if name.startswith("st:") and len(name) > 3:
        return SentenceTransformer(name[3:])
    raise ConfigError("--embedding", "char or st:MODEL", name)
