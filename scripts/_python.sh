# Sourced by the other scripts: find a Python >= 3.12 and make .venv with it.
# mitmproxy 12 needs 3.12 or newer, and the machine's plain python3 may be older.
find_python() {
    local candidate
    for candidate in python3.13 python3.12 python3; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
            echo "$candidate"; return 0
        fi
    done
    local root="${PYENV_ROOT:-$HOME/.pyenv}"
    for candidate in "$root"/versions/3.1[2-9]*/bin/python3; do
        if [ -x "$candidate" ]; then echo "$candidate"; return 0; fi
    done
    echo "a2a-recorder needs Python >= 3.12 and found none (tried python3.13, python3.12, python3, pyenv)" >&2
    return 1
}

ensure_venv() {
    local extras="$1" root
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    if [ ! -x "$root/.venv/bin/python" ]; then
        local py; py="$(find_python)" || return 1
        "$py" -m venv "$root/.venv"
    fi
    local stamp="$root/.venv/.installed-$extras"
    if [ ! -f "$stamp" ] || [ "$root/pyproject.toml" -nt "$stamp" ]; then
        "$root/.venv/bin/python" -m pip install --quiet --upgrade pip
        "$root/.venv/bin/python" -m pip install --quiet -e "$root[$extras]"
        touch "$stamp"
    fi
}
