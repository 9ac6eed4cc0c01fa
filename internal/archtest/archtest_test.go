package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is the module path; patterns and reports use paths relative to it.
const module = "github.com/sluicehq/sluice"

// reach says how far a rule looks from a package.
type reach int

const (
	// anyPath forbids the target directly or through any chain of the
	// module's packages: the package may not depend on it at all.
	anyPath reach = iota
	// directOnly forbids the target among the package's own imports. Used
	// where a neutral package in between may legitimately know the target
	// (internal/store uses auth.Role; internal/auth builds its own 403s).
	directOnly
)

func (r reach) String() string {
	if r == directOnly {
		return "imports"
	}
	return "depends on"
}

// rule forbids packages matching from (less those matching unless) to
// depend on packages matching to (less those matching but). Patterns are
// paths relative to the module: "proxy" is that package alone,
// "proxy/..." is it and everything under it, "..." is every package of the
// module.
type rule struct {
	from   []string
	unless []string
	to     []string
	but    []string
	reach  reach
	why    string
}

// rules are Sluice's dependency rules (docs/architecture.md, "Dependencies
// one way"). Only a package's own code is checked, not its tests: a test may
// wire the planes together, as cmd/sluice does.
var rules = []rule{
	{from: p("proxy/..."), to: p("internal/admin/..."), reach: anyPath,
		why: "the data plane never imports the admin domain: it serves from its snapshot"},
	{from: p("proxy/..."), to: p("graph/..."), reach: anyPath,
		why: "the data plane never imports an admin transport"},
	{from: p("proxy/providers/..."), to: p("internal/store/..."), reach: anyPath,
		why: "provider adapters never import the store: they speak the neutral model, not rows"},
	{from: p("proxy/providers/..."), to: p("proxy"), reach: anyPath,
		why: "provider adapters never import the proxy server that drives them"},
	{from: p("internal/store/...", "analytics/..."), to: p("internal/apierr"), reach: directOnly,
		why: "storage never builds HTTP errors: it returns typed errors, each transport maps them once"},
	{from: p("internal/store/...", "analytics/..."), to: p("proxy/...", "graph/..."), reach: anyPath,
		why: "storage never imports a transport or the data plane; the proxy writes analytics, not the reverse"},
	{from: p("internal/admin/..."), to: p("graph/...", "proxy/..."), reach: anyPath,
		why: "the domain never imports a transport or the data plane; cmd wires them with small interfaces"},
	{from: p("internal/..."), to: p("proxy/...", "graph/..."), but: p("proxy/providers/providertest"), reach: anyPath,
		why: "internal/ holds the domain and helpers the planes use, never the planes themselves " +
			"(the mock provider is test tooling: sluice bench drives it)"},
	{from: p("internal/declarative/..."), to: p("internal/store/...", "internal/admin/...", "internal/auth/..."), reach: anyPath,
		why: "configuration as code talks to the admin API over HTTP only, so roles, validation and the audit log apply to it"},
	{from: p("..."), unless: p("cmd/..."), to: p("cmd/..."), reach: anyPath,
		why: "nothing imports a command: cmd is the root that wires everything"},
}

// pending are wrong-way edges that other parts of issue 13 are removing in
// parallel: each is allowed until its fix is merged, then its entry must go
// (the test fails on an entry no longer needed). Never add to this list to
// make a new edge pass.
var pending = []edge{}

// forbids reports whether r forbids depending on pkg.
func (r *rule) forbids(pkg string) bool { return matchAny(r.to, pkg) && !matchAny(r.but, pkg) }

// p lists patterns; it makes the rules table read as one line per rule.
func p(patterns ...string) []string { return patterns }

// edge is an import of the module's package to by its package from,
// relative to the module.
type edge struct{ from, to string }

// violation is a rule broken by pkg through path (pkg first, the forbidden
// package last).
type violation struct {
	rule *rule
	path []string
}

func (v violation) String() string {
	return fmt.Sprintf("%s %s %s (%s)\n\trule: %s", v.path[0], v.rule.reach, v.path[len(v.path)-1],
		strings.Join(v.path, " → "), v.rule.why)
}

// match reports whether the package pkg matches pattern.
func match(pattern, pkg string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return match(pat, pkg) })
}

// check returns every violation of rules in graph (package → the module's
// packages it imports), leaving out the edges in allowed. For a rule that
// looks along any path it reports the shortest path to each forbidden
// package.
func check(graph map[string][]string, rules []rule, allowed []edge) []violation {
	imports := func(from string) []string {
		var out []string
		for _, to := range graph[from] {
			if !slices.Contains(allowed, edge{from, to}) {
				out = append(out, to)
			}
		}
		return out
	}
	pkgs := make([]string, 0, len(graph))
	for pkg := range graph {
		pkgs = append(pkgs, pkg)
	}
	slices.Sort(pkgs)
	var out []violation
	for i := range rules {
		r := &rules[i]
		for _, pkg := range pkgs {
			if !matchAny(r.from, pkg) || matchAny(r.unless, pkg) {
				continue
			}
			if r.reach == directOnly {
				for _, to := range imports(pkg) {
					if r.forbids(to) {
						out = append(out, violation{r, []string{pkg, to}})
					}
				}
				continue
			}
			// Breadth first, so that each forbidden package is reported
			// once, by its shortest path.
			prev := map[string]string{pkg: ""}
			queue := []string{pkg}
			for len(queue) > 0 {
				cur := queue[0]
				queue = queue[1:]
				for _, to := range imports(cur) {
					if _, seen := prev[to]; seen {
						continue
					}
					prev[to] = cur
					if r.forbids(to) {
						path := []string{to}
						for at := cur; at != ""; at = prev[at] {
							path = append([]string{at}, path...)
						}
						out = append(out, violation{r, path})
						continue // what it imports in turn is its own rule's business
					}
					queue = append(queue, to)
				}
			}
		}
	}
	return out
}

