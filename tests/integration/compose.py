"""docker-compose.yml without a container engine: `docker-compose config`
resolves the file (variables included) and its services' commands and
environments are run here directly, Debian's turnserver for the coturn
service and the built gateway for the moat service."""
import json
import os
import subprocess

from conftest import ROOT

COMPOSE_FILE = ROOT / "docker-compose.yml"


def compose_config(env):
    """The resolved compose file as a dict, with `env` as the variables."""
    full_env = dict(os.environ)
    full_env.update(env)
    text = subprocess.run(["docker-compose", "-f", str(COMPOSE_FILE), "config"], env=full_env,
                          capture_output=True, text=True, check=True, timeout=60).stdout
    # The venv has no YAML parser; Debian's python3 has the one docker-compose uses.
    as_json = subprocess.run(["/usr/bin/python3", "-c",
                              "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"],
                             input=text, capture_output=True, text=True, check=True, timeout=30)
    return json.loads(as_json.stdout)


def option_value(args, name):
    """The value of --name=value in a turnserver argument list."""
    prefix = f"--{name}="
    for arg in args:
        if arg.startswith(prefix):
            return arg[len(prefix):]
    return None
