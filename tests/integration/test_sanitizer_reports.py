"""The teardown check of conftest.py (sanitizer_reports) finds what ASan,
UBSan and LeakSanitizer print in a gateway's log, and only once."""
import pytest

from conftest import Gateway

REPORTS = [
    "==123==ERROR: AddressSanitizer: stack-buffer-overflow on address 0x7ffd",
    "gateway/session/session_relay.c:88:5: runtime error: index 1600 out of bounds",
    "==123==ERROR: LeakSanitizer: detected memory leaks",
]


def log_gateway(tmp_path, text):
    gw = Gateway.__new__(Gateway)  # only the log: no process
    gw.log_path = tmp_path / "moat.log"
    gw.log_path.write_text(text)
    gw.log_checked = 0
    return gw


@pytest.mark.parametrize("report", REPORTS)
def test_a_report_is_found_once(tmp_path, report):
    gw = log_gateway(tmp_path, "moat: listening\n" + report + "\n    #0 0x55 in relay_deliver\n")
    found = gw.new_sanitizer_reports()
    assert found.startswith(report) and "relay_deliver" in found
    assert gw.new_sanitizer_reports() == ""
    with open(gw.log_path, "a") as f:
        f.write(report + "\n")
    assert gw.new_sanitizer_reports().startswith(report)


def test_a_clean_log_has_none(tmp_path):
    gw = log_gateway(tmp_path, "moat: listening\nmoat: session 1 ended (runtime 3 s)\n")
    assert gw.new_sanitizer_reports() == ""
