package archtest

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the size a hand-written Go file stays under
// (docs/architecture.md; STYLE.md "Size").
const maxLines = 800

// TestFileSize fails on a non-generated Go file of the module over
// maxLines lines: a file that grows past it is a package asking to be
// split.
func TestFileSize(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		n, generated, err := countLines(path)
		if err != nil {
			return err
		}
		checked++
		if !generated && n > maxLines {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s has %d lines, over %d: split it", rel, n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files under %s; the walk cannot be right", checked, root)
	}
}

// countLines returns the number of lines of the file at path and whether
// it carries Go's "Code generated … DO NOT EDIT." marker.
func countLines(path string) (int, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	n, generated := 0, false
	for sc.Scan() {
		n++
		if line := sc.Text(); strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			generated = true
		}
	}
	return n, generated, sc.Err()
}
