# Shared by tools/*: installs what a fresh Debian machine lacks, finds Swift.
# Sourced, not run.

# Debian packages the build, the tests and the benchmarks need.
TRIPBOARD_PACKAGES=(python3 python3-nacl pkg-config libsqlite3-dev libsodium-dev libpoppler-cpp-dev libpng-dev libcairo2-dev sqlite3 util-linux bsdutils time strace qpdf poppler-utils tar age libarchive-tools postgresql-15 libpq-dev zsh fish man-db groff-base binutils keyutils gdb)

# Installs the packages in "$@" that are not installed yet: `apt-get update` once, then one
# `apt-get install -y`. Does nothing (and needs no root) when everything is there.
ensure_packages() {
    local missing=()
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "tools: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Puts the Swift toolchain on PATH (the machine image keeps it in /opt/swift).
ensure_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        for candidate in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
            [ -x "$candidate/swift" ] && export PATH="$candidate:$PATH" && break
        done
    fi
    command -v swift >/dev/null 2>&1 || { echo "tools: swift is not installed (expected in /opt/swift)" >&2; exit 69; }
}
