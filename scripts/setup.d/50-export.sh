#!/usr/bin/env bash
# The export tests check every format with an independent parser or scorer. The Python ones
# (lxml, anki, genanki) come with the dev extra; this installs the npm ones, pinned by
# tests/js/package-lock.json: gift-pegjs (GIFT), and Citolab's QTI player @citolab/qti-components
# with its QTI 2.1 → 3.0 converter @citolab/qti-convert (run headless in Debian's chromium, which
# 40-render.sh installs), and axe-core for the serve pages' accessibility tests. Node and npm come
# from Debian. Does nothing when all are there.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing nodejs and npm (Debian)"
  apt-get -o DPkg::Lock::Timeout=600 update
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends nodejs npm
fi

installed=true
for package in gift-pegjs @citolab/qti-components @citolab/qti-convert axe-core; do
  [ -f "tests/js/node_modules/$package/package.json" ] || installed=false
done
if [ "$installed" = false ]; then
  echo "setup: installing the npm checkers (npm ci in tests/js)"
  (cd tests/js && npm ci --no-audit --no-fund)
fi
