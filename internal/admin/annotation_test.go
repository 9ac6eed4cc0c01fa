package admin

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"
)

// TestEveryEntryPointNamesItsOperation is the domain half of security
// checklist item 23 (the transports' half is the permission matrix of
// internal/e2e): every exported method of *Service that acts for a
// principal must begin with the permission check of its operation — a
// call, in its first statement, that names an auth.Op (s.can, Authorize,
// or a helper taking the Op). The policy denies an Op it does not list, so
// a new entry point is denied to everyone until its Op is in the table;
// this test fails on an entry point that checks no Op at all.
func TestEveryEntryPointNamesItsOperation(t *testing.T) {
	// Entry points without an Op, and why.
	exempt := map[string]string{
		"DeleteSession": "signs the caller out of its own session: every signed-in principal may",
		"Names":         "names ids of records the caller was already allowed to read (GraphQL field resolvers); it checks tenancy per object itself and reads users' emails only for roles that may (TestNames)",
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range pkgs["admin"].Files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || !fn.Name.IsExported() || !isServiceRecv(fn) || !takesPrincipal(fn) {
				continue
			}
			if _, ok := exempt[fn.Name.Name]; ok {
				continue
			}
			checked++
			if len(fn.Body.List) == 0 || !namesOp(fn.Body.List[0]) {
				t.Errorf("%s: its first statement checks no auth.Op (s.can(ctx, p, auth.Op…)); "+
					"every entry point must check the permission of its operation first", fn.Name.Name)
			}
		}
	}
	if checked < 60 {
		t.Fatalf("checked %d entry points; the walk missed some", checked)
	}
}

func isServiceRecv(fn *ast.FuncDecl) bool {
	st, ok := fn.Recv.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := st.X.(*ast.Ident)
	return ok && id.Name == "Service"
}

func takesPrincipal(fn *ast.FuncDecl) bool {
	for _, f := range fn.Type.Params.List {
		if st, ok := f.Type.(*ast.StarExpr); ok {
			if sel, ok := st.X.(*ast.SelectorExpr); ok && sel.Sel.Name == "Principal" {
				return true
			}
		}
	}
	return false
}

// namesOp reports whether stmt holds a call with an argument auth.Op….
func namesOp(stmt ast.Stmt) bool {
	found := false
	ast.Inspect(stmt, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return !found
		}
		for _, a := range call.Args {
			if sel, ok := a.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "auth" && strings.HasPrefix(sel.Sel.Name, "Op") {
					found = true
				}
			}
			if id, ok := a.(*ast.Ident); ok && id.Name == "op" {
				found = true // Authorize(ctx, p, op, ref) passes its caller's Op on
			}
		}
		return !found
	})
	return found
}
