"""A throw-away self-signed certificate for HTTPS tests (openssl CLI):
ECDSA P-256, valid one day, for 127.0.0.1, ::1 and localhost."""
import subprocess


def make_self_signed(folder, name="moat"):
    """Writes <name>-cert.pem and <name>-key.pem under `folder`; returns
    (cert path, key path) as strings."""
    cert = folder / f"{name}-cert.pem"
    key = folder / f"{name}-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return str(cert), str(key)
