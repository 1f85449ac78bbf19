"""Cost-sensitive evaluation metrics, built on river's metric machinery."""

from __future__ import annotations

import math
import numbers

from river import metrics

__all__ = ["MisclassificationCost"]


def _check_cost(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return number


class MisclassificationCost(metrics.base.BinaryMetric):
    """Average misclassification cost per sample of a binary classifier.

    The measure of the OCSCA paper (its eq. 22): every false negative (a positive predicted
    negative) costs C+, every false positive costs C-, and the metric is the total cost divided
    by the number of samples,

        cost = (C+ FN + C- FP) / n.

    With ``cost_pos = cost_neg = 1`` it is the error rate. Smaller is better. River's sample
    weights (``update(y_true, y_pred, w)``) weight the samples of both the sum and ``n``. The
    costs are the class costs given here: `river.evaluate.progressive_val_score` gives
    the ``w`` of a ``(x, y, {"w": c})`` stream to the model's ``learn_one``, not to the metric.

    The metric is a river `river.metrics.base.BinaryMetric` on a confusion matrix: it
    works with any river classifier in `river.evaluate.progressive_val_score`, combines
    with other classification metrics with ``+`` and can share a confusion matrix with them.

    Parameters
    ----------
    cost_pos
        Cost C+ of misclassifying a positive sample (a false negative).
    cost_neg
        Cost C- of misclassifying a negative sample (a false positive).
    cm
        A confusion matrix to share with other metrics (river's ``cm`` parameter).
    pos_val
        The label of the positive class.

    Examples
    --------

    >>> from river_nrrls.metrics import MisclassificationCost

    >>> y_true = [True, False, True, True, False]
    >>> y_pred = [True, True, False, True, False]

    >>> metric = MisclassificationCost(cost_pos=5.0, cost_neg=1.0)
    >>> for yt, yp in zip(y_true, y_pred):
    ...     metric.update(yt, yp)
    ...     print(metric.get())
    0.0
    0.5
    2.0
    1.5
    1.2

    In a progressive validation, next to river's own metrics:

    >>> from river import evaluate, metrics, stream
    >>> from river_nrrls import NRRLS, datasets

    >>> pima = stream.shuffle(datasets.Pima(), buffer_size=768, seed=42)  # the file is ordered
    >>> metric = MisclassificationCost(cost_pos=5.0, cost_neg=1.0) + metrics.Accuracy()
    >>> evaluate.progressive_val_score(pima, NRRLS(), metric)
    MisclassificationCost: 0.688396
    Accuracy: 74.45%

    """

    _fmt = ",.6f"  # a cost, not a percentage

    def __init__(self, cost_pos: float = 1.0, cost_neg: float = 1.0, cm=None, pos_val=True):
        self._cost_pos = _check_cost("cost_pos", cost_pos)
        self._cost_neg = _check_cost("cost_neg", cost_neg)
        super().__init__(cm=cm, pos_val=pos_val)
        self.cost_pos = cost_pos
        self.cost_neg = cost_neg

    @property
    def bigger_is_better(self) -> bool:
        """``False``: a cost, the lower the better."""
        return False

    def get(self) -> float:
        """``(cost_pos * FN + cost_neg * FP) / n`` over the (weighted) samples; 0 before any."""
        # BinaryMetric.update stores y_true == pos_val and y_pred == pos_val, so the confusion
        # matrix's positive label is always True (whatever pos_val is).
        cm = self.cm
        total = cm.total_weight
        if not total:
            return 0.0
        false_negatives = cm.false_negatives(True)
        false_positives = cm.false_positives(True)
        return (self._cost_pos * false_negatives + self._cost_neg * false_positives) / total
