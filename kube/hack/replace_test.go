// Package hack holds the module's maintenance scripts.
package hack

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestReplaceBlockIsGenerated runs update-replace.sh on a copy of go.mod
// and checks that it writes exactly the committed file: the replace block
// is the one generated from k8s.io/kubernetes's own go.mod, not typed.
func TestReplaceBlockIsGenerated(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "hack"), 0o755); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile("update-replace.sh")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), committed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hack", "update-replace.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	run := exec.Command("bash", filepath.Join(dir, "hack", "update-replace.sh"))
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("update-replace.sh: %v\n%s", err, out)
	}
	regenerated, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if string(regenerated) != string(committed) {
		t.Errorf("go.mod differs from what hack/update-replace.sh generates:\n%s", regenerated)
	}
}
