"""The census of a CSV file: runs of whole records counted at once give exactly the count of
every line read alone, whatever the bytes (quotes, doubled quotes, the three delimiters, lone
carriage returns, blank lines, a BOM, records too long, lines cut across blocks)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from quizgym.grading import census
from quizgym.grading.census import Census, count_csv
from quizgym.grading.rows import MAX_RECORD

DELIMITERS = (",", ";", "\t")

# (file, delimiter, its census): counted by hand from the rules in quizgym/grading/readers/text.py
CASES = [
    (b'h,h\n"2,30",x\n1,"0,5"\r\n', ",", Census(records=2)),
    (b'h;h\n"2;30";x\n"a ""b"" c";\n', ";", Census(records=2)),
    (b'h\th\n"a\tb"\t"c"\n', "\t", Census(records=1)),
    (b'h,h\n""\n"  "\r\n"\t"\n', ",", Census(records=0, blank=3)),  # lone quoted blanks
    (b'h,h\n""""\n" x "\n"",""\n', ",", Census(records=3)),  # a quote, a letter, two cells
    (b'h\th\n""\t\n', "\t", Census(records=1)),  # the tab is the delimiter: two cells
    (b"h,h\n\n \t\n\r\n,\n", ",", Census(records=1, blank=3)),
    (b'h,h\na"b,c\n"a"b,c\nx,"y"z\n', ",", Census(records=3)),  # quotes kept as they are
    (b'h,h\n"a" "b"\nx,y""\n ""\n', ",", Census(records=3)),  # so are these
    (b'h,h\n" "  \n"" \t\r\n', ",", Census(records=0, blank=2)),  # blanks after a blank value
    (b'h\th\n" "\t\n', "\t", Census(records=1)),  # ... but a tab delimiter makes two cells
    (b'h,h\nx,"a\nb"\nd,e\n', ",", Census(records=2, multiline=True)),
    (b'h,h\n"a\nb",c\n', ",", Census(records=2, broken=1)),  # b",c is a row of its own
    (b'h,h\nx,"b\rc"\n', ",", Census(records=1, multiline=True)),  # a lone CR ends a line
    (b'h,h\nx,"a\ny,z\n', ",", Census(records=2, broken=1)),  # swallows a row: rejected
    (b'h,h\nx,"never closed\n', ",", Census(records=1, broken=1)),
    (b'\xef\xbb\xbf"h",h\n"1",2', ",", Census(records=1)),  # a BOM, no final line feed
]


@pytest.mark.parametrize(("data", "delimiter", "expected"), CASES)
def test_the_census_of_small_files(
    tmp_path: Path, data: bytes, delimiter: str, expected: Census
) -> None:
    path = tmp_path / "c.csv"
    path.write_bytes(data)
    assert count_csv(path, delimiter=delimiter) == expected
    assert census._count_csv(path, delimiter=delimiter, bulk=False) == expected


def test_a_class_with_decimal_commas_is_counted_in_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The point of the runs: a line holding a quote is not read alone when it is a whole record.
    rows = [f's{k},"{k % 7},{k % 3}0",{k}",cm,"say ""{k}""",' for k in range(5000)]
    rows[2000] = 's2000,"first line\nsecond line",1,,,'  # one record over two lines
    path = tmp_path / "c.csv"
    path.write_bytes(("student,a,b,c,d,e\r\n" + "\r\n".join(rows) + "\r\n").encode())
    alone: list[bytes] = []
    real = census._CsvCount.raw

    def raw(count: census._CsvCount, line: bytes) -> None:
        alone.append(line)
        real(count, line)

    monkeypatch.setattr(census._CsvCount, "raw", raw)
    assert count_csv(path) == Census(records=5000, multiline=True)
    assert alone == [b"student,a,b,c,d,e\r\n", b's2000,"first line\n', b'second line",1,,,\r\n']


# CSV-ish pieces: quotes and doubled quotes, the delimiters, line ends, blanks, quoted values
PIECES = st.sampled_from(
    [
        b'"', b'""', b'"""', b",", b";", b"\t", b"\r", b"\n", b"\r\n", b"\n\n", b" ", b"\x0b",
        b"\x0c", b"a", b"7", b"2,30", b'"2,30"', b'"2;30"', b'"a\tb"', b'"a ""b"" c"', b'" "',
        b'"x"y', b"x" * 45, b'"' + b"y" * 45 + b'"', b"\xef\xbb\xbf", b"\xe9", b"\x00",
    ]
)  # fmt: skip
LINE_ENDS = st.sampled_from([b"\n", b"\r\n", b"\r"])


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[bytes, str]:
    """A file of records (cells quoted or not, some of them odd) and noise between them, and
    its delimiter."""
    delimiter = draw(st.sampled_from(DELIMITERS))
    mark = delimiter.encode()
    cell = (
        st.sampled_from([b"", b"a", b"2.30", b" ", b"x y", b"s1"])
        | st.lists(PIECES, max_size=3).map(b"".join)
        | st.lists(PIECES, max_size=3).map(lambda p: b'"' + b"".join(p).replace(b'"', b'""') + b'"')
    )
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.integers(0, 5)) == 0:
            lines.append(b"".join(draw(st.lists(PIECES, max_size=6))))
        else:
            cells = draw(st.lists(cell, min_size=1, max_size=4))
            lines.append(mark.join(cells) + draw(LINE_ENDS))
    data = b"".join(lines)
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data, delimiter


@settings(
    max_examples=400, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(
    case=csv_files()
    | st.tuples(st.lists(PIECES, max_size=30).map(b"".join), st.sampled_from(DELIMITERS)),
    block=st.sampled_from([census._BLOCK, 1, 7, 64]),
    limit=st.sampled_from([MAX_RECORD, 40, 100]),
)
@example(case=(b'h,h\n"2,30",x\n' * 20, ","), block=7, limit=40)
@example(case=(b'h;h\r\n"a;b";"c""d"\r\n\r\n \r\nx;"y\rz"\r\n" " \n', ";"), block=5, limit=40)
def test_runs_count_as_every_line_read_alone(
    case: tuple[bytes, str], block: int, limit: int
) -> None:
    # blocks as small as a byte cut lines (and CRLF pairs) anywhere; a small MAX_RECORD makes
    # records and runs too long common
    with (
        tempfile.TemporaryDirectory() as folder,
        mock.patch.object(census, "_BLOCK", block),
        mock.patch.object(census, "MAX_RECORD", limit),
    ):
        data, delimiter = case
        path = Path(folder) / "c.csv"
        path.write_bytes(data)
        assert count_csv(path, delimiter=delimiter) == census._count_csv(
            path, delimiter=delimiter, bulk=False
        )
