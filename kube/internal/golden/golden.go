// Package golden holds Go's side of the messages Rust and Go exchange to
// the golden fixtures under testdata/abi: each fixture decodes strictly
// into the Go type and encodes back to the same JSON, and every JSON field
// of the type appears in some fixture. The Rust side holds its types to
// the same files (strictly, and writing them back unchanged), so a field
// renamed or dropped on either side, a required one added on either side,
// or any added on the Go side fails a test; an optional field added on the
// Rust side alone is caught once a fixture sets it.
package golden

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Named is one fixture of a list file: `[{"name": ..., "value": {...}}]`.
type Named struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value"`
}

// path is file under the repository's testdata/abi.
func path(t testing.TB, file string) string {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("golden: cannot locate the repository")
	}
	return filepath.Join(filepath.Dir(here), "..", "..", "..", "testdata", "abi", file)
}

// List reads a list file of named fixtures.
func List(t testing.TB, file string) []Named {
	t.Helper()
	text, err := os.ReadFile(path(t, file))
	if err != nil {
		t.Fatal(err)
	}
	var list []Named
	if err := json.Unmarshal(text, &list); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return list
}

// One reads a file holding one fixture.
func One(t testing.TB, file string) Named {
	t.Helper()
	text, err := os.ReadFile(path(t, file))
	if err != nil {
		t.Fatal(err)
	}
	return Named{Name: file, Value: text}
}

// RoundTrip decodes each fixture strictly into a new T, checks that it
// encodes back to the same JSON, and checks that every JSON field of T
// is set by some fixture.
func RoundTrip[T any](t *testing.T, fixtures []Named) {
	t.Helper()
	seen := map[string]bool{}
	for _, f := range fixtures {
		decoder := json.NewDecoder(bytes.NewReader(f.Value))
		decoder.DisallowUnknownFields()
		var v T
		if err := decoder.Decode(&v); err != nil {
			t.Errorf("%s: %v", f.Name, err)
			continue
		}
		again, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var want, got any
		if err := json.Unmarshal(f.Value, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(again, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: written back as\n%s\nwant\n%s", f.Name, again, f.Value)
		}
		keys(want, "", seen)
	}
	var all []string
	fields(reflect.TypeFor[T](), "", &all)
	sort.Strings(all)
	for _, field := range all {
		if !seen[field] {
			t.Errorf("no fixture sets %s of %s", field, reflect.TypeFor[T]())
		}
	}
}

// keys records the object keys of v as dotted paths (arrays transparent).
func keys(v any, prefix string, into map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			into[prefix+k] = true
			keys(child, prefix+k+".", into)
		}
	case []any:
		for _, child := range v {
			keys(child, prefix, into)
		}
	}
}

// fields lists the JSON field paths of t (pointers, slices and arrays
// transparent; embedded structs inline, as encoding/json writes them).
func fields(t reflect.Type, prefix string, into *[]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < t.NumField(); i++ {
		field := t.Field(i)
		tag := field.Tag.Get("json")
		if field.Anonymous && tag == "" {
			fields(field.Type, prefix, into)
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !field.IsExported() {
			continue
		}
		if name == "" {
			name = field.Name
		}
		*into = append(*into, prefix+name)
		fields(field.Type, prefix+name+".", into)
	}
}
