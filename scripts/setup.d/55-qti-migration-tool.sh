#!/usr/bin/env bash
# Canvas's own QTI converter, QTIMigrationTool (github.com/instructure/QTIMigrationTool, BSD
# licence, Python 3 + lxml), which Canvas runs on every QTI 1.2 import as
# `migrate.py --ucvars --nogui --overwrite --cpout=OUT DIR`; the Canvas scoring tests run it too.
# It is on no package registry, so a copy comes with the tests (tests/vendor/qti-migration-tool,
# its licence beside it; see tests/vendor/README.md): nothing is fetched. This checks that the
# copy is whole, or that $QUIZGYM_QTI_MIGRATION_TOOL, when set, names a checkout to use instead.
set -euo pipefail
cd "$(dirname "$0")/../.."

tool="${QUIZGYM_QTI_MIGRATION_TOOL:-tests/vendor/qti-migration-tool}"
for file in migrate.py lib/imsqtiv1.py lib/imscp.py; do
  if [ ! -f "$tool/$file" ]; then
    echo "setup: QTIMigrationTool in $tool lacks $file" >&2
    exit 1
  fi
done
if [ -z "${QUIZGYM_QTI_MIGRATION_TOOL:-}" ] && [ ! -f "$tool/LICENSE.txt" ]; then
  echo "setup: the copy of QTIMigrationTool in $tool lacks its LICENSE.txt" >&2
  exit 1
fi
