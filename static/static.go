// Package static holds the CSS and the small progressive-enhancement
// scripts, embedded in the binary and served under content-hashed names so
// browsers can cache them forever.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
)

//go:embed *.css *.js *.ico
var files embed.FS

// FS is the embedded files.
var FS fs.FS = files

var hashed = map[string]string{} // "app.css" -> "app.3f2a9c1b.css"
var byHashed = map[string]string{}

func init() {
	entries, _ := fs.ReadDir(files, ".")
	for _, e := range entries {
		b, _ := fs.ReadFile(files, e.Name())
		sum := sha256.Sum256(b)
		ext := path.Ext(e.Name())
		h := strings.TrimSuffix(e.Name(), ext) + "." + hex.EncodeToString(sum[:4]) + ext
		hashed[e.Name()] = h
		byHashed[h] = e.Name()
	}
}

// URL returns the cache-busting URL of a static file, e.g. /static/app.3f2a9c1b.css.
func URL(name string) string {
	if h, ok := hashed[name]; ok {
		return "/static/" + h
	}
	return "/static/" + name
}

// Lookup maps a hashed name back to the embedded file name.
func Lookup(hashedName string) (string, bool) {
	n, ok := byHashed[hashedName]
	return n, ok
}

// InlineCSS is the stylesheet's text, for the standalone report that must
// carry its styles inside the file.
func InlineCSS() string {
	b, _ := fs.ReadFile(files, "app.css")
	// The stylesheet is ours and holds no "</", but a closing tag inside it
	// would end the <style> element early: make sure it cannot.
	return strings.ReplaceAll(string(b), "</", `<\/`)
}
