#!/usr/bin/env bash
# Builds the page that hosts the Inspect AI log viewer for InspectViewerBrowserTest:
# installs the locked npm packages and bundles viewer.jsx into dist/ with esbuild.
# Needs node and npm; .ci/run calls it before Maven. Output (node_modules/, dist/) is git-ignored.
set -euo pipefail
cd "$(dirname "$0")"
# esbuild's binary ships in its platform package; its install script only checks it.
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
echo "built $(pwd)/dist"
