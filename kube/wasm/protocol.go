package wasm

// The requests and responses of Plugin.Call, objects by name
// (namespace/name for namespaced kinds). They mirror the WIT extension
// points of wasched:scheduler and the library's own definition,
// ffi/src/protocol.rs; both sides hold them to the golden fixtures of
// testdata/abi (protocol_test.go here).

// Status codes, kube-scheduler's names.
const (
	Success                      = "Success"
	Error                        = "Error"
	Unschedulable                = "Unschedulable"
	UnschedulableAndUnresolvable = "UnschedulableAndUnresolvable"
	Wait                         = "Wait"
	Skip                         = "Skip"
)

// Unit names a PodGroup or a CompositePodGroup.
type Unit struct {
	PodGroup          string `json:"podGroup,omitempty"`
	CompositePodGroup string `json:"compositePodGroup,omitempty"`
}

// Preemptor names a unit or a lone pod.
type Preemptor struct {
	PodGroup          string `json:"podGroup,omitempty"`
	CompositePodGroup string `json:"compositePodGroup,omitempty"`
	Pod               string `json:"pod,omitempty"`
}

// Progress is how far a unit's placement got.
type Progress struct {
	Scheduled uint32 `json:"scheduled"`
	Remaining uint32 `json:"remaining"`
}

// Placement is a candidate node set; nil Nodes in a request means every
// node of the view.
type Placement struct {
	Name   string     `json:"name"`
	Nodes  []string   `json:"nodes,omitempty"`
	Domain *[2]string `json:"domain,omitempty"`
}

// Victim is one unit a preemption would evict.
type Victim struct {
	Pods           []string `json:"pods"`
	Group          string   `json:"group,omitempty"`
	Priority       int32    `json:"priority"`
	StartTime      int64    `json:"startTime"`
	ViolatesBudget bool     `json:"violatesBudget"`
}

// Candidate is one way to make room.
type Candidate struct {
	Domain      string      `json:"domain"`
	Victims     []Victim    `json:"victims,omitempty"`
	Assignments [][2]string `json:"assignments,omitempty"`
}

// Request is one call; Point is a WIT interface name, or for
// pod-group-post-filter "order-victims" / "select-candidate". Fill the
// fields the point takes.
type Request struct {
	Point       string      `json:"point"`
	Unit        *Unit       `json:"unit,omitempty"`
	Pod         string      `json:"pod,omitempty"`
	Nodes       []string    `json:"nodes,omitempty"`
	Progress    *Progress   `json:"progress,omitempty"`
	Parent      *Placement  `json:"parent,omitempty"`
	Placement   *Placement  `json:"placement,omitempty"`
	Assignments [][2]string `json:"assignments,omitempty"`
	Preemptor   *Preemptor  `json:"preemptor,omitempty"`
	Units       []Victim    `json:"units,omitempty"`
	Candidates  []Candidate `json:"candidates,omitempty"`
}

// Status is a verdict.
type Status struct {
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// Rejection is the nodes a filter rejected for one reason.
type Rejection struct {
	Reason string   `json:"reason"`
	Nodes  []string `json:"nodes"`
}

// Failure is a contained plugin failure: the plugin, the cause (cpu,
// timeout, memory, stack, trap, invalid-result, instantiation) and what
// happened.
type Failure struct {
	Plugin  string `json:"plugin"`
	Cause   string `json:"cause"`
	Message string `json:"message"`
}

// ProgressBounds is how far a permit verdict may be reused.
type ProgressBounds struct {
	MinScheduled uint32 `json:"minScheduled"`
	MaxScheduled uint32 `json:"maxScheduled"`
	MinPossible  uint32 `json:"minPossible"`
	MaxPossible  uint32 `json:"maxPossible"`
}

// LogLine is a line the plugin logged during the call.
type LogLine struct {
	Level   string `json:"level"`
	Message string `json:"message"`
}

// Response is a call's answer; the fields the point gives are set.
type Response struct {
	Status       Status          `json:"status"`
	Failure      *Failure        `json:"failure,omitempty"`
	Rejections   []Rejection     `json:"rejections,omitempty"`
	Scores       []int64         `json:"scores,omitempty"`
	Reuse        *ProgressBounds `json:"reuse,omitempty"`
	Placements   []Placement     `json:"placements,omitempty"`
	SearchBudget *uint32         `json:"searchBudget,omitempty"`
	Score        *int64          `json:"score,omitempty"`
	Order        []uint32        `json:"order,omitempty"`
	Candidate    *uint32         `json:"candidate,omitempty"`
	Logs         []LogLine       `json:"logs,omitempty"`
	// Breaker is set when the call changed the plugin's circuit breaker:
	// BreakerOpened, BreakerReopened (a trial call failed) or
	// BreakerClosed.
	Breaker string `json:"breaker,omitempty"`
}

// What a call did to the plugin's circuit breaker (Response.Breaker), and
// the Failure.Cause of a call refused while it is open.
const (
	BreakerOpened   = "opened"
	BreakerReopened = "reopened"
	BreakerClosed   = "closed"
	CircuitOpen     = "circuit-open"
)
