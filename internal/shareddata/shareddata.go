// Package shareddata finds the human-rated data sets shared beside the
// repository (FED, Topical-Chat), which tests and benchmarks read but the
// repository does not hold.
package shareddata

import (
	"os"
	"path/filepath"
)

// EnvDir names a folder that holds the shared data sets, for checkouts
// where they are not beside the repository.
const EnvDir = "BATCHEVAL_SHARED_DATASETS"

// Path returns the path of the shared data set name, and whether it
// exists: in the folder EnvDir names, else in shared/datasets beside the
// repository, or beside the folder of worktrees that holds it. The
// repository is found from the working directory (a package's folder
// while its tests run) by looking up for go.mod.
func Path(name string) (string, bool) {
	var dirs []string
	if d := os.Getenv(EnvDir); d != "" {
		dirs = append(dirs, d)
	}
	if root, ok := moduleRoot(); ok {
		dirs = append(dirs, filepath.Join(root, "..", "shared", "datasets"), filepath.Join(root, "..", "..", "shared", "datasets"))
	}
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	if len(dirs) == 0 {
		return name, false
	}
	return filepath.Join(dirs[len(dirs)-1], name), false
}

// moduleRoot is the nearest folder at or above the working directory
// that holds go.mod.
func moduleRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
