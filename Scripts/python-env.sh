# Sourced by Scripts/test.sh and Scripts/bench.sh: puts first on PATH a `python3` that has
# what the tests' independent implementations and real clients need: `cryptography`, `h2`,
# `httpx` (with HTTP/2), `aioapns`, `http_ece` (Web Push's message encryption), `pywebpush` (the
# reference Web Push sender, beside the stand-in push service), `selenium` (drives
# Debian's chromium for the web app's test), and `pyzbar` (on Debian's libzbar0) with `pillow` to read QR codes. Debian's own Python refuses `pip install` outside a
# virtual environment, and aioapns is only on PyPI, so they live in .build/python.
python_packages=(cryptography h2 "httpx[http2]" aioapns http_ece pywebpush selenium pyzbar pillow)
python_ready() {
  "$1" -c "import cryptography.hazmat.primitives.ciphers.aead, h2, httpx, aioapns, http_ece, pywebpush, selenium, PIL, pyzbar.pyzbar" >/dev/null 2>&1
}
# shellcheck source=Scripts/install-missing.sh
. Scripts/install-missing.sh
python_venv="$PWD/.build/python"
if ! python_ready "$python_venv/bin/python3"; then
  if [ ! -x "$python_venv/bin/python3" ]; then
    echo "python: making a virtual environment in .build/python" >&2
    python3 -m venv "$python_venv" 2>/dev/null || {
      rm -rf "$python_venv"
      install_missing python python3-venv
      python3 -m venv "$python_venv"
    }
  fi
  echo "python: installing ${python_packages[*]} into .build/python" >&2
  "$python_venv/bin/python3" -m pip install --quiet --disable-pip-version-check "${python_packages[@]}"
fi
export PATH="$python_venv/bin:$PATH"
