"""Shared setup of the benches that run a gateway alone in a network
namespace (bench/sfu, bench/paced): the namespace and its veth pair to the
host, stopping a gateway process, and Janus's configuration folder. Each
bench owns what it makes here and tears it down itself."""
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

JANUS_LIB = Path("/usr/lib/x86_64-linux-gnu/janus")


def janus_missing():
    """Why this machine cannot run the Janus baseline, or None when it can.
    scripts/install-deps.sh installs Janus, so a bench that runs it by
    default (without --no-janus) fails when it is missing."""
    if shutil.which("janus") is None:
        return "janus is not installed (scripts/install-deps.sh installs it; --no-janus skips it)"
    if not (JANUS_LIB / "plugins").exists():
        return f"janus has no plugins in {JANUS_LIB} (--no-janus skips it)"
    return None


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


class Namespace:
    """A network namespace `<prefix>-<tag>` joined to the host by a veth
    pair: host_ip/30 on the host's end, ns_ip/30 on the namespace's."""

    def __init__(self, prefix, host_ip, ns_ip):
        tag = uuid.uuid4().hex[:6]
        self.name = f"{prefix}-{tag}"
        self.host_dev, self.ns_dev = f"{prefix[0]}h{tag}", f"{prefix[0]}n{tag}"
        sh("ip", "netns", "add", self.name)
        sh("ip", "link", "add", self.host_dev, "type", "veth", "peer", "name", self.ns_dev,
           "netns", self.name)
        sh("ip", "addr", "add", f"{host_ip}/30", "dev", self.host_dev)
        sh("ip", "link", "set", self.host_dev, "up")
        for cmd in (("ip", "link", "set", "lo", "up"),
                    ("ip", "addr", "add", f"{ns_ip}/30", "dev", self.ns_dev),
                    ("ip", "link", "set", self.ns_dev, "up")):
            sh("ip", "netns", "exec", self.name, *cmd)
        time.sleep(0.5)

    def run(self, cpus, *args, **kwargs):
        """Starts args inside the namespace, pinned to `cpus`."""
        return subprocess.Popen(["ip", "netns", "exec", self.name, "taskset", "-c", cpus, *args],
                                **kwargs)

    def close(self):
        sh("ip", "link", "del", self.host_dev, check=False)
        sh("ip", "netns", "del", self.name, check=False)


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def write_janus_config(folder, plugin, rtp_port_range, general_extra="", admin_extra=""):
    """Janus's configuration in `folder`: the HTTP transport on port 8088
    and the one `plugin` (videoroom, echotest, ...); general_extra and
    admin_extra are lines added to those sections."""
    for sub in ("plugins", "transports", "events", "loggers"):
        (folder / sub).mkdir()
    os.symlink(JANUS_LIB / "plugins" / f"libjanus_{plugin}.so",
               folder / "plugins" / f"libjanus_{plugin}.so")
    os.symlink(JANUS_LIB / "transports" / "libjanus_http.so",
               folder / "transports" / "libjanus_http.so")
    (folder / "janus.jcfg").write_text(f"""general: {{
    configs_folder = "{folder}"
    plugins_folder = "{folder}/plugins"
    transports_folder = "{folder}/transports"
    events_folder = "{folder}/events"
    loggers_folder = "{folder}/loggers"
    debug_level = 2
{general_extra}}}
media: {{
    rtp_port_range = "{rtp_port_range}"
}}
nat: {{
    ice_ignore_list = "vmnet"
}}
""")
    (folder / "janus.transport.http.jcfg").write_text(f"""general: {{
    json = "plain"
    base_path = "/janus"
    http = true
    port = 8088
    https = false
}}
admin: {{
{admin_extra}    admin_http = false
}}
""")
    (folder / f"janus.plugin.{plugin}.jcfg").write_text("general: {\n}\n")
