package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// The data plane needs one thing of internal/auth: the roles (who may call
// inference, whose tokens are valid on which gateway), declared in
// internal/auth/roles.go. The admin parts of the package, the endpoint ×
// role policy (policy.go) and the admin principal (principal.go), are the
// admin API's: the data plane never uses them. The import graph cannot see
// the difference (one package), so this test reads the data plane's code.

// authFile is the file of internal/auth whose names the data plane may use.
const authFile = "roles.go"

// TestDataPlaneUsesOnlyRoles fails when a non-test file under proxy/ uses a
// name of internal/auth that roles.go does not declare.
func TestDataPlaneUsesOnlyRoles(t *testing.T) {
	pkgs := listPackages(t)
	auth, ok := pkgs["internal/auth"]
	if !ok {
		t.Fatal("go list found no internal/auth")
	}
	allowed := declared(t, filepath.Join(auth.Dir, authFile))
	if len(allowed) == 0 {
		t.Fatalf("%s declares no exported name", authFile)
	}
	uses := 0
	for path, p := range pkgs {
		if !match("proxy/...", path) || !slices.Contains(p.Imports, "internal/auth") {
			continue
		}
		for _, file := range p.GoFiles {
			for _, name := range authNames(t, filepath.Join(p.Dir, file)) {
				uses++
				if !allowed[name] {
					t.Errorf("%s/%s uses auth.%s: the data plane uses only the roles of internal/auth (%s), not the admin API's policy or principal",
						path, file, name, authFile)
				}
			}
		}
	}
	if uses == 0 {
		t.Log("the data plane uses nothing of internal/auth")
	}
}

// TestAuthNames shows that authNames finds the uses of internal/auth under
// any import name, and nothing else.
func TestAuthNames(t *testing.T) {
	src := `package x

import (
	a "` + module + `/internal/auth"
	"other/auth"
)

var _ = a.Role("x")
var _ = auth.Check
func f(p *a.Principal) bool { return a.Administrator.CanCallInference() }
`
	file := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := authNames(t, file)
	slices.Sort(got)
	if want := []string{"Administrator", "Principal", "Role"}; !slices.Equal(got, want) {
		t.Errorf("authNames = %v, want %v", got, want)
	}
}

// declared returns the exported top-level names declared in file.
func declared(t *testing.T, file string) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.IsExported() {
				out[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						out[s.Name.Name] = true
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// authNames returns the names of internal/auth that file uses (auth.X),
// one entry per use.
func authNames(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == module+"/internal/auth" {
			local = "auth"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				out = append(out, sel.Sel.Name)
			}
		}
		return true
	})
	return out
}
