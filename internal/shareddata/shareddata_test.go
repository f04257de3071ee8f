package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPathPrefersTheNamedFolder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvDir, dir)
	if p, ok := Path("x.jsonl"); !ok || p != filepath.Join(dir, "x.jsonl") {
		t.Errorf("Path = %q, %v; want the file in %s", p, ok, dir)
	}
	if p, ok := Path("absent.jsonl"); ok {
		t.Errorf("a file that exists nowhere was found at %q", p)
	}
}

func TestModuleRootHoldsGoMod(t *testing.T) {
	root, ok := moduleRoot()
	if !ok {
		t.Fatal("no go.mod above the package's folder")
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Errorf("%s: %v", root, err)
	}
	if filepath.Base(root) == "shareddata" {
		t.Errorf("the module root is the package's own folder")
	}
}
