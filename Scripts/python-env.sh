# Sourced by Scripts/test.sh and Scripts/bench.sh: makes `python3` one that has Python's
# `cryptography` package. Debian's own Python refuses `pip install` outside a virtual
# environment, so: Debian's python3-cryptography where python3 is Debian's, otherwise a
# virtual environment under .build/python, put first on PATH for what runs next.
has_cryptography() { python3 -c "import cryptography.hazmat.primitives.ciphers.aead" >/dev/null 2>&1; }
python_sudo=""
[ "$(id -u)" -eq 0 ] || python_sudo="sudo"
if ! has_cryptography && [ "$(command -v python3)" = /usr/bin/python3 ]; then
  echo "python: installing Debian's python3-cryptography" >&2
  $python_sudo apt-get install -y -qq python3-cryptography >/dev/null 2>&1 || true
fi
if ! has_cryptography; then
  python_venv="$PWD/.build/python"
  if [ ! -x "$python_venv/bin/python3" ]; then
    echo "python: making a virtual environment in .build/python for cryptography" >&2
    python3 -m venv "$python_venv" 2>/dev/null || {
      $python_sudo apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$python_venv"
    }
  fi
  "$python_venv/bin/python3" -c "import cryptography" 2>/dev/null || "$python_venv/bin/python3" -m pip install --quiet cryptography
  export PATH="$python_venv/bin:$PATH"
fi
