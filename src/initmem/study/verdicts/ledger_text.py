"""How the ledger is told: the first screen's table and answer, an exploration's rows beside the record's, and
the verdict boxes of the chapters, all from a :func:`initmem.study.verdicts.claims.reproduction_table` (a pandas DataFrame)."""

from __future__ import annotations

from typing import Any

from ...base.numbers import decimal, p_text, typeset
from .ledger import claim_record
from .rules import INCONCLUSIVE, PREMISE_NOT_MET, STRENGTH, VERDICTS

__all__ = [
    "glance_table",
    "against_record",
    "answer",
    "count_sentence",
    "verdict_box",
    "verdict_table",
    "judged_table",
]

# --- the first screen ---------------------------------------------------------------------------------------------
#: The paper's side of each row, in a few words (the glance table's "paper" column), besides those that give the
#: paper's number (:func:`_paper_short`).
_PAPER_SHORT = {
    "C2 Adam": "minimal (0 pp)",
    "C2 AdamW": "minimal (0 pp)",
    "C3 final predictor": "unchanged after 5,000 epochs",
    "C3 selected predictor": "unchanged after 5,000 epochs",
    "C4 larger lr": "near 0 pp",
    "C4 L2": "near 0 pp",
    "C4 both": "near 0 pp",
    "C5 equal steps": "larger with b",
    "C5 equal epochs": "larger with b",
    "C6": "< 99.5 % train acc at large σ_w",
    "C7": "SGD's norm coupled, not adaptive",
    "B1": "boundary at x = 0 (theory, beyond the paper)",
}


def _paper_short(key: str) -> str:
    """The paper's side of row ``key`` in a few words; C1's and Muon's numbers read from their claims' records."""
    if key == "C1":
        return f"{claim_record('C1')['values']['']:g} pp"
    if key == "C2 Muon":
        return f"about {claim_record('C2')['values']['Muon']:g} pp"
    return _PAPER_SHORT.get(key, "")


#: What a row's headline number measures: the size where the paper gives a number, else the direction effect.
_OURS_SHORT = {
    "C1": "SGD's spread",
    "C2": "its spread",
    "C3": "change of spread",
    "C4": "spread with the lever",
    "C5": "larger b minus smaller b",
    "C6": "depth gap in train acc, largest minus smallest σ_w",
    "C7": "SGD slope minus adaptive",
    "B1": "fitted boundary x0",
}
#: What the direction effect that a verdict tests measures, where it is not the headline number itself.
_EFFECT_SHORT = {
    "C2": "SGD's spread minus its",
    "C4": "spread without the lever minus with it",
    "B1": "gap against lambda within each lr, mean Spearman rho",
}


def _number(centre: Any, low: Any, high: Any, unit: str) -> str:
    """``centre`` with its interval, in the row's unit (pp to one decimal, other units to two; the book's number
    format, :func:`initmem.base.numbers.decimal`)."""
    if not _given(centre):
        return "not measured"
    unit, digits = (" pp", 1) if unit == "pp" else ("", 2)
    interval = f" [{decimal(low, digits)}, {decimal(high, digits)}]" if _given(low) and _given(high) else ""
    return f"{decimal(centre, digits)}{unit}{interval}"


def _ours_cell(row: Any, describe: bool = True) -> str:
    """A row's headline number with its interval: the size where the paper gives a number, else the effect; with
    ``describe``, followed by what it measures (and of which predictor, where the row names one)."""
    sized = _given(row["band_low"])
    centre, low, high = (
        (row["size"], row["size_low"], row["size_high"])
        if sized
        else (row["effect"], row["effect_low"], row["effect_high"])
    )
    text = _number(centre, low, high, row["unit"])
    predictor = row.get("predictor", "")
    what = _OURS_SHORT[row["claim"]] + (f", {predictor} predictor" if predictor else "")
    return text + (f" ({what})" if describe and _given(centre) else "")


def _effect_cell(row: Any) -> str:
    """The direction effect the verdict tested, with what it measures; "the same" where it is the headline number."""
    if row["claim"] not in _EFFECT_SHORT:
        return "the same"
    text = _number(row["effect"], row["effect_low"], row["effect_high"], row["unit"])
    return text + (f" ({_EFFECT_SHORT[row['claim']]})" if _given(row["effect"]) else "")


def glance_table(table: Any) -> Any:
    """The first screen's table of a :func:`reproduction_table`: one row per ledger row with the paper's number, ours
    with its 95 % interval (the size where the paper gives a number), the direction effect the verdict tested, and
    the verdict."""
    import pandas as pd

    rows = {
        "paper": [_paper_short(key) for key in table.index],
        "ours [95 % CI]": [_ours_cell(row) for _, row in table.iterrows()],
        "effect tested [95 % CI]": [_effect_cell(row) for _, row in table.iterrows()],
        "verdict": list(table["verdict"]),
    }
    return pd.DataFrame(rows, index=pd.Index(list(table.index), name="claim"))


