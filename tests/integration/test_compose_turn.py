"""docker-compose.yml is valid, and its coturn and moat services work
together: Debian's turnserver runs with the compose file's own command
line, the gateway with the compose file's environment, and an aiortc peer
restricted to relay candidates (credentials from /api/ice-servers) completes
the echo through the TURN server on loopback.

What the test adds to the compose settings, because everything here is on
loopback: coturn listens and relays on 127.0.0.1 and is allowed to relay to
loopback peers (--allow-loopback-peers; coturn refuses loopback peers by
default, and a deployment relays to the host's real address instead), its
pid file and database go to a temporary folder, and the container path of
the recordings folder becomes a temporary one."""
import asyncio
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from aiortc_peer import echo_call
from compose import COMPOSE_FILE, compose_config, option_value
from conftest import ARTIFACTS, ROOT, Gateway, free_port


REQUIRED = {"MOAT_TURN_SECRET": "check-turn", "MOAT_HTTP_TOKEN": "check-token",
            "MOAT_PUBLIC_HOST": "203.0.113.7"}


def test_compose_config_is_valid():
    env = dict(os.environ, **REQUIRED)
    subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "config", "-q"], env=env,
                   check=True, timeout=60)
    # Without the shared secret the file refuses to resolve (no default secret).
    env.pop("MOAT_TURN_SECRET")
    result = subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "config", "-q"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "MOAT_TURN_SECRET" in result.stderr
    # Nor without the API token: the API listens on every address.
    env["MOAT_TURN_SECRET"] = "check"
    env.pop("MOAT_HTTP_TOKEN")
    result = subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "config", "-q"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "MOAT_HTTP_TOKEN" in result.stderr
    # Nor without the public address: clients would be handed turn:127.0.0.1.
    env["MOAT_HTTP_TOKEN"] = "check"
    env.pop("MOAT_PUBLIC_HOST", None)
    result = subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "config", "-q"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "MOAT_PUBLIC_HOST" in result.stderr


def test_compose_is_safe_on_a_public_host():
    config = compose_config(REQUIRED)
    services = config["services"]
    # The secrets reach the services through their environments only.
    for name, service in services.items():
        words = [str(w) for w in service.get("command", []) + service.get("entrypoint", [])]
        for secret in (REQUIRED["MOAT_TURN_SECRET"], REQUIRED["MOAT_HTTP_TOKEN"]):
            assert not any(secret in w for w in words), f"{name}: a secret on the command line"
    assert services["coturn"]["environment"]["TURN_SECRET"] == REQUIRED["MOAT_TURN_SECRET"]
    moat = services["moat"]
    assert moat["environment"]["MOAT_TURN_URIS"].startswith("turn:203.0.113.7:")
    assert moat["environment"]["MOAT_MEDIA_ANNOUNCED_ADDRESS"] == "203.0.113.7"
    # The kernel filter's capability; the TLS folder mounted read-only.
    assert {"BPF", "PERFMON"} <= set(moat["cap_add"])
    volumes = [v if isinstance(v, str) else f"{v['source']}:{v['target']}:" + ("ro" if v.get("read_only") else "rw")
               for v in moat["volumes"]]
    assert any(v.split(":")[1] == "/etc/moat/tls" and v.endswith(":ro") for v in volumes), volumes
    # The recordings folder is given to the gateway's user (uid 999) first.
    owner = services["recordings-owner"]
    assert "chown 999:999 /var/lib/moat/recordings" in " ".join(owner["entrypoint"])
    assert moat["depends_on"]["recordings-owner"]["condition"] == "service_completed_successfully"
    # Bounded logs, and a health check on each long-running service.
    for name, service in services.items():
        options = service["logging"]["options"]
        assert options["max-size"] and int(options["max-file"]) <= 5, name
    assert "healthz" in " ".join(moat["healthcheck"]["test"])
    assert "turnutils_stunclient" in services["coturn"]["healthcheck"]["test"]
    # coturn's relay range: one port per allocation, sized for real use.
    args = services["coturn"]["command"]
    ports = int(option_value(args, "max-port")) - int(option_value(args, "min-port")) + 1
    assert ports >= 16000, ports
    moat_ports = set(range(20000, 20064)) | set(range(30000, 40000))
    assert not moat_ports & set(range(int(option_value(args, "min-port")),
                                      int(option_value(args, "max-port")) + 1))


