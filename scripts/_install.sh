# Sourced by run.sh and test.sh: make a virtual environment in .venv (or, where the venv module
# is missing, fall back to the user's site-packages) and install ndpsim with the given extras.
set -euo pipefail
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "ndpsim needs Python 3.11 or newer; $PYTHON is $("$PYTHON" --version 2>&1)" >&2
    exit 1
fi
if [ -x .venv/bin/python ] || "$PYTHON" -m venv .venv >/dev/null 2>&1; then
    # shellcheck disable=SC1091
    . .venv/bin/activate
    PYTHON=python
else
    echo "python -m venv is unavailable; installing into the user site-packages" >&2
    export PATH="$HOME/.local/bin:$PATH"
    PIP_USER=1
    export PIP_USER
fi
"$PYTHON" -m pip install --quiet --disable-pip-version-check -e ".${NDPSIM_EXTRAS:-}"