def against_record(table: Any, record: Any) -> Any:
    """An exploration's rows (``table``, a :func:`reproduction_table`) beside the committed record's (``record``, the
    same claims measured on the record): what each row measures, the record's number with its 95 % interval, this
    exploration's, and the verdict, ``"reproduced in size"`` or ``"record → here"`` where it changed."""
    import pandas as pd

    keys = list(table.index)
    theirs = {key: record.loc[key] for key in keys if key in record.index}
    rows = {
        "measures": [_OURS_SHORT[table.loc[key, "claim"]] for key in keys],
        "committed record [95 % CI]": [_ours_cell(theirs[key], False) if key in theirs else "–" for key in keys],
        "this page [95 % CI]": [_ours_cell(table.loc[key], False) for key in keys],
        "verdict": [
            _verdict_change(theirs[key]["verdict"] if key in theirs else None, table.loc[key, "verdict"])
            for key in keys
        ],
    }
    return pd.DataFrame(rows, index=pd.Index(keys, name="claim"))


def _verdict_change(record: str | None, here: str) -> str:
    return here if record in (None, here) else f"{record} → {here}"


def _judged(row: Any) -> str:
    """``"its final predictor; "`` where a row names the predictor its verdict judged, else ``""``."""
    predictor = row.get("predictor", "")
    return f"its {'validation-selected' if predictor == 'selected' else predictor} predictor; " if predictor else ""


def answer(table: Any, preset: str) -> str:
    """Three sentences that answer the book's question from a :func:`reproduction_table`: SGD's memory (C1), the
    adaptive optimizers' (C2), and the count of verdicts (:func:`count_sentence`); in the book's number format."""
    parts = []
    if "C1" in table.index and _given(table.loc["C1", "effect"]):
        c1 = table.loc["C1"]
        parts.append(
            f"At the {preset} preset, low-learning-rate SGD keeps a cross-fitted spread of "
            f"{decimal(c1['effect'])} pp [95 % CI {decimal(c1['effect_low'])}, {decimal(c1['effect_high'])}] across the "
            f"initialization scales ({_judged(c1)}paper: {_paper_short('C1')}): {c1['verdict']}."
        )
    adaptive = [
        key for key in ("C2 Adam", "C2 AdamW", "C2 Muon") if key in table.index and _given(table.loc[key, "size"])
    ]
    if adaptive:
        spreads = ", ".join(
            f"{key.split()[1]} {decimal(table.loc[key, 'size'])} pp ({table.loc[key, 'verdict']})" for key in adaptive
        )
        parts.append(
            f"The adaptive optimizers keep less: {spreads} (paper: minimal, {_paper_short('C2 Muon')} for Muon)."
        )
    parts.append(f"{count_sentence(table)}; each undecided row says what would decide it.")
    return " ".join(parts)


def count_sentence(table: Any) -> str:
    """How many rows of a :func:`reproduction_table` earned each verdict, every verdict of
    :data:`initmem.study.verdicts.rules.VERDICTS` named in its order (zero counts too), so the counts add up to the rows:
    ``"Of the ledger's 14 rows: 4 reproduced in size, 3 reproduced in direction, ..., 2 inconclusive"``."""
    counts = table["verdict"].value_counts()
    return f"Of the ledger's {len(table)} rows: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in VERDICTS)


# --- rendering for the chapters ------------------------------------------------------------------------------
def verdict_box(table: Any, claims: str | list[str]) -> str:
    """MyST text summarising the rows of ``claims`` (claim names like ``"C2"``, or row keys) of a
    :func:`reproduction_table` for a chapter: per claim its question and the paper's statement, a small table with
    each row's direction effect, size against the band and verdict (:func:`verdict_table`), and the long explanation
    (each row's reason, ours, clocks and note, and the claim's rule) in a collapsed block (a MyST dropdown); in the
    book's number format (:func:`initmem.base.numbers.typeset`)."""
    claims = [claims] if isinstance(claims, str) else list(claims)
    blocks = []
    for claim in claims:
        own = table[(table["claim"] == claim) | (table.index == claim)]
        if own.empty:
            continue
        first = own.iloc[0]
        details = [line for key, row in own.iterrows() for line in _explanation(key, row)]
        blocks.append(
            "\n".join(
                [
                    f"**{first['claim']}.** {_heading_math(first['question'])}",
                    "",
                    f"Paper: {first['paper']}.",
                    "",
                    verdict_table(own),
                    "",
                    f":::{{dropdown}} {first['claim']}: why, ours in full, the rule",
                    *details,
                    f"- Rule: {first['rule']}.",
                    ":::",
                ]
            )
        )
    return typeset("\n\n".join(blocks))


def _explanation(key: str, row: Any) -> list[str]:
    """A row's long explanation for the collapsed block: the verdict with its reason (and the seeds that would decide
    an undecided row), ours, the clocks and the note."""
    label = f"{key}: " if row["part"] else ""
    lines = [f"- {label}**{row['verdict']}** ({row['reason']}).{_needed(row, ' About {} seeds would decide it')}"]
    lines.append(f"  Ours ({row['scale']}): {row['ours']}.")
    if row["clocks"]:
        lines.append(f"  Clocks: {row['clocks']}.")
    if row["note"]:
        lines.append(f"  Note: {row['note']}.")
    return lines


