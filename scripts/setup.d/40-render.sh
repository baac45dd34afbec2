#!/usr/bin/env bash
# Outside tools for worksheets and their tests: WeasyPrint's system libraries (Pango) and fonts
# that cover the bank's mathematics (Σ ∈ ∖ ᵀ −), poppler's pdftotext for the PDF text-layer test,
# Debian's chromium for the browser screenshot test (driven by playwright with
# executable_path; playwright never downloads a browser of its own here), and cmark-gfm, GitHub's
# own Markdown renderer, which reads the Markdown worksheets back in the tests.
# Idempotent: does nothing when every package is already installed.
set -euo pipefail

packages=(libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core poppler-utils chromium cmark-gfm)
missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then sudo=(); else sudo=(sudo); fi
echo "render: installing ${missing[*]}"
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y \
  --no-install-recommends -qq "${missing[@]}"
