"""The daemon's command line: --help, --version, and one clear line with a
non-zero exit for each start-up problem."""
import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import MOAT, ROOT, Gateway, free_port


def run(*args, timeout=20):
    return subprocess.run([str(MOAT), *args], capture_output=True, text=True, timeout=timeout)


def test_help_lists_every_option():
    result = run("--help")
    assert result.returncode == 0
    for option in ("--config", "--http-port", "--media-port", "--workers", "--log-level",
                   "--certificate", "--private-key", "--announced-address", "--token"):
        assert option in result.stdout, option


def test_version_names_openssl_backed_libsrtp():
    result = run("--version")
    assert result.returncode == 0
    assert "libsrtp2 2." in result.stdout
    assert "crypto backend: openssl" in result.stdout
    assert "OpenSSL 3." in result.stdout


def test_http_port_in_use():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        result = run("--http-bind", "127.0.0.1", "--http-port", str(port), "--media-port",
                     str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1")
    assert result.returncode != 0
    lines = [l for l in result.stderr.splitlines() if l.startswith("moat:")]
    assert len(lines) == 1 and "HTTP port" in lines[0], result.stderr


def test_media_port_in_use():
    with socket.socket(socket.AF_INET6, socket.SOCK_DGRAM) as s:
        s.bind(("::", 0))
        port = s.getsockname()[1]
        result = run("--http-port", str(free_port()), "--media-port", str(port), "--workers", "1")
    assert result.returncode != 0
    assert "cannot bind UDP media port" in result.stderr and "in use" in result.stderr


def test_unreadable_certificate(tmp_path):
    result = run("--certificate", str(tmp_path / "missing.pem"), "--private-key",
                 str(tmp_path / "missing.key"), "--http-port", str(free_port()),
                 "--media-port", str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1")
    assert result.returncode != 0
    assert "missing.pem" in result.stderr


def test_bad_config_values(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("[http]\nport = eighty\n")
    result = run("--config", str(conf), "--check-config")
    assert result.returncode != 0
    assert "[http] port" in result.stderr and "eighty" in result.stderr
    conf.write_text("[media]\nno_such_option = 1\n")
    result = run("--config", str(conf), "--check-config")
    assert result.returncode != 0 and "unknown option [media] no_such_option" in result.stderr
    result = run("--workers", "-3", "--check-config")
    assert result.returncode != 0 and "--workers" in result.stderr
    result = run("--log-level", "chatty", "--check-config")
    assert result.returncode != 0 and "log_level" in result.stderr


def test_config_value_not_utf8(tmp_path):
    """A Latin-1 value was read as "" (the API token off, the gateway open):
    --check-config and the start refuse it, naming the key, not the value."""
    conf = tmp_path / "latin1.conf"
    conf.write_bytes(b"[http]\nbind = 127.0.0.1\ntoken = s3cr\xe9t\n")
    result = run("--config", str(conf), "--check-config")
    assert result.returncode != 0, result.stdout
    assert "[http] token: the value is not UTF-8" in result.stderr, result.stderr
    assert "s3cr" not in result.stderr
    result = run("--config", str(conf), "--http-port", str(free_port()), "--media-port",
                 str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1", "--ng-port", "0")
    assert result.returncode != 0 and "[http] token" in result.stderr, result.stderr


def test_config_file_with_a_nul_byte(tmp_path):
    """A NUL byte cut a value short (token = "ab\\0c0ffee..." was the token
    "ab", port = "10\\0 00" the port 10) and --check-config said ok: the file
    is refused, at the NUL's offset, by --check-config and the start."""
    conf = tmp_path / "nul.conf"
    for text, offset in ((b"[http]\nbind = 127.0.0.1\ntoken = ab\0c0ffee\n", 34),
                         (b"[http]\nport = 10\0 00\n", 16)):
        conf.write_bytes(text)
        result = run("--config", str(conf), "--check-config")
        assert result.returncode == 2 and not result.stdout, result
        assert f"{conf}: NUL byte at offset {offset}" in result.stderr, result.stderr
        assert "c0ffee" not in result.stderr
        result = run("--config", str(conf), "--http-port", str(free_port()), "--media-port",
                     str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1", "--ng-port", "0")
        assert result.returncode == 2 and "NUL byte" in result.stderr, result.stderr


def test_config_key_set_twice(tmp_path):
    """GKeyFile merges a repeated [group] and keeps a repeated key's last
    value: a second [http] with "metrics_token =" opened /metrics and
    --check-config said ok. A key set twice in one group is refused, naming
    the group, the key and both lines, by --check-config and the start; a
    repeated group setting other keys is fine."""
    conf = tmp_path / "dup.conf"
    conf.write_text("[http]\nmetrics_token = s3cret-metrics\nbind = 127.0.0.1\n\n"
                    "[general]\nworkers = 1\n\n# later, another copy of the section\n"
                    "[http]\nmetrics_token =\n")
    result = run("--config", str(conf), "--check-config")
    assert result.returncode == 2 and not result.stdout, result
    assert (f"{conf}: [http] metrics_token is set twice: on line 2 and on line 10"
            in result.stderr), result.stderr
    assert "s3cret" not in result.stderr
    result = run("--config", str(conf), "--http-port", str(free_port()), "--media-port",
                 str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1", "--ng-port", "0")
    assert result.returncode == 2 and "metrics_token is set twice" in result.stderr, result
    conf.write_text("[http]\nmetrics_token = s3cret-metrics\n[general]\nworkers = 1\n"
                    "[http]\nbind = 127.0.0.1\n")
    result = run("--config", str(conf), "--check-config")
    assert result.returncode == 0, result.stderr


def test_values_the_start_would_misuse_fail_check_config():
    """announced_address goes into SDP c= lines and candidates as written;
    decimal options were cast to integers on the packet path."""
    for args, expect in ((("--announced-address", "bogus host"), "[media] announced_address"),
                         (("--announced-address", "192.0.2.1\r\na=x"), "announced_address"),
                         (("--legacy-budget-factor", "1e300"), "at most 1000"),
                         (("--detector-rate-factor", "inf"), "at most 1000")):
        result = run(*args, "--check-config")
        assert result.returncode == 2 and expect in result.stderr, (args, result.stderr)
        assert len(result.stderr.splitlines()) == 1, result.stderr
    assert run("--announced-address", "2001:db8::5", "--check-config").returncode == 0


@pytest.mark.parametrize("address,why", [
    ("0.0.0.0", "unspecified"), ("::", "unspecified"), ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"), ("255.255.255.255", "broadcast"),
    ("::ffff:198.51.100.7", "IPv4-mapped")])
def test_addresses_no_peer_can_send_to_are_refused(address, why):
    """They were accepted and written into candidates and call SDPs (c=0.0.0.0
    is hold): now --check-config and the start refuse them, one line each."""
    for option, key in (("--announced-address", "[media] announced_address"),
                        ("--candidate-addresses", "[media] candidate_addresses")):
        result = run(option, address, "--check-config")
        assert result.returncode == 2, (option, address, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and key in lines[0] and why in lines[0], result.stderr
        assert address in lines[0], result.stderr
    result = run("--announced-address", address, "--http-port", str(free_port()),
                 "--media-port", str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1")
    assert result.returncode == 2 and "[media] announced_address" in result.stderr, result.stderr


def test_turn_settings_clients_cannot_use_are_refused():
    """A URI without its scheme was handed to clients, whose
    RTCPeerConnection throws on it; a secret without URIs was ignored. Both
    are refused now, in one line naming the setting."""
    for args, expect in (
            (("--turn-uris", "turn.example.com:3478", "--turn-secret", "s"),
             '[turn] uris: "turn.example.com:3478": expected a turn:, turns:, stun: or stuns:'),
            (("--turn-uris", "turn://turn.example.com:3478", "--turn-secret", "s"),
             "no host after the scheme"),
            (("--turn-uris", "turn:turn.example.com:3478?transport=tls", "--turn-secret", "s"),
             "?transport=udp or ?transport=tcp"),
            (("--turn-secret", "s"), "[turn] secret is set but [turn] uris is empty")):
        result = run(*args, "--check-config")
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and expect in lines[0], (args, result.stderr)
        result = run(*args, "--http-port", str(free_port()), "--media-port",
                     str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1")
        assert result.returncode == 2 and expect in result.stderr, (args, result.stderr)
    result = run("--turn-uris", "turn:turn.example.com:3478?transport=udp, "
                 "turns:[2001:db8::7]:5349?transport=tcp, stun:stun.example.com",
                 "--turn-secret", "s", "--check-config")
    assert result.returncode == 0, result.stderr


def test_check_config_refuses_what_the_start_refuses(tmp_path):
    """--check-config said "configuration ok" for settings the start then
    refused; now each is one error line and status 2, nothing bound."""
    cases = [
        (("--certificate", str(tmp_path / "missing.pem"), "--private-key",
          str(tmp_path / "missing.key")), "[dtls] certificate: cannot read certificate"),
        (("--http-bind", "notanaddress"), '[http] bind = "notanaddress": not an IP address'),
        (("--media-bind", "notanaddress"), '[media] bind = "notanaddress": not an IP address'),
        (("--ng-bind", "notanaddress"), '[ng] bind = "notanaddress": not an IP address'),
        (("--candidate-addresses", "192.0.2.1, nohost"), "[media] candidate_addresses"),
        (("--call-denied-networks", "garbage"), "[call] denied_networks"),
        (("--cluster-redis", "h:99999", "--cluster-password", "x"), "[cluster] redis"),
        (("--cluster-redis", "h:1", "--cluster-password", "x", "--cluster-node-id", "a b"),
         "[cluster] node_id"),
    ]
    for args, expect in cases:
        result = run(*args, "--check-config")
        assert result.returncode == 2 and expect in result.stderr, (args, result.stderr)
        assert len(result.stderr.splitlines()) == 1 and not result.stdout, result
    # The same values, well formed, pass; an ng socket that is off is not checked.
    assert run("--ng-port", "0", "--ng-bind", "notanaddress", "--check-config").returncode == 0
    result = run("--http-bind", "::1", "--media-bind", "0.0.0.0", "--ng-bind", "::1",
                 "--call-denied-networks", "10.0.0.0/8, fd00::/8", "--cluster-redis",
                 "[::1]:6379", "--cluster-password", "x", "--cluster-node-id", "n1:8088",
                 "--check-config")
    assert result.returncode == 0, result.stderr


def test_check_config_refuses_port_layouts_the_start_refuses():
    """Each of these was "configuration ok" and then refused by every start:
    a call range without an even/odd pair (30001 is rounded up to 30002),
    workers = 0 counted as no worker (the start runs one per processor),
    the ng socket on a worker's port."""
    processors = len(os.sched_getaffinity(0))
    cases = [
        (("--media-port-min", "30001", "--media-port-max", "30002"),
         "[media] port_min 30001 .. port_max 30002: need at least one even/odd pair"),
        (("--media-port", "21050", "--workers", "2", "--ng-port", "21051"),
         "[ng] port 21051 is one of the media workers' ports 21050-21051"),
        (("--plugin-dir", "/nonexistent/plugins"), "[general] plugin_dir: cannot open plugin "
                                                     "folder /nonexistent/plugins"),
    ]
    if processors > 1:
        cases.append((("--media-port", "65535", "--workers", "0"),
                      f"[media] port 65535 + {processors} workers (workers = 0: one per "
                      "processor) runs past port 65535"))
    for args, expect in cases:
        result = run(*args, "--check-config")
        assert result.returncode == 2 and expect in result.stderr, (args, result.stderr)
        assert len(result.stderr.splitlines()) == 1 and not result.stdout, result
    # The start refuses them the same way, before anything is bound.
    result = run("--media-port", "21050", "--workers", "2", "--ng-port", "21051",
                 "--http-port", str(free_port()))
    assert result.returncode == 2 and "[ng] port 21051" in result.stderr, result.stderr
    for args in (("--media-port-min", "30001", "--media-port-max", "30003"),
                 ("--media-port", str(65536 - processors), "--workers", "0"),
                 ("--media-port", "21050", "--workers", "2", "--ng-port", "21052")):
        result = run(*args, "--check-config")
        assert result.returncode == 0, (args, result.stderr)


def test_unknown_options_are_named_as_unknown():
    """An unknown option is called unknown, last on the line or not (it was
    "needs a value" when nothing followed it); a known one without its
    value needs a value."""
    for args in (("--verbose",), ("--verbose", "--check-config"), ("--verbose=1",),
                 ("--check-config", "--no-such-flag")):
        result = run(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert "unknown option --" in result.stderr, (args, result.stderr)
    result = run("--check-config", "--workers")
    assert result.returncode == 2 and "--workers needs a value" in result.stderr, result.stderr


def test_shipped_config_file_is_valid():
    from conftest import ROOT
    result = run("--config", str(ROOT / "config" / "moat.conf"), "--check-config")
    assert result.returncode == 0, result.stderr


def test_environment_overrides(tmp_path):
    result = subprocess.run([str(MOAT), "--check-config"], capture_output=True, text=True,
                            env={"MOAT_HTTP_PORT": "zero"})
    assert result.returncode != 0 and "MOAT_HTTP_PORT" in result.stderr


def test_misspelt_environment_variable_is_an_error():
    """MOAT_HTTP_METRIC_TOKEN=s3cret (for METRICS) was ignored without a word
    and /metrics stayed open, while the same typo in the file is an error:
    now it is one too, naming the variable, not its value."""
    env = {**os.environ, "MOAT_HTTP_METRIC_TOKEN": "s3cret"}
    result = subprocess.run([str(MOAT), "--check-config"], capture_output=True, text=True,
                            env=env, timeout=20)
    assert result.returncode == 2 and not result.stdout, result
    assert result.stderr == ("moat: environment variable MOAT_HTTP_METRIC_TOKEN: unknown option "
                             "[http] metric_token\n"), result.stderr
    result = subprocess.run([str(MOAT), "--http-port", str(free_port()), "--media-port",
                             str(free_port(socket.SOCK_DGRAM, 1)), "--workers", "1",
                             "--ng-port", "0"], capture_output=True, text=True, env=env,
                            timeout=20)
    assert result.returncode == 2 and "MOAT_HTTP_METRIC_TOKEN" in result.stderr, result.stderr
    assert "s3cret" not in result.stderr


def _environment_names_the_repo_uses():
    """Every MOAT_ name the scripts, compose file, Dockerfile, Makefile, CI,
    tools, benchmarks and tests set or read (C code: what it getenv()s; its
    other MOAT_ words are identifiers). Prose is left out: README.md and
    config/moat.conf cite a misspelt name as the example of the error, docs/
    names C constants."""
    names = set()
    skip = {".git", ".deps", ".venv", "node_modules"}
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if not path.is_file() or skip & set(parts) or parts[0].startswith("build"):
            continue
        if path.resolve() == Path(__file__).resolve():
            continue  # this file misspells names on purpose
        if path.suffix in (".md", ".conf", ".so", ".a", ".o", ".png", ".ico", ".webm"):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        if path.suffix in (".c", ".h"):
            names.update(re.findall(r'getenv\("(MOAT_[A-Z0-9_]+)"', text))
        else:
            # Set or read: NAME= / NAME: (shell, make, compose), $NAME,
            # ${NAME}, $(NAME), or a quoted string (Python's environ keys);
            # a bare word in a comment names a C constant.
            names.update(re.findall(
                r"""(?:[$]\{?|[$]\(|["'])(MOAT_[A-Z0-9_]*[A-Z0-9])\b"""
                r"""|\b(MOAT_[A-Z0-9_]*[A-Z0-9])(?=[=:])""", text))
    names = {name for pair in names for name in (pair if isinstance(pair, tuple) else (pair,))
             if name}
    return names


def test_environment_names_the_repo_uses_are_accepted():
    """The check of MOAT_ variables leaves alone every name of the repo that
    is no option (MOAT_GATEWAY_BINARY, MOAT_BENCH_QUICK, docker-compose's
    MOAT_TURN_PORT, ...): all of them set at once, the configuration is ok."""
    options = {f"MOAT_{section}_{key}".upper() for section, key in
               re.findall(r"\[(\w+)\] (\w+) \(default", run("--help").stdout)}
    assert "MOAT_HTTP_METRICS_TOKEN" in options and len(options) > 50
    others = _environment_names_the_repo_uses() - options - {"MOAT_CONFIG"}
    assert {"MOAT_GATEWAY_BINARY", "MOAT_TURN_PORT", "MOAT_API_TOKEN"} <= others, others
    env = {**os.environ, **{name: "1" for name in others}}
    result = subprocess.run([str(MOAT), "--check-config"], capture_output=True, text=True,
                            env=env, timeout=20)
    assert result.returncode == 0 and result.stdout == "configuration ok\n", result.stderr


def test_more_workers_than_processors_is_warned_once():
    """[general] workers took up to 256 whatever the processors, without a
    word (256 took 5.3 GB idle and 17 s to start: the relay holds (n + 1) x n
    rings): more workers than processors start with one warning saying what
    they cost; as many as the processors, none."""
    processors = len(os.sched_getaffinity(0))
    if processors >= 256:
        pytest.skip("[general] workers cannot exceed 256 processors")
    warned = re.compile(r'level=warn component=gateway msg="\[general\] workers = '
                        rf'{processors + 1} is more than the {processors} processors: .*add no '
                        r'throughput, the relay between workers takes \d+ MiB.*" '
                        rf'workers={processors + 1} processors={processors} relay_mib=\d+$')
    for workers, expected in ((processors + 1, 1), (processors, 0)):
        gw = Gateway(workers=workers)
        assert gw.stop() == 0
        lines = [l for l in gw.log_text().splitlines() if "is more than the" in l]
        assert len(lines) == expected, lines
        assert all(warned.search(l) for l in lines), lines