def _needed(row: Any, text: str) -> str:
    """``text`` with the seeds an inconclusive row would need, at the observed mean and spread and how they were
    projected; ``""`` for any other row."""
    if row["verdict"] != INCONCLUSIVE or not _given(row["seeds_needed"]):
        return ""
    return text.format(int(row["seeds_needed"])) + f" at the observed mean and spread ({_PROJECTION})."


def verdict_table(rows: Any) -> str:
    """Rows of a :func:`reproduction_table` (one claim's) as a MyST table, one line each: the direction effect with its
    95 % interval and noise p and what the rule read in it, the size against the band where the paper gives a
    number, and the verdict."""
    lines = [
        "| | direction effect [95 % CI] | noise p | size [95 % CI] · band | verdict |",
        "|---|---|---|---|---|",
    ]
    for key, row in rows.iterrows():
        direction, size = _sides(row)
        effect = _number(row["effect"], row["effect_low"], row["effect_high"], row["unit"])
        measured = (
            f"{_number(row['size'], row['size_low'], row['size_high'], row['unit'])} · "
            f"[{decimal(row['band_low'], 1)}, {decimal(row['band_high'], 1)}]: {size}"
            if _given(row["band_low"])
            else "–"
        )
        lines.append(f"| {key} | {effect}: {direction} | {_p(row)} | {measured} | **{row['verdict']}** |")
    return "\n".join(lines)


def _p(row: Any) -> str:
    return p_text(row["p_value"]) if _given(row["p_value"]) else "–"


def _sides(row: Any) -> tuple[str, str]:
    """What the rule read in a row's direction effect (holds, fails, undecided, or not judged where a premise is not
    met) and in its size (inside or outside the band, straddles an edge, or not reached)."""
    direction, size = STRENGTH.get(row["verdict"], (0, 0))
    if row["verdict"] == PREMISE_NOT_MET:
        return "not judged", "not judged"
    return _DIRECTION_SIDE[direction], _SIZE_SIDE[size] if direction == 1 else "not reached"


#: The plain-text symbols of the ledger's questions and how a heading writes them (as the prose does: MyST math).
_HEADING_SYMBOLS = (
    ("T_L2 = ln(|W0| / |W*|)", r"$T_{L2} = \ln(\|W_0\|/\|W^*\|)$"),
    ("sigma_w", r"$\sigma_w$"),
)


def _heading_math(text: str) -> str:
    """``text`` (a ledger question, plain text) with its symbols written as MyST math, as the chapters' prose and
    headings write them: ``"... at large sigma_w?"`` -> ``"... at large $\\sigma_w$?"``."""
    for plain, math in _HEADING_SYMBOLS:
        text = text.replace(plain, math)
    return text


#: How the seeds an inconclusive row needs are projected (:func:`initmem.study.verdicts.rules.seeds_to_decide`).
_PROJECTION = "projected with Student-t critical values: a lower bound where the interval is calibrated"


_DIRECTION_SIDE = {1: "holds", -1: "fails", 0: "undecided"}
_SIZE_SIDE = {1: "inside the band", -1: "outside the band", 0: "straddles an edge"}


def judged_table(row: Any) -> str:
    """A row of a :func:`reproduction_table` as a short MyST table: the direction effect and the size, each with its
    estimate, 95 % interval, noise p and band, what the rule made of it (:func:`_sides`), and the verdict (plus, for
    an undecided row, the seeds that would decide it); in the book's number format."""
    direction, size = _sides(row)
    margin = f"no effect within ±{row['margin']:g}" if _given(row["margin"]) else "–"
    lines = [
        "| | estimate [95 % CI] | noise p | band | the rule reads |",
        "|---|---|---|---|---|",
        f"| direction effect ({_EFFECT_SHORT.get(row['claim'], _OURS_SHORT[row['claim']])}) | "
        f"{_number(row['effect'], row['effect_low'], row['effect_high'], row['unit'])} | {_p(row)} | {margin} | "
        f"{direction} |",
    ]
    if _given(row["band_low"]):
        lines.append(
            f"| size ({_OURS_SHORT[row['claim']]}) | {_number(row['size'], row['size_low'], row['size_high'], row['unit'])}"
            f" | – | [{row['band_low']:g}, {row['band_high']:g}] around {(row['band_low'] + row['band_high']) / 2:g} | "
            f"{size} |"
        )
    needed = _needed(row, " (about {} seeds would decide it").removesuffix(".")
    lines.append(f"| **verdict** | **{row['verdict']}**{needed + ')' if needed else ''} | | | |")
    return typeset("\n".join(lines))


def _given(value: Any) -> bool:
    """Whether a table cell holds a value (not None, NaN or pandas' NA)."""
    import pandas as pd

    return value is not None and not bool(pd.isna(value))