// stale returns the entries of allowed that are not edges of graph.
func stale(graph map[string][]string, allowed []edge) []edge {
	var out []edge
	for _, e := range allowed {
		if !slices.Contains(graph[e.from], e.to) {
			out = append(out, e)
		}
	}
	return out
}

// TestDependencyRules reads the module's import graph with `go list` and
// fails on every import that goes the wrong way.
func TestDependencyRules(t *testing.T) {
	graph := importGraph(t)
	if len(graph) < 20 {
		t.Fatalf("go list found %d packages of %s; the graph cannot be right", len(graph), module)
	}
	// A pattern that matches no package is a rule about nothing: after a
	// move, the rules must follow.
	for _, r := range rules {
		for _, pat := range slices.Concat(r.from, r.unless, r.to, r.but) {
			if !slices.ContainsFunc(keys(graph), func(pkg string) bool { return match(pat, pkg) }) {
				t.Errorf("rule %q: pattern %q matches no package", r.why, pat)
			}
		}
	}
	for _, v := range check(graph, rules, pending) {
		t.Errorf("wrong-way dependency: %s", v)
	}
	for _, e := range stale(graph, pending) {
		t.Errorf("pending entry %s → %s is no longer an import: remove it from the pending list", e.from, e.to)
	}
}

// TestCheckReportsWrongWayEdges shows that check fails on a bad graph: a
// rule broken directly, one broken through another package, and one
// allowed by the pending list.
func TestCheckReportsWrongWayEdges(t *testing.T) {
	graph := map[string][]string{
		"cmd/sluice":         {"proxy", "internal/admin"},
		"proxy":              {"proxy/snapshot", "internal/budget"},
		"proxy/snapshot":     {"internal/store"},
		"proxy/providers":    {"internal/store"},
		"internal/budget":    {"internal/admin"}, // proxy reaches admin through budget
		"internal/admin":     {"internal/store", "graph/rest"},
		"internal/store":     {"internal/auth"},
		"internal/auth":      {"internal/apierr"},
		"internal/apierr":    nil,
		"graph/rest":         {"internal/admin"},
		"analytics/embedded": {"internal/apierr"},
		// The mock provider is allowed to internal/, the rest of the
		// data plane is not.
		"internal/bench":               {"proxy/providers/providertest", "proxy/snapshot"},
		"proxy/providers/providertest": nil,
	}
	got := map[string]bool{}
	for _, v := range check(graph, rules, []edge{{"analytics/embedded", "internal/apierr"}}) {
		got[strings.Join(v.path, " → ")] = true
	}
	want := map[string]bool{
		"proxy → internal/budget → internal/admin":              true, // along a path
		"proxy/providers → internal/store":                      true, // directly
		"internal/admin → graph/rest":                           true,
		"internal/budget → internal/admin → graph/rest":         true, // internal/ reaches a transport
		"proxy → internal/budget → internal/admin → graph/rest": true, // and with it the data plane
		"internal/bench → proxy/snapshot":                       true, // not the mock provider
	}
	for path := range want {
		if !got[path] {
			t.Errorf("check did not report %s", path)
		}
	}
	for path := range got {
		if !want[path] {
			t.Errorf("check reported %s, which breaks no rule (or is allowed)", path)
		}
	}
	if s := stale(graph, []edge{{"analytics/embedded", "internal/apierr"}, {"proxy", "internal/admin"}}); len(s) != 1 ||
		s[0] != (edge{"proxy", "internal/admin"}) {
		t.Errorf("stale = %v, want the edge proxy → internal/admin only", s)
	}
}

// pkg is a package of the module as `go list` describes it.
type pkg struct {
	Dir     string   // its directory
	GoFiles []string // its non-test Go files, relative to Dir
	Imports []string // the module's packages its non-test files import, relative to the module
}

// listPackages returns the module's packages by path relative to the
// module, read with `go list`.
func listPackages(t *testing.T) map[string]*pkg {
	t.Helper()
	// `go test` puts its own go first on PATH; the test never skips, so a
	// CI run without go fails here rather than passing unchecked.
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the import graph: %v", err)
	}
	cmd := exec.Command(gobin, "list", "-deps", "-json=ImportPath,Dir,GoFiles,Imports,Error", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs, err := parseList(out)
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// importGraph returns the module's packages (relative paths) and, for
// each, the module's packages its non-test files import.
func importGraph(t *testing.T) map[string][]string {
	t.Helper()
	graph := map[string][]string{}
	for path, p := range listPackages(t) {
		graph[path] = p.Imports
	}
	return graph
}

// parseList reads the JSON stream of `go list -json`, keeping the module's
// packages and their imports of the module's packages.
func parseList(out []byte) (map[string]*pkg, error) {
	pkgs := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var listed struct {
			ImportPath string
			Dir        string
			GoFiles    []string
			Imports    []string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&listed); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		if listed.Error != nil {
			return nil, fmt.Errorf("go list: package %s: %s", listed.ImportPath, listed.Error.Err)
		}
		rel, ok := relative(listed.ImportPath)
		if !ok {
			continue // the standard library and other modules
		}
		p := &pkg{Dir: listed.Dir, GoFiles: listed.GoFiles, Imports: []string{}}
		for _, imp := range listed.Imports {
			if r, ok := relative(imp); ok {
				p.Imports = append(p.Imports, r)
			}
		}
		pkgs[rel] = p
	}
}

// relative returns path relative to the module, and whether it is in it.
func relative(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

func keys(graph map[string][]string) []string {
	out := make([]string, 0, len(graph))
	for k := range graph {
		out = append(out, k)
	}
	return out
}
