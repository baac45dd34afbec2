#!/usr/bin/env bash
# Canvas's own QTI converter, QTIMigrationTool (github.com/instructure/QTIMigrationTool, BSD
# licence, Python 3 + lxml), which Canvas runs on every QTI 1.2 import as
# `migrate.py --ucvars --nogui --overwrite --cpout=OUT DIR`; the Canvas scoring tests run it too.
# It is on no package registry, and its code is never copied into this repository. First found:
#   1. $QUIZGYM_QTI_MIGRATION_TOOL: a checkout you already have (nothing is fetched);
#   2. .cache/qti-migration-tool: fetched by an earlier run;
#   3. a shallow git clone of the public repository into .cache/qti-migration-tool
#      ($QUIZGYM_QTI_MIGRATION_TOOL_URL overrides where from).
# When the host cannot be reached (no route, no name resolution), it says so, records git's own
# message in .cache/qti-migration-tool.unreachable and goes on (any other failure stops setup): the tests that need the converter then skip,
# quoting that record, even under CI=true (it is on no registry this machine can reach, and its
# code may not be copied in). Without the record (setup never ran) they fail under CI=true.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ -n "${QUIZGYM_QTI_MIGRATION_TOOL:-}" ]; then
  if [ -f "$QUIZGYM_QTI_MIGRATION_TOOL/migrate.py" ]; then exit 0; fi
  echo "setup: QUIZGYM_QTI_MIGRATION_TOOL=$QUIZGYM_QTI_MIGRATION_TOOL holds no migrate.py" >&2
  exit 1
fi
target=.cache/qti-migration-tool
[ -f "$target/migrate.py" ] && exit 0

url="${QUIZGYM_QTI_MIGRATION_TOOL_URL:-https://github.com/instructure/QTIMigrationTool.git}"
if ! command -v git > /dev/null; then
  echo "setup: git is needed to fetch QTIMigrationTool (apt-get install git)" >&2
  exit 1
fi
echo "setup: fetching QTIMigrationTool (git clone --depth 1 $url)"
mkdir -p .cache
rm -rf "$target.partial" "$target.unreachable"
if error=$(git clone --quiet --depth 1 "$url" "$target.partial" 2>&1); then
  mv "$target.partial" "$target"
  echo "setup: QTIMigrationTool $(git -C "$target" rev-parse --short HEAD) in $target"
else
  rm -rf "$target.partial"
  # Only a failure to reach the host is recorded (the tests then skip); anything else (a wrong
  # URL, a repository that moved, a TLS or rate-limit error) is a setup failure to fix.
  if printf '%s' "$error" | grep -Eq "Could not resolve host|Failed to connect|Connection timed out|Network is unreachable|Temporary failure in name resolution"; then
    printf '%s\n%s\n' "$url" "$error" > "$target.unreachable"
    echo "setup: could not reach $url ($error); set QUIZGYM_QTI_MIGRATION_TOOL to a checkout" >&2
  else
    echo "setup: could not fetch QTIMigrationTool from $url: $error" >&2
    exit 1
  fi
fi
