#!/usr/bin/env bash
# The ecosystem's checks, as CI runs them after the suite:
# - swift-format in lint mode with the committed .swift-format (any finding fails);
# - the public API against its baseline (Scripts/api.sh);
# - the DocC catalogs built to static HTML, every symbol link resolved (Scripts/docs.sh).
#   Scripts/lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."

swift-format lint --strict --recursive --parallel Sources Tests Package.swift
echo "lint: swift-format found nothing"
Scripts/api.sh
Scripts/docs.sh
