package wasmplugin

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"sigs.k8s.io/yaml"

	"example.invalid/wasched/kube/wasm"
)

// BundledNames are the names the components embedded in the library call
// themselves (kube-scheduler's configuration names them so; none collides
// with an in-tree plugin), as the library lists them.
func BundledNames() []string {
	var names []string
	for _, b := range wasm.Bundled() {
		names = append(names, b.Name)
	}
	return names
}

// Options registers the bundled components and every plugin whose
// pluginConfig args name a `component` file in the configuration file
// args name with --config (kube-scheduler's registry is fixed before it
// reads its configuration, so the names are read from the file here).
func Options(args []string) ([]app.Option, error) {
	names := BundledNames()
	if path := configFlag(args); path != "" {
		extra, err := componentNames(path)
		if err != nil {
			return nil, err
		}
		for _, name := range extra {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	options := make([]app.Option, 0, len(names))
	for _, name := range names {
		options = append(options, app.WithPlugin(name, Factory(name)))
	}
	return options, nil
}

// configFlag is the value of --config in args.
func configFlag(args []string) string {
	for i, arg := range args {
		if v, ok := strings.CutPrefix(arg, "--config="); ok {
			return v
		}
		if arg == "--config" && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// componentNames are the pluginConfig names whose args give a component.
func componentNames(path string) ([]string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var config struct {
		Profiles []struct {
			PluginConfig []struct {
				Name string `json:"name"`
				Args struct {
					Component string `json:"component"`
				} `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(text, &config); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	var names []string
	for _, profile := range config.Profiles {
		for _, pc := range profile.PluginConfig {
			if pc.Args.Component != "" && !slices.Contains(names, pc.Name) {
				names = append(names, pc.Name)
			}
		}
	}
	return names, nil
}
