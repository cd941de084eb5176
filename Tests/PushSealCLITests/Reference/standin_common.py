"""What the Python stand-ins of pushseal's tests share: a self-signed certificate for
127.0.0.1 and localhost (the sender trusts it as FOLDER/cert.pem), base64url without
padding, and the verification of an ES256 JWT (APNs' provider tokens, VAPID tokens).
Nothing here is pushseal's code."""
import base64
import datetime
import ipaddress

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import NameOID


def unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def self_signed(folder):
    key = ec.generate_private_key(ec.SECP256R1())
    # A name of its own: two stand-ins trusted through one file must not share an issuer name
    # (a trust store finds a certificate's issuer by name).
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"pushseal stand-in {x509.random_serial_number():x}"[:64])])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                    x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256()))
    with open(folder + "/cert.pem", "wb") as out:
        out.write(certificate.public_bytes(serialization.Encoding.PEM))
    with open(folder + "/key.pem", "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))


def es256_verifies(public_key, token_parts, signature):
    """True when the 64-byte r||s `signature` is `public_key`'s over the JWT's first two parts."""
    if len(signature) != 64:
        return False
    der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
    try:
        public_key.verify(der, f"{token_parts[0]}.{token_parts[1]}".encode(), ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return False
    return True


def close_quietly(sock):
    """Closes a connection whose peer may already be gone."""
    try:
        sock.close()
    except OSError:
        pass
