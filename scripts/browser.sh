#!/usr/bin/env bash
# Installs what the browser tests (crates/quarry-cli/tests/it/browser.rs) need, when missing:
# Debian's Chromium (/usr/bin/chromium) and CJK/emoji fonts (apt-get as root or passwordless sudo), and
# playwright-core from npm into tests/browser/node_modules (pinned by its package-lock.json).
# The full `playwright` package and `npx playwright install` are not used: they download a
# browser, which this kind of machine cannot. Idempotent; everything goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

# Chromium, and fonts for CJK text and emoji (without them screenshots show empty boxes).
packages=(chromium fonts-wqy-microhei fonts-noto-color-emoji)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            echo "browser.sh: ${missing[*]} missing and this user cannot apt-get install them;" \
                "install these Debian packages" >&2
            exit 1
        fi
    fi
    echo "browser.sh: installing ${missing[*]} with apt-get (about a minute)" >&2
    "${sudo[@]}" apt-get update -qq >&2 || true
    if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; then
        # An interrupted earlier install leaves dpkg half-done: finish it, then try once more.
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get --fix-broken install -y -qq >&2
        "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    fi
fi

if ! command -v node >/dev/null 2>&1; then
    echo "browser.sh: node is missing; install Node.js 20 (Debian: apt-get install nodejs npm)" >&2
    exit 1
fi
if [ ! -f tests/browser/node_modules/playwright-core/package.json ]; then
    echo "browser.sh: installing playwright-core from npm into tests/browser/node_modules" >&2
    (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
echo "browser.sh: $(/usr/bin/chromium --version 2>/dev/null | head -1), playwright-core" \
    "$(node -p "require('./tests/browser/node_modules/playwright-core/package.json').version")" >&2
