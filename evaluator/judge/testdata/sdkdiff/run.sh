#!/bin/sh
# Differential test of decode.go against the openai-go SDK's decoder, which
# the judge client used before decode.go replaced it. This directory is a
# module of its own (under testdata, so the main module ignores it): the SDK
# is no dependency of batcheval. Needs the SDK in the module cache or
# network access to the Go module proxy.
#   sh evaluator/judge/testdata/sdkdiff/run.sh [fuzz seconds]
set -e
# The SDK's own tests import azcore, which go mod tidy would want: the
# requirements here are listed by hand, so let go fill in go.sum.
export GOFLAGS=-mod=mod
cd "$(dirname "$0")"
sed 's/^package judge$/package diff/' ../../decode.go > decode_copy.go
trap 'rm -f decode_copy.go' EXIT
go test -count 1 -run 'TestSeeds|TestGenerated|TestShaped' -v . | grep -v '^=== RUN'
if [ -n "$1" ]; then
	go test -run XXX -fuzz FuzzDecodeLikeSDK -fuzztime "${1}s" -parallel 2 .
fi
