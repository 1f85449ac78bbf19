"""Build the vendored ``*.csv.gz`` files of `river_nrrls.datasets` from the raw KEEL files.

A maintainer's script, run by hand from a checkout of the repository; it is not part of the
installed package (the tests load it from here to check that the vendored files are exactly
what it produces).

Input
-----
The raw files of ``data/keel/`` in this repository (their provenance is in
``data/README.md``), the default ``--source``. They are the KEEL ``.dat`` bodies,
gzip-compressed, without header, comma-separated, class label last; except
``german-numeric.csv.gz`` (UCI ``german.data-numeric``: whitespace-separated, label last) and
``spectf.csv.gz`` (UCI SPECTF train + test: comma-separated, CRLF line ends, label FIRST).

Output
------
One ``<name>.csv.gz`` per data set, written to ``river_nrrls/datasets/`` (the default ``--dest``):
UTF-8, ``\\n`` line ends, a header
with the feature names then ``label``, one row per source row in source order. The gzip stream is
written with ``mtime=0`` and no file name so that re-running the script gives identical bytes.

Transformations, in this order, identical for every data set:

1. Rows are kept in file order. Blank lines are skipped. The files hold no missing values (KEEL
   already dropped the rows that had some, which is why e.g. ``housevotes`` has 232 rows and not
   435); the script refuses to run if it finds a ``?`` or an empty cell rather than guess.
2. A nominal attribute (one whose values are category strings, listed per data set in ``SPECS``)
   becomes ONE ordinal number: the code of a value is its rank among the attribute's distinct
   values present in the file, sorted as Python sorts strings (code point order), starting at 0.
   E.g. tic-tac-toe's ``b``, ``o``, ``x`` become 0, 1, 2. Attributes whose values are already
   numeric codes (monk, australian, heart, wisconsin, mammographic, german-numeric) are read as
   numbers.
3. Every feature is min-max scaled to [0, 1] over the whole data set: ``(v - min) / (max - min)``,
   so that the minimum becomes exactly 0 and the maximum exactly 1. A constant column becomes 0.
4. Values are written with ``format(v, ".10g")`` (at most 10 significant digits).
5. The label becomes a bool: ``True`` for the MINORITY class of the file (the script checks that
   the class named in ``SPECS`` is the strict minority).

Usage::

    python data/prepare.py                      # rewrite the vendored files
    python data/prepare.py --check              # exit 1 if any file would change
    python data/prepare.py --source DIR --dest DIR

"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import io
import math
import pathlib
import sys
from collections import Counter
from collections.abc import Sequence

__all__ = ["SPECS", "Spec", "DEFAULT_SOURCE", "DEST", "build_csv", "read_vendored", "main"]

#: Where the raw files are: ``data/keel`` beside this script.
DEFAULT_SOURCE = pathlib.Path(__file__).resolve().parent / "keel"
#: Where the vendored files go: the folder of `river_nrrls.datasets`.
DEST = pathlib.Path(__file__).resolve().parents[1] / "river_nrrls" / "datasets"


@dataclasses.dataclass(frozen=True)
class Spec:
    """How to turn one raw file into one vendored file.

    Parameters
    ----------
    name
        Name of the `river_nrrls.datasets` class.
    source
        Raw file name in the KEEL folder.
    filename
        Vendored file name.
    features
        Feature names, in source column order (label column excluded).
    true_label
        The original class label (as written in the raw file) that becomes ``True``; it must be
        the minority class.
    n_samples
        Expected number of rows.
    nominal
        Names of the features whose values are category strings.
    label_first
        Whether the label is the first column instead of the last.
    whitespace
        Whether columns are separated by whitespace instead of commas.

    """

    name: str
    source: str
    filename: str
    features: tuple[str, ...]
    true_label: str
    n_samples: int
    nominal: tuple[str, ...] = ()
    label_first: bool = False
    whitespace: bool = False


def _numbered(prefix: str, n: int, width: int = 2) -> tuple[str, ...]:
    return tuple(f"{prefix}{i:0{width}d}" for i in range(1, n + 1))


_WDBC_BASE = (
    "radius",
    "texture",
    "perimeter",
    "area",
    "smoothness",
    "compactness",
    "concavity",
    "concave_points",
    "symmetry",
    "fractal_dimension",
)

_SPAMBASE_WORDS = (
    "make address all 3d our over remove internet order mail receive will people report "
    "addresses free business email you credit your font 000 money hp hpl george 650 lab labs "
    "telnet 857 data 415 85 technology 1999 parts pm direct cs meeting original project re edu "
    "table conference"
).split()

_SPAMBASE_CHARS = ("semicolon", "parenthesis", "bracket", "exclamation", "dollar", "hash")

_MUSHROOM = (
    "cap_shape",
    "cap_surface",
    "cap_color",
    "bruises",
    "odor",
    "gill_attachment",
    "gill_spacing",
    "gill_size",
    "gill_color",
    "stalk_shape",
    "stalk_root",
    "stalk_surface_above_ring",
    "stalk_surface_below_ring",
    "stalk_color_above_ring",
    "stalk_color_below_ring",
    "veil_type",
    "veil_color",
    "ring_number",
    "ring_type",
    "spore_print_color",
    "population",
    "habitat",
)

_VOTES = (
    "handicapped_infants",
    "water_project_cost_sharing",
    "adoption_of_the_budget_resolution",
    "physician_fee_freeze",
    "el_salvador_aid",
    "religious_groups_in_schools",
    "anti_satellite_test_ban",
    "aid_to_nicaraguan_contras",
    "mx_missile",
    "immigration",
    "synfuels_corporation_cutback",
    "education_spending",
    "superfund_right_to_sue",
    "crime",
    "duty_free_exports",
    "export_administration_act_south_africa",
)

_TIC_TAC_TOE = tuple(
    f"{row}_{col}" for row in ("top", "middle", "bottom") for col in ("left", "middle", "right")
)

#: One entry per data set, in the order of the paper's Table 2.
SPECS: tuple[Spec, ...] = (
    Spec(
        name="Monks3",
        source="monk-2.csv.gz",
        filename="monks3.csv.gz",
        features=("head_shape", "body_shape", "is_smiling", "holding", "jacket_color", "has_tie"),
        true_label="0",
        n_samples=432,
    ),
    Spec(
        name="Sonar",
        source="sonar.csv.gz",
        filename="sonar.csv.gz",
        features=_numbered("band_", 60),
        true_label="R",
        n_samples=208,
    ),
    Spec(
        name="SpectfHeart",
        source="spectf.csv.gz",
        filename="spectf_heart.csv.gz",
        features=tuple(f"f{i:02d}{phase}" for i in range(1, 23) for phase in ("r", "s")),
        true_label="0",
        n_samples=267,
        label_first=True,
    ),
    Spec(
        name="Heart",
        source="heart.csv.gz",
        filename="heart.csv.gz",
        features=(
            "age",
            "sex",
            "chest_pain_type",
            "resting_blood_pressure",
            "serum_cholesterol",
            "fasting_blood_sugar",
            "resting_ecg",
            "max_heart_rate",
            "exercise_induced_angina",
            "oldpeak",
            "slope",
            "major_vessels",
            "thal",
        ),
        true_label="2",
        n_samples=270,
    ),
    Spec(
        name="Bupa",
        source="bupa.csv.gz",
        filename="bupa.csv.gz",
        features=("mcv", "alkphos", "sgpt", "sgot", "gammagt", "drinks"),
        true_label="1",
        n_samples=345,
    ),
    Spec(
        name="Ionosphere",
        source="ionosphere.csv.gz",
        filename="ionosphere.csv.gz",
        # UCI numbering; KEEL dropped UCI's attribute 2, which is 0 on every row.
        features=("a01", *_numbered("a", 34)[2:]),
        true_label="b",
        n_samples=351,
    ),
    Spec(
        name="Votes",
        source="housevotes.csv.gz",
        filename="votes.csv.gz",
        features=_VOTES,
        true_label="republican",
        n_samples=232,
        nominal=_VOTES,
    ),
    Spec(
        name="Wdbc",
        source="wdbc.csv.gz",
        filename="wdbc.csv.gz",
        features=tuple(f"{base}_{stat}" for stat in ("mean", "se", "worst") for base in _WDBC_BASE),
        true_label="M",
        n_samples=569,
    ),
    Spec(
        name="CreditApproval",
        source="crx.csv.gz",
        filename="credit_approval.csv.gz",
        features=_numbered("a", 15),
        true_label="positive",
        n_samples=653,
        nominal=("a01", "a04", "a05", "a06", "a07", "a09", "a10", "a12", "a13"),
    ),
    Spec(
        name="BreastCancerWisconsin",
        source="wisconsin.csv.gz",
        filename="breast_cancer_wisconsin.csv.gz",
        features=(
            "clump_thickness",
            "cell_size_uniformity",
            "cell_shape_uniformity",
            "marginal_adhesion",
            "single_epithelial_cell_size",
            "bare_nuclei",
            "bland_chromatin",
            "normal_nucleoli",
            "mitoses",
        ),
        true_label="4",
        n_samples=683,
    ),
    Spec(
        name="Australian",
        source="australian.csv.gz",
        filename="australian.csv.gz",
        features=_numbered("a", 14),
        true_label="1",
        n_samples=690,
    ),
    Spec(
        name="Pima",
        source="pima.csv.gz",
        filename="pima.csv.gz",
        features=(
            "pregnancies",
            "glucose",
            "blood_pressure",
            "skin_thickness",
            "insulin",
            "bmi",
            "diabetes_pedigree",
            "age",
        ),
        true_label="tested_positive",
        n_samples=768,
    ),
    Spec(
        name="Mammographic",
        source="mammographic.csv.gz",
        filename="mammographic.csv.gz",
        features=("bi_rads", "age", "shape", "margin", "density"),
        true_label="1",
        n_samples=830,
    ),
    Spec(
        name="TicTacToe",
        source="tic-tac-toe.csv.gz",
        filename="tic_tac_toe.csv.gz",
        features=_TIC_TAC_TOE,
        true_label="negative",
        n_samples=958,
        nominal=_TIC_TAC_TOE,
    ),
    Spec(
        name="German",
        source="german-numeric.csv.gz",
        filename="german.csv.gz",
        features=_numbered("x", 24),
        true_label="2",
        n_samples=1000,
        whitespace=True,
    ),
    Spec(
        name="Spambase",
        source="spambase.csv.gz",
        filename="spambase.csv.gz",
        features=(
            *(f"word_freq_{w}" for w in _SPAMBASE_WORDS),
            *(f"char_freq_{c}" for c in _SPAMBASE_CHARS),
            "capital_run_length_average",
            "capital_run_length_longest",
            "capital_run_length_total",
        ),
        true_label="1",
        n_samples=4597,
    ),
    Spec(
        name="Mushroom",
        source="mushroom.csv.gz",
        filename="mushroom.csv.gz",
        features=_MUSHROOM,
        true_label="p",
        n_samples=5644,
        nominal=_MUSHROOM,
    ),
)

SPECS_BY_NAME: dict[str, Spec] = {spec.name: spec for spec in SPECS}


def read_raw(
    spec: Spec, source: pathlib.Path = DEFAULT_SOURCE
) -> tuple[list[list[str]], list[str]]:
    """Return the raw feature cells (stripped strings) and labels of one source file."""
    text = gzip.decompress((pathlib.Path(source) / spec.source).read_bytes()).decode("utf-8")
    rows: list[list[str]] = []
    labels: list[str] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        cells = line.split() if spec.whitespace else [cell.strip() for cell in line.split(",")]
        if len(cells) != len(spec.features) + 1:
            raise ValueError(f"{spec.source}:{lineno}: {len(cells)} columns")
        if any(cell in ("", "?") for cell in cells):
            raise ValueError(f"{spec.source}:{lineno}: missing value")
        label, features = (cells[0], cells[1:]) if spec.label_first else (cells[-1], cells[:-1])
        rows.append(features)
        labels.append(label)
    if len(rows) != spec.n_samples:
        raise ValueError(f"{spec.source}: {len(rows)} rows, expected {spec.n_samples}")
    return rows, labels


def categories(spec: Spec, source: pathlib.Path = DEFAULT_SOURCE) -> dict[str, list[str]]:
    """Return the sorted categories of each nominal feature (index = ordinal code)."""
    rows, _ = read_raw(spec, source)
    return {
        name: sorted({row[j] for row in rows})
        for j, name in enumerate(spec.features)
        if name in spec.nominal
    }


def _encode_column(values: Sequence[str], nominal: bool, where: str) -> list[float]:
    if nominal:
        codes = {value: float(code) for code, value in enumerate(sorted(set(values)))}
        return [codes[value] for value in values]
    out = [float(value) for value in values]
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{where}: non-finite value")
    return out


def _scale(column: list[float]) -> list[float]:
    lo, hi = min(column), max(column)
    if hi == lo:
        return [0.0] * len(column)
    return [(v - lo) / (hi - lo) for v in column]


def _format(value: float) -> str:
    return format(value, ".10g")


def build_csv(spec: Spec, source: pathlib.Path = DEFAULT_SOURCE) -> str:
    """Return the text of the vendored CSV file of one data set."""
    rows, labels = read_raw(spec, source)

    counts = Counter(labels)
    if len(counts) != 2 or spec.true_label not in counts:
        raise ValueError(f"{spec.source}: labels {dict(counts)}")
    (other,) = set(counts) - {spec.true_label}
    if not counts[spec.true_label] < counts[other]:
        raise ValueError(f"{spec.source}: {spec.true_label!r} is not the minority {dict(counts)}")
    unknown = set(spec.nominal) - set(spec.features)
    if unknown:
        raise ValueError(f"{spec.name}: unknown nominal features {sorted(unknown)}")

    columns = [
        _scale(
            _encode_column([row[j] for row in rows], name in spec.nominal, f"{spec.source}:{name}")
        )
        for j, name in enumerate(spec.features)
    ]

    out = io.StringIO()
    out.write(",".join((*spec.features, "label")) + "\n")
    for i, label in enumerate(labels):
        cells = [_format(column[i]) for column in columns]
        cells.append(str(label == spec.true_label))
        out.write(",".join(cells) + "\n")
    return out.getvalue()


def compress(text: str) -> bytes:
    """Gzip ``text`` reproducibly (no time stamp, no file name)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as f:
        f.write(text.encode("utf-8"))
    return buffer.getvalue()


def read_vendored(spec: Spec, dest: pathlib.Path = DEST) -> str:
    """Return the decompressed text of a vendored file."""
    return gzip.decompress((pathlib.Path(dest) / spec.filename).read_bytes()).decode("utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=pathlib.Path, default=DEFAULT_SOURCE)
    parser.add_argument("--dest", type=pathlib.Path, default=DEST)
    parser.add_argument(
        "--check", action="store_true", help="only compare; exit 1 if a file differs"
    )
    args = parser.parse_args(argv)

    status = 0
    for spec in SPECS:
        text = build_csv(spec, args.source)
        target = args.dest / spec.filename
        if args.check:
            same = target.exists() and read_vendored(spec, args.dest) == text
            print(f"{spec.filename}: {'ok' if same else 'DIFFERS'}")
            status |= not same
        else:
            data = compress(text)
            target.write_bytes(data)
            print(f"{spec.filename}: {spec.n_samples} rows, {len(data):,} bytes")
    return status


if __name__ == "__main__":
    sys.exit(main())
