#!/usr/bin/env bash
# The serve tests run against a real PostgreSQL server as well as SQLite: Debian's postgresql,
# which each test run starts in a temporary folder of its own (tests/serve_helpers.py) and stops
# again; nothing is started here. Does nothing when initdb is there.
set -euo pipefail

if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  exit 0
fi
echo "setup: installing postgresql (Debian)"
apt-get -o DPkg::Lock::Timeout=600 update
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends postgresql
