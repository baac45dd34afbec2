#!/usr/bin/env bash
# The export tests check every format with an independent parser. The Python ones (lxml, anki,
# genanki) come with the dev extra; this installs the GIFT parser: Node and npm from Debian, then
# gift-pegjs pinned by tests/js/package-lock.json. Does nothing when both are already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing nodejs and npm (Debian)"
  apt-get -o DPkg::Lock::Timeout=600 update
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends nodejs npm
fi

if [ ! -f tests/js/node_modules/gift-pegjs/package.json ]; then
  echo "setup: installing gift-pegjs (npm ci in tests/js)"
  (cd tests/js && npm ci --no-audit --no-fund)
fi