# coturn's peers: loopback, RFC 1918, CGNAT, link-local and ULA are denied
# unless the operator allows a range (MOAT_TURN_ALLOWED_PEER_IP).
DENIED_PEERS = {"127.0.0.0-127.255.255.255", "10.0.0.0-10.255.255.255",
                "172.16.0.0-172.31.255.255", "192.168.0.0-192.168.255.255",
                "100.64.0.0-100.127.255.255", "169.254.0.0-169.254.255.255",
                "::1", "fc00::-fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                "fe80::-febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff"}


def test_compose_coturn_denies_internal_peers():
    config = compose_config({**REQUIRED, "MOAT_HTTP_TOKEN": "check"})
    args = config["services"]["coturn"]["command"]
    denied = {a.split("=", 1)[1] for a in args if a.startswith("--denied-peer-ip=")}
    assert DENIED_PEERS <= denied, DENIED_PEERS - denied
    moat = config["services"]["moat"]["environment"]
    assert moat["MOAT_HTTP_TOKEN"] == "check"
    assert int(moat["MOAT_TURN_TTL_S"]) <= 3600


def unescape(word):
    """A word of `docker-compose config` output as the container gets it
    ($$ is a literal $)."""
    return word.replace("$$", "$")


class Turnserver:
    def __init__(self, service, workdir):
        """Runs the coturn service's own entrypoint (which writes the secret
        from its environment into a configuration file) and command line."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.log_path = ARTIFACTS / f"turnserver-{os.getpid()}-{time.time_ns()}.log"
        self.log = open(self.log_path, "w")
        args = service["command"]
        entrypoint = [unescape(w) for w in service["entrypoint"]]
        # The compose file denies loopback peers; here everything is on loopback.
        loopback = ["--listening-ip=127.0.0.1", "--relay-ip=127.0.0.1", "--allow-loopback-peers",
                    "--allowed-peer-ip=127.0.0.1",
                    f"--pidfile={workdir / 'turnserver.pid'}", f"--db={workdir / 'turndb'}"]
        env = dict(os.environ, TMPDIR=str(workdir), **{k: str(v) for k, v in service["environment"].items()})
        self.process = subprocess.Popen(["stdbuf", "-oL", *entrypoint, *args, *loopback], env=env,
                                        stdout=self.log, stderr=subprocess.STDOUT)
        port = int(option_value(args, "listening-port"))
        deadline = time.time() + 10
        while time.time() < deadline:
            assert self.process.poll() is None, "turnserver exited: " + self.log_path.read_text()
            if self._answers(port):
                return
            time.sleep(0.2)
        raise RuntimeError("turnserver did not come up: " + self.log_path.read_text())

    @staticmethod
    def _answers(port):
        # A STUN binding request; any answer means the listener is up.
        request = b"\x00\x01\x00\x00\x21\x12\xa4\x42" + secrets.token_bytes(12)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(0.3)
            s.sendto(request, ("127.0.0.1", port))
            try:
                return len(s.recv(2048)) >= 20
            except OSError:
                return False

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        return self.log_path.read_text()


@pytest.fixture
def compose_services(tmp_path):
    relay_base = free_port(socket.SOCK_DGRAM, 20)
    variables = {
        "MOAT_TURN_SECRET": secrets.token_hex(16),
        "MOAT_PUBLIC_HOST": "127.0.0.1",
        "MOAT_TURN_PORT": str(free_port(socket.SOCK_DGRAM)),
        "MOAT_TURN_MIN_PORT": str(relay_base),
        "MOAT_TURN_MAX_PORT": str(relay_base + 19),
        "MOAT_HTTP_TOKEN": secrets.token_hex(16),
    }
    config = compose_config(variables)
    services = config["services"]
    environment = {k: str(v) for k, v in services["moat"]["environment"].items()}
    environment["MOAT_RECORD_DIR"] = str(tmp_path / "recordings")
    command = services["moat"]["command"]
    assert command[:2] == ["--config", "/etc/moat/moat.conf"]
    # The file the compose file mounts at /etc/moat/moat.conf ("source:target:mode").
    mounts = [v if isinstance(v, str) else f"{v['source']}:{v['target']}"
              for v in services["moat"]["volumes"]]
    config_file = [m.split(":")[0] for m in mounts if m.split(":")[1] == "/etc/moat/moat.conf"]
    assert config_file == [str(ROOT / "config" / "moat.conf")]
    turn = Turnserver(services["coturn"], tmp_path)
    try:
        gateway = Gateway(extra_args=["--config", config_file[0]], env=environment)
    except Exception:
        turn.stop()
        raise
    yield gateway, turn, variables, services
    code = gateway.stop()
    turn_log = turn.stop()
    assert code == 0, f"moat exited with {code}; log in {gateway.log_path}"
    (ARTIFACTS / "turnserver-last.log").write_text(turn_log)


def test_echo_through_coturn_with_relay_candidates_only(compose_services):
    gateway, turn, variables, services = compose_services
    # TURN credentials go to API token holders (and in each WHIP 201), not to anyone.
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(gateway.base + "/api/ice-servers", timeout=5)
    assert refused.value.code == 401
    request = urllib.request.Request(gateway.base + "/api/ice-servers",
                                     headers={"Authorization": "Bearer " + variables["MOAT_HTTP_TOKEN"]})
    with urllib.request.urlopen(request, timeout=5) as r:
        ice = json.loads(r.read())
    servers = ice["iceServers"]
    turn_uri = f"turn:127.0.0.1:{variables['MOAT_TURN_PORT']}?transport=udp"
    assert servers[0]["urls"] == [turn_uri]
    expiry, user = servers[0]["username"].split(":")
    assert time.time() + 60 < int(expiry) <= time.time() + 3600 + 5
    assert len(user) == 32 and user != "moat"  # random, per request

    result = asyncio.run(echo_call(gateway.base, seconds=5, ice_servers=servers, relay=True))
    # Every nominated pair's local candidate is a TURN relay candidate.
    assert result["selected_local_candidate_types"], "no nominated candidate pair"
    assert set(result["selected_local_candidate_types"]) == {"relay"}
    audio = result["recorders"]["audio"]
    assert audio.frames / result["sent_audio"] >= 0.85, (audio.frames, result["sent_audio"])
    assert abs(audio.dominant_frequency() - 440.0) <= 5.0
    assert result["recorders"]["video"].frames >= 20
    # The WHIP 201 carried the same TURN server as an RFC 9725 Link header.
    assert any(link.startswith(f"<{turn_uri}>; rel=\"ice-server\"; username=\"")
               and "credential-type=\"password\"" in link for link in result["links"]), result["links"]
    # The gateway saw the peer at coturn's relay ports, not at aiortc's own.
    low, high = int(variables["MOAT_TURN_MIN_PORT"]), int(variables["MOAT_TURN_MAX_PORT"])
    log = gateway.log_text()
    relayed = [p for p in range(low, high + 1) if f"127.0.0.1]:{p}" in log or f"127.0.0.1:{p}" in log]
    assert relayed, "no STUN check from a coturn relay port in the gateway log"


def test_running_services_keep_secrets_off_command_lines_and_pass_health(compose_services):
    gateway, turn, variables, services = compose_services
    for pid in (turn.process.pid, gateway.process.pid):
        # stdbuf execs the entrypoint shell, which execs turnserver: same pid.
        cmdline = open(f"/proc/{pid}/cmdline", "rb").read().decode(errors="replace")
        assert variables["MOAT_TURN_SECRET"] not in cmdline, cmdline
        assert variables["MOAT_HTTP_TOKEN"] not in cmdline, cmdline
    assert "turnserver" in open(f"/proc/{turn.process.pid}/cmdline").read()
    # The compose file's health checks, run as the engine would (the coturn
    # one as given; moat's shell one with its environment).
    port = variables["MOAT_TURN_PORT"]
    check = [str(w).replace("${MOAT_TURN_PORT:-3478}", port)
             for w in services["coturn"]["healthcheck"]["test"][1:]]
    assert subprocess.run(check, capture_output=True, timeout=10).returncode == 0
    moat_check = unescape(services["moat"]["healthcheck"]["test"][1])
    env = dict(os.environ, MOAT_HTTP_PORT=str(gateway.http_port), MOAT_HTTP_TLS_CERT="")
    assert subprocess.run(["/bin/sh", "-c", moat_check], env=env, timeout=10).returncode == 0
    # The gateway's recording folder is writable: /healthz says so.
    health = json.loads(gateway.get("/healthz"))
    assert health["recording"] == {"configured": True, "writable": True}, health
