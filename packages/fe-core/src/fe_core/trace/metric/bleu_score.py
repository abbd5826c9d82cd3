"""`BleuScore`: corpus-level BLEU of token sequences, with Chen & Cherry's smoothing for missing n-gram matches."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from fe_core.data import Data
from fe_core.export import fe_export
from fe_core.trace.metric._stat_metric import StatMetric

__all__ = ["BleuScore", "get_formated_list", "get_formated_reference"]

_SMOOTHING_K = 5  # Chen & Cherry's constant for smoothing method 4


@fe_export("fe.trace.metric.bleu_score.get_formated_list")
def get_formated_list(input_data: np.ndarray) -> List[str]:
    """Filter the padding (elements with 0 value) and typecast the elements of list to str.

    Args:
        input_data: A sequence of token ids.

    Returns:
        Formated list.

    Example:
        >>> get_formated_list(np.array([4, 7, 0, 0]))
        ['4', '7']
    """
    return [str(token) for token in np.asarray(input_data).ravel().tolist() if token != 0]


@fe_export("fe.trace.metric.bleu_score.get_formated_reference")
def get_formated_reference(input_data: np.ndarray) -> List[List[str]]:
    """Encapsulate formated list in another list.

    Args:
        input_data: A sequence of token ids.

    Returns:
        List encapsulated formated list.

    Example:
        >>> get_formated_reference(np.array([4, 7, 0]))
        [['4', '7']]
    """
    return [get_formated_list(input_data)]


def _compact(tokens: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Drop the zeros (padding) of each row, keeping order: (rows padded with zeros at the end, lengths)."""
    nonzero = tokens != 0
    order = np.argsort(~nonzero, axis=1, kind="stable")
    return np.take_along_axis(tokens, order, axis=1), nonzero.sum(axis=1)


def _ngram_rows(tokens: np.ndarray, lengths: np.ndarray, n: int) -> np.ndarray:
    """All n-grams of each row as rows (sentence index, t1..tn), padding excluded."""
    if tokens.shape[1] < n:
        return np.zeros((0, n + 1), dtype=np.int64)
    windows = np.lib.stride_tricks.sliding_window_view(tokens, n, axis=1)  # (B, L-n+1, n)
    valid = np.arange(windows.shape[1])[None, :] + n <= lengths[:, None]
    rows, starts = np.nonzero(valid)
    return np.concatenate([rows[:, None], windows[rows, starts]], axis=1).astype(np.int64)


def _clipped_matches(hyp_rows: np.ndarray, ref_rows: np.ndarray) -> int:
    """Sum over sentences and distinct hypothesis n-grams of min(count in hypothesis, count in reference)."""
    if hyp_rows.shape[0] == 0 or ref_rows.shape[0] == 0:
        return 0
    both = np.concatenate([hyp_rows, ref_rows], axis=0)
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    size = int(inverse.max()) + 1
    hyp_counts = np.bincount(inverse[:hyp_rows.shape[0]], minlength=size)
    ref_counts = np.bincount(inverse[hyp_rows.shape[0]:], minlength=size)
    return int(np.minimum(hyp_counts, ref_counts).sum())


