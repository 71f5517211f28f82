package wasmplugin

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"example.invalid/wasched/kube/wasm"
)

// Components is a set of components for a kube-scheduler run: the bundled
// ones, or every *.wasm file of a directory, with the registry that makes
// them kube-scheduler plugins and the profile that enables each at the
// points it exports.
type Components struct {
	// Registry holds one factory per component.
	Registry frameworkruntime.Registry
	// Infos are the components, by name.
	Infos []wasm.PluginInfo
	// On are the ones the default profile enables.
	On []string
}

// Load reads the components: dir's *.wasm files in name order (each
// enabled), or with dir empty the bundled ones (those on by default
// enabled, as the library lists them). A file that is not a component, or is built against an
// unknown contract, is an error naming it.
func Load(dir string) (*Components, error) {
	rt, err := sharedRuntime()
	if err != nil {
		return nil, err
	}
	c := &Components{Registry: frameworkruntime.Registry{}}
	add := func(spec wasm.PluginSpec, on bool) error {
		p, err := rt.Load(spec)
		if err != nil {
			return err
		}
		info := p.Info
		p.Close()
		if _, dup := c.Registry[info.Name]; dup {
			return fmt.Errorf("%s: a second component calls itself %s", spec.Component, info.Name)
		}
		c.Registry[info.Name] = FactoryWithComponent(info.Name, spec.Component)
		c.Infos = append(c.Infos, info)
		if on {
			c.On = append(c.On, info.Name)
		}
		return nil
	}
	if dir == "" {
		for _, b := range wasm.Bundled() {
			if err := add(wasm.PluginSpec{Name: b.Name}, b.OnByDefault); err != nil {
				return nil, err
			}
		}
		return c, nil
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.wasm"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.wasm plugin components in this directory", dir)
	}
	sort.Strings(files)
	for _, file := range files {
		abs, err := filepath.Abs(file)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); err != nil {
			return nil, err
		}
		if err := add(wasm.PluginSpec{Component: abs}, true); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Plugins is the `plugins:` section of a profile that runs the enabled
// components at every point they export that this plugin maps, in place
// of the in-tree plugins there (GangScheduling stays for
// PlacementFeasible, which kube-scheduler consults for it alone;
// DefaultPreemption stays for lone pods' PostFilter), indented for a
// profile entry.
func (c *Components) Plugins() string {
	type set struct{ enabled, disabled []string }
	points := map[string]*set{}
	order := []string{"preEnqueue", "placementGenerate", "placementScore", "podGroupPostFilter", "preFilter", "filter", "preScore", "score", "permit"}
	for _, point := range order {
		points[point] = &set{}
	}
	for _, info := range c.Infos {
		on := false
		for _, name := range c.On {
			on = on || name == info.Name
		}
		if !on {
			continue
		}
		for _, export := range info.Points {
			switch export {
			case "pre-enqueue":
				points["preEnqueue"].enabled = append(points["preEnqueue"].enabled, info.Name)
				points["preEnqueue"].disabled = []string{"GangScheduling"}
			case "permit":
				points["permit"].enabled = append(points["permit"].enabled, info.Name)
				points["permit"].disabled = []string{"GangScheduling"}
			case "placement-generate":
				points["placementGenerate"].enabled = append(points["placementGenerate"].enabled, info.Name)
				points["placementGenerate"].disabled = []string{"TopologyPlacementGenerator"}
			case "placement-score":
				points["placementScore"].enabled = append(points["placementScore"].enabled, info.Name)
			case "pod-group-post-filter":
				points["podGroupPostFilter"].enabled = append(points["podGroupPostFilter"].enabled, info.Name)
				points["podGroupPostFilter"].disabled = []string{"DefaultPreemption"}
			case "filter":
				points["preFilter"].enabled = append(points["preFilter"].enabled, info.Name)
				points["filter"].enabled = append(points["filter"].enabled, info.Name)
			case "score":
				points["preScore"].enabled = append(points["preScore"].enabled, info.Name)
				points["score"].enabled = append(points["score"].enabled, info.Name)
			}
		}
	}
	var b strings.Builder
	b.WriteString("  plugins:\n")
	list := func(names []string) string {
		items := make([]string, len(names))
		for i, n := range names {
			items[i] = fmt.Sprintf("{name: %s}", n)
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	for _, point := range order {
		s := points[point]
		if len(s.enabled) == 0 {
			continue
		}
		fmt.Fprintf(&b, "    %s:\n      enabled: %s\n", point, list(s.enabled))
		if len(s.disabled) > 0 {
			fmt.Fprintf(&b, "      disabled: %s\n", list(s.disabled))
		}
	}
	return b.String()
}
