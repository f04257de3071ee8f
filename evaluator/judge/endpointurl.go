package judge

import (
	"net/url"
	"strings"
)

// endpointSuffixes are the paths a client adds to a base URL, which people
// paste with it when they copy a whole endpoint (Azure's portal and
// OpenAI's reference both show one): the chat path every call adds, and
// the legacy completions path of the same API.
var endpointSuffixes = []string{"/" + chatPath, "/completions"}

// EndpointSuffix is the endpoint path a base URL's path ends in (as
// written, "/chat/completions" in any case, ignoring a final '/'), or ""
// when it ends in none.
func EndpointSuffix(path string) string {
	path = strings.TrimRight(path, "/")
	for _, s := range endpointSuffixes {
		if len(path) >= len(s) && strings.EqualFold(path[len(path)-len(s):], s) {
			return path[len(path)-len(s):]
		}
	}
	return ""
}

// TrimEndpoint is a base URL without the endpoint path pasted at the end
// of its path (EndpointSuffix), and that suffix; the rest (query string,
// fragment) is kept as written. A base URL that ends in none, or does not
// parse, comes back as is with "".
func TrimEndpoint(raw string) (string, string) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return raw, ""
	}
	suffix := EndpointSuffix(u.EscapedPath())
	if suffix == "" {
		return raw, ""
	}
	// The path ends where the query or the fragment starts; after the
	// scheme's "//", so a '?' cannot come earlier.
	end := len(raw)
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		end = i
	}
	path := strings.TrimRight(raw[:end], "/")
	return path[:len(path)-len(suffix)] + raw[end:], suffix
}
