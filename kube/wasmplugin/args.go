package wasmplugin

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"example.invalid/wasched/kube/wasm"
)

// spec reads a plugin's pluginConfig args, the schema simulate reads too
// (host/src/config/args.rs: failurePolicy, fuel, timeout, memoryLimit,
// limits, args) plus `component`, the component file (absent:
// the bundled component of that name). kube-scheduler hands an
// out-of-tree plugin its args as *runtime.Unknown holding JSON, or nil when
// the configuration has no pluginConfig entry for it.
func spec(name string, obj runtime.Object) (wasm.PluginSpec, error) {
	s := wasm.PluginSpec{Name: name}
	if obj == nil {
		return s, nil
	}
	unknown, ok := obj.(*runtime.Unknown)
	if !ok {
		return s, fmt.Errorf("pluginConfig %s: args of type %T, want JSON", name, obj)
	}
	if len(unknown.Raw) == 0 {
		return s, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(unknown.Raw, &fields); err != nil {
		return s, fmt.Errorf("pluginConfig %s: args: %v", name, err)
	}
	if raw, ok := fields["component"]; ok {
		if err := json.Unmarshal(raw, &s.Component); err != nil {
			return s, fmt.Errorf("pluginConfig %s: args.component: %v", name, err)
		}
		delete(fields, "component")
	}
	rest, err := json.Marshal(fields)
	if err != nil {
		return s, err
	}
	s.Config = rest
	return s, nil
}
