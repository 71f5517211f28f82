package engine

import (
	"testing"

	"example.invalid/wasched/kube/internal/golden"
)

// TestThePrintedResultMatchesTheGoldenFixture: what `wasched-kube
// schedule` prints decodes strictly from testdata/abi/harness-result.json
// (which the Rust side, host/src/cluster/readback.rs, decodes strictly
// too), is written back unchanged, and sets every field.
func TestThePrintedResultMatchesTheGoldenFixture(t *testing.T) {
	golden.RoundTrip[Printed](t, []golden.Named{golden.One(t, "harness-result.json")})
}
