#!/bin/bash
# copy_parse.sh ROWS: three rounds of parse-only, UNLOGGED heap and UNLOGGED tides loads (copy_ab.sh)
WHAT="parse heap tides parse heap tides parse heap tides" exec bash "$(dirname "$0")/copy_ab.sh" new "$1"
