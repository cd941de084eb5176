"""Reads back the QR codes `pushseal keys export --qr` draws and `--qr-png` writes, with
zbar (Debian's libzbar0, through pyzbar), a decoder that shares no code with libqrencode.

    qr_decode.py png FILE            the text of the code in FILE
    qr_decode.py terminal CMD ARGS   runs CMD on a pseudo-terminal (stdout a TTY, as in a
                                     person's shell) and decodes the half blocks it drew
    qr_decode.py text                decodes half blocks read from stdin (a pipe)

Prints the decoded bytes as they are on stdout, or exits 1 with the reason on stderr.
"""
import os
import re
import select
import subprocess
import sys

from PIL import Image
from pyzbar.pyzbar import decode

# Two module rows per character: (top dark, bottom dark).
HALVES = {" ": (False, False), "\u2580": (True, False), "\u2584": (False, True), "\u2588": (True, True)}
ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def decoded(image):
    found = decode(image)
    if not found:
        sys.exit("qr_decode: no QR code found")
    return found[0].data


def from_half_blocks(text):
    rows = []
    for line in ESCAPES.sub("", text.replace("\r", "")).split("\n"):
        if not line or any(ch not in HALVES for ch in line):
            continue  # a caption, or an empty line
        rows.append([HALVES[ch][0] for ch in line])
        rows.append([HALVES[ch][1] for ch in line])
    if not rows:
        sys.exit("qr_decode: no half blocks in the output:\n" + text)
    width, scale, margin = max(len(r) for r in rows), 8, 4
    image = Image.new("L", ((width + 2 * margin) * scale, (len(rows) + 2 * margin) * scale), 255)
    for y, row in enumerate(rows):
        for x, dark in enumerate(row):
            if dark:
                image.paste(0, ((x + margin) * scale, (y + margin) * scale, (x + margin + 1) * scale, (y + margin + 1) * scale))
    return decoded(image)


def on_terminal(command):
    leader, follower = os.openpty()
    process = subprocess.Popen(command, stdin=follower, stdout=follower, stderr=subprocess.PIPE)
    os.close(follower)
    output = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            process.kill()
            sys.exit("qr_decode: the command drew nothing for 30 s")
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the command closed the terminal
            break
        if not chunk:
            break
        output += chunk
    status = process.wait(timeout=30)
    if status != 0:
        sys.exit(f"qr_decode: the command exited {status}: {process.stderr.read().decode()}")
    return from_half_blocks(output.decode("utf-8"))


def main():
    mode = sys.argv[1]
    if mode == "png":
        data = decoded(Image.open(sys.argv[2]))
    elif mode == "terminal":
        data = on_terminal(sys.argv[2:])
    else:
        data = from_half_blocks(sys.stdin.read())
    sys.stdout.buffer.write(data)


main()
