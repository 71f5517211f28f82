package wasm

import (
	"testing"

	"example.invalid/wasched/kube/internal/golden"
)

// TestTheProtocolMatchesTheGoldenFixtures: the requests and responses of
// testdata/abi, which the Rust side (ffi/src/protocol.rs) decodes strictly
// and writes back too, decode strictly here and are written back
// unchanged, and every field of Request and Response appears in some
// fixture.
func TestTheProtocolMatchesTheGoldenFixtures(t *testing.T) {
	t.Run("requests", func(t *testing.T) {
		golden.RoundTrip[Request](t, golden.List(t, "requests.json"))
	})
	t.Run("responses", func(t *testing.T) {
		golden.RoundTrip[Response](t, golden.List(t, "responses.json"))
	})
}
