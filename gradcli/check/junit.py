"""`gradcli check --junitxml FILE`: the run as a JUnit XML report, for CI systems that do not run pytest.

The layout is pytest's (`<testsuites><testsuite name="gradcli">`): one `<testcase>` per case,
`classname` the file and `name` the case; a failed case holds `<failure type=CLASS message="CLASS: reason">` with
the case's text report (the one `gradcli check` prints) as its body; a case with kinks (KINK,
passed or not) holds its kink warnings in `<system-err>`, one `WARNING: ...` line each; a file that
could not be loaded is a `<testcase>` named after the file holding an `<error>`, and a file skipped
(it imports torch, not installed) one holding a `<skipped>`.
"""

from __future__ import annotations

import io
import re
import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..program.running import LoadError
from ..render.console import make_console
from ..render.output_files import written
from .render import report as render
from .results import CaseResult


@dataclass
class JUnitCase:
    """One `<testcase>`: where it is, and its failure (type, message, body) when it failed."""

    classname: str
    name: str
    time: float
    failure: tuple[str, str, str] | None = None
    warnings: list[str] = field(default_factory=list)


def write_junit_xml(
    path: str,
    results: list[CaseResult],
    errors: list[LoadError],
    elapsed: float,
    skipped: list[LoadError] = (),
) -> None:
    """Write the report of one check run to `path` (OSError if it cannot be written)."""
    cases = [
        JUnitCase(
            r.file,
            r.name,
            r.elapsed,
            None if r.passed else (r.verdict, headline(r), text_report(r)),
            list(r.warnings),
        )
        for r in results
    ]
    write_suite(path, cases, errors, elapsed, skipped)


def write_suite(
    path: str, cases: list[JUnitCase], errors: list[LoadError], elapsed: float, skipped: list[LoadError] = ()
) -> None:
    """Write one `<testsuite name="gradcli">` of `cases`, and a testcase per error and skipped file."""
    suite = ET.Element(
        "testsuite",
        name="gradcli",
        tests=str(len(cases) + len(errors) + len(skipped)),
        failures=str(sum(c.failure is not None for c in cases)),
        errors=str(len(errors)),
        skipped=str(len(skipped)),
        time=f"{elapsed:.3f}",
        timestamp=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        hostname=socket.gethostname(),
    )
    for error in errors:
        case = ET.SubElement(suite, "testcase", classname="", name=error.file or "", time="0.000")
        ET.SubElement(case, "error", message=error.headline).text = str(error)
    for file in skipped:
        case = ET.SubElement(suite, "testcase", classname="", name=file.file or "", time="0.000")
        ET.SubElement(case, "skipped", message=file.headline)
    for entry in cases:
        case = ET.SubElement(
            suite, "testcase", classname=entry.classname, name=entry.name, time=f"{entry.time:.3f}"
        )
        if entry.failure is not None:
            kind, message, body = entry.failure
            ET.SubElement(case, "failure", message=message, type=kind).text = body
        if entry.warnings:
            ET.SubElement(case, "system-err").text = "".join(f"WARNING: {w}\n" for w in entry.warnings)
    report = ET.Element("testsuites")
    report.append(suite)
    for element in report.iter():
        element.attrib = {key: xml_safe(value) for key, value in element.attrib.items()}
        element.text = None if element.text is None else xml_safe(element.text)
    ET.indent(report)
    with written(path, "--junitxml", text=True) as handle:
        handle.write(
            '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(report, encoding="unicode") + "\n"
        )


#: What XML 1.0 cannot hold (and DEL), as pytest's junitxml finds it.
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\u007e\u0080-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """`text` with each character XML cannot hold written `#xHH` (not an XML escape, as pytest's
    junitxml shows them): ESC from an exception's colours, BEL in a case name, NUL in a load error,
    a lone surrogate from a name that was not UTF-8."""
    return _NOT_XML.sub(lambda found: f"#x{ord(found.group()):02X}", text)


def headline(result: CaseResult) -> str:
    """One line saying why a case failed: its class and reason."""
    return f"{result.verdict}: {result.reason}"


def text_report(result: CaseResult) -> str:
    """The failure report of one case, as `gradcli check` prints it off a terminal."""
    buffer = io.StringIO()
    render.print_failures(make_console(buffer), [result])
    return buffer.getvalue().rstrip() + "\n"
