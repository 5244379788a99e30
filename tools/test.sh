#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The whole test suite: set up and build whatever is missing, then ctest.
set -eu
cd "$(dirname "$0")/.."
sh tools/bootstrap.sh
ctest --test-dir "${PNMF_BUILD_DIR:-build}" --output-on-failure -j2 "$@"