@fe_export("fe.trace.metric.bleu_score.BleuScore", "fe.trace.metric.BleuScore")
class BleuScore(StatMetric):
    """Calculate the Bleu score for a nlp task and report it back to the logger.

    Calculate BLEU score (Bilingual Evaluation Understudy) from Papineni, Kishore, Salim Roukos, Todd Ward, and
    Wei-Jing Zhu. 2002. "BLEU: a method for automatic evaluation of machine translation." In Proceedings of ACL.
    https://www.aclweb.org/anthology/P02-1040.pdf

    The BLEU metric scores a translation on a scale of 0 to 1: the closer to 1, the more overlap there is with the
    reference translations. The default calculates a score for up to 4-grams using uniform weights (BLEU-4); use
    `n_gram=2` for BLEU-2.

    The score is corpus-level: clipped n-gram matches and hypothesis n-gram counts are summed over every sentence of
    the epoch before the precisions are taken, the brevity penalty compares the summed hypothesis length with the
    summed (closest) reference length, and the score is `BP * exp(sum_n w_n log p_n)`. If no unigram matches at all,
    BLEU is 0. A higher-order precision with no match is smoothed (Chen and Cherry's method 4): the k-th such order
    gets `1 / (2^k * K / ln(c))` matches, with K = 5 and c the total hypothesis length, so shorter translations get
    proportionally smaller smoothed counts.

    Inputs: `true_key` holds reference token ids (N, L), `pred_key` predicted token ids (N, L') or token scores
    (N, L', V) (argmax over the last axis). Zeros are padding and are removed before counting.

    Sufficient statistics (per dataset, summed across batches, datasets or processes): `numerators` and
    `denominators` (clipped matches and hypothesis n-grams, per order), `hyp_len` and `ref_len`.

    Args:
        true_key: Name of the key that corresponds to ground truth in the batch dictionary.
        pred_key: Name of the key that corresponds to predicted score in the batch dictionary.
        mode: What mode(s) to execute this Trace in. For example, "train", "eval", "test", or "infer". To execute
            regardless of mode, pass None. To execute in all modes except for a particular one, you can pass an argument
            like "!infer" or "!train".
        ds_id: What dataset id(s) to execute this Trace in. To execute regardless of ds_id, pass None. To execute in all
            ds_ids except for a particular one, you can pass an argument like "!ds1".
        output_name: Name of the key to store back to the state.
        n_gram: Number of grams used to calculate bleu score.
        per_ds: Whether to automatically compute this metric individually for every ds_id it runs on, in addition to
            computing an aggregate across all ds_ids on which it runs. This is automatically False if `output_name`
            contains a "|" character.

    Raises:
        ValueError: If `n_gram` is not a positive integer.
    """

    reductions = {"numerators": "sum", "denominators": "sum", "hyp_len": "sum", "ref_len": "sum"}

    def __init__(self,
                 true_key: str,
                 pred_key: str,
                 mode: Union[None, str, Iterable[str]] = ("eval", "test"),
                 ds_id: Union[None, str, Iterable[str]] = None,
                 output_name: str = "bleu_score",
                 n_gram: int = 4,
                 per_ds: bool = True) -> None:
        super().__init__(inputs=[true_key, pred_key], outputs=output_name, mode=mode, ds_id=ds_id, per_ds=per_ds)
        self.n_gram = n_gram
        self.weights = self.get_output_weights()
        self._current: Dict[str, np.ndarray] = {}

    @property
    def true_key(self) -> str:
        """The key of the reference sentences."""
        return self.inputs[0]

    @property
    def pred_key(self) -> str:
        """The key of the predicted sentences."""
        return self.inputs[1]

    def get_output_weights(self) -> Tuple[float, ...]:
        """Generate weights tuple based on n_gram.

        Returns:
            Tuple of n_gram weights.

        Raises:
            ValueError: When n_gram provided is less than or equal to 0.
        """
        if isinstance(self.n_gram, bool) or not isinstance(self.n_gram, (int, np.integer)) or self.n_gram <= 0:
            raise ValueError(f"BleuScore n_gram must be a positive integer, got {self.n_gram!r}")
        return tuple(1.0 / self.n_gram for _ in range(int(self.n_gram)))

    def on_epoch_begin(self, data: Data) -> None:
        super().on_epoch_begin(data)

    # ----------------------------------------------------------------- corpus statistics -> score
    def _totals(self, stats: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        if stats is None:
            stats = self.merged(list(self.stats))
        if not stats:
            return {"numerators": np.zeros(self.n_gram, np.int64), "denominators": np.zeros(self.n_gram, np.int64),
                    "hyp_len": np.array(0), "ref_len": np.array(0)}
        return stats

    def get_brevity_penalty(self, stats: Optional[Dict[str, Any]] = None) -> float:
        """Calculate the brevity penalty of the corpus.

        Args:
            stats: Statistics to use (default: all of the epoch so far).

        Returns:
            Brevity penalty for corpus.
        """
        totals = self._totals(stats)
        hyp_len, ref_len = int(totals["hyp_len"]), int(totals["ref_len"])
        if hyp_len > ref_len:
            return 1.0
        if hyp_len == 0:
            return 0.0
        return math.exp(1 - ref_len / hyp_len)

    def get_smoothened_modified_precision(self, stats: Optional[Dict[str, Any]] = None) -> List[float]:
        """Calculate the smoothened modified precision.

        Args:
            stats: Statistics to use (default: all of the epoch so far).

        Returns:
            List of smoothened modified precision of n_grams.
        """
        totals = self._totals(stats)
        numerators = totals["numerators"].astype(np.float64)
        denominators = np.maximum(totals["denominators"], 1).astype(np.float64)
        hyp_len = int(totals["hyp_len"])
        precisions = []
        smoothed = 1
        for numerator, denominator in zip(numerators, denominators):
            if numerator == 0 and hyp_len > 1:
                numerator = 1 / (2 ** smoothed * _SMOOTHING_K / math.log(hyp_len))
                smoothed += 1
            precisions.append(float(numerator / denominator))
        return precisions

    def get_corpus_bleu_score(self, stats: Optional[Dict[str, Any]] = None) -> float:
        """Calculate the bleu score using corpus level brevity penalty and geometric average precision.

        Args:
            stats: Statistics to use (default: all of the epoch so far).

        Returns:
            Corpus level bleu score.
        """
        totals = self._totals(stats)
        if int(totals["numerators"][0]) == 0:
            return 0.0
        precisions = self.get_smoothened_modified_precision(totals)
        if min(precisions) <= 0:
            return 0.0
        log_mean = sum(w * math.log(p) for w, p in zip(self.weights, precisions))
        return float(self.get_brevity_penalty(totals) * math.exp(log_mean))

    # ----------------------------------------------------------------- batch statistics
    def batch_precision_parameters(self, references: Sequence[np.ndarray], hypotheses: Sequence[np.ndarray]
                                   ) -> List[float]:
        """Calculate modified precision per n_gram for input references and hypotheses combinations.

        Counts are computed for the whole batch at once with numpy and kept as this batch's statistics.

        Args:
            references: Ground truth sentences (token ids, 0 = padding), one per hypothesis.
            hypotheses: Predicted sentences (token ids, 0 = padding).

        Returns:
            The batch's modified precision of each n-gram order (clipped matches / hypothesis n-grams).
        """
        refs, ref_lengths = _compact(_pad_rows(references))
        hyps, hyp_lengths = _compact(_pad_rows(hypotheses))
        if refs.shape[0] != hyps.shape[0]:
            raise ValueError(f"{refs.shape[0]} reference sentences but {hyps.shape[0]} predicted sentences")
        numerators = np.zeros(self.n_gram, dtype=np.int64)
        denominators = np.zeros(self.n_gram, dtype=np.int64)
        for order in range(1, self.n_gram + 1):
            hyp_rows = _ngram_rows(hyps, hyp_lengths, order)
            numerators[order - 1] = _clipped_matches(hyp_rows, _ngram_rows(refs, ref_lengths, order))
            denominators[order - 1] = hyp_rows.shape[0]
        self._current = {"numerators": numerators, "denominators": denominators,
                         "hyp_len": np.array(int(hyp_lengths.sum()), dtype=np.int64),
                         "ref_len": np.array(int(ref_lengths.sum()), dtype=np.int64)}
        return [float(n / max(d, 1)) for n, d in zip(numerators, denominators)]

    def batch_stats(self, data: Data) -> Dict[str, np.ndarray]:
        y_true = np.asarray(data[self.true_key])
        y_pred = np.asarray(data[self.pred_key])
        if y_pred.ndim == y_true.ndim + 1:
            y_pred = np.argmax(y_pred, axis=-1)
        self.batch_precision_parameters(y_true, y_pred)
        stats, self._current = self._current, {}
        return stats

    def compute(self, stats: Dict[str, Any]) -> float:
        return self.get_corpus_bleu_score(stats)


def _pad_rows(sentences: Union[np.ndarray, Sequence[np.ndarray]]) -> np.ndarray:
    """Sentences as one int64 (N, L) array, ragged ones padded with zeros."""
    if isinstance(sentences, np.ndarray) and sentences.ndim == 2:
        return sentences.astype(np.int64, copy=False)
    rows = [np.asarray(sentence).ravel() for sentence in sentences]
    width = max((row.size for row in rows), default=0)
    out = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        out[i, :row.size] = row
    return out
