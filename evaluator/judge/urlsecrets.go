package judge

import (
	"net/url"
	"strings"
)

// Redacted stands in for a credential found in a base URL wherever the
// address is shown. It is plain text, so an address shown with it and
// saved back is refused as still holding a credential rather than stored.
const Redacted = "REDACTED"

// credentialParamNames are query parameter names (lower case, without '-'
// and '_') that carry a credential: API keys, tokens, signatures
// (Azure's SAS sig, AWS's presigned Signature), Azure Functions' code.
var credentialParamNames = map[string]bool{
	"key": true, "apikey": true, "token": true, "accesstoken": true, "authtoken": true, "auth": true,
	"authorization": true, "bearer": true, "sig": true, "signature": true, "secret": true,
	"clientsecret": true, "password": true, "passwd": true, "pwd": true, "code": true,
}

// credentialParamSuffixes catch the many spellings providers use
// (subscription-key, x-goog-api-key, session_token, client-secret).
var credentialParamSuffixes = []string{"key", "token", "secret", "password", "signature"}

// CredentialParam reports whether a query parameter named name carries a
// credential, by its name. api-version, Azure's required parameter, does
// not.
func CredentialParam(name string) bool {
	n := strings.NewReplacer("-", "", "_", "", ".", "").Replace(strings.ToLower(strings.TrimSpace(name)))
	if credentialParamNames[n] {
		return true
	}
	for _, s := range credentialParamSuffixes {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// URLCredentials says what in a base URL looks like a credential: a user
// name or password (userInfo), the names of query parameters that carry
// one (params), and the names of such parameters written in the fragment
// (fragment: #access_token=…, as OAuth's implicit grant writes it, or
// #key=…), each in the order written. A fragment is never sent to the
// endpoint, so a key there does nothing but show to every reader of the
// address. An address that does not parse has none that can be told apart.
func URLCredentials(raw string) (userInfo bool, params, fragment []string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false, nil, nil
	}
	for _, p := range queryParts(u.RawQuery) {
		if CredentialParam(p.name) {
			params = append(params, p.name)
		}
	}
	for _, p := range fragmentParts(u.EscapedFragment()) {
		if CredentialParam(p.name) {
			fragment = append(fragment, p.name)
		}
	}
	return u.User != nil, params, fragment
}

// URLFragment reports whether a base URL has a fragment (a '#' and what
// follows it). A chat endpoint has no use for one: it is never sent, so
// whatever is written there (a key pasted after # with no name=, which
// URLCredentials cannot tell from a word) only shows to every reader of
// the address. Saving a judge refuses any, and RedactURL hides it whole.
func URLFragment(raw string) bool {
	return strings.Contains(raw, "#")
}

// URLParses reports whether raw reads as an address; URLCredentials
// finds nothing in one that does not.
func URLParses(raw string) bool {
	_, err := url.Parse(strings.TrimSpace(raw))
	return err == nil
}

// RedactURL is raw as it may be shown to anyone: a user name and password
// and the values of credential parameters in the query string are replaced
// by Redacted, and so is a fragment, whole (a bare key after # cannot be
// told from a word). An address without any comes back unchanged; one that
// does not parse is cut before anything that could hold one ('?', '#', and
// what precedes an '@').
func RedactURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		cut := raw
		if i := strings.IndexAny(cut, "?#"); i >= 0 {
			cut = cut[:i] + " [" + Redacted + "]"
		}
		if i := strings.LastIndex(cut, "@"); i >= 0 {
			cut = "[" + Redacted + "]" + cut[i:]
		}
		return cut
	}
	userInfo, params, _ := URLCredentials(raw)
	fragment := u.EscapedFragment() != ""
	if !userInfo && len(params) == 0 && !fragment {
		return raw
	}
	if userInfo {
		u.User = url.User(Redacted)
	}
	u.RawQuery = redactParts(u.RawQuery, "&")
	if !fragment {
		return u.String()
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String() + "#" + Redacted
}

// RedactURLIn replaces, in text that may quote baseURL (an error from the
// HTTP client names the address it called), the base URL's user name and
// password, the values of its credential parameters and its fragment by
// Redacted. Only the written forms are replaced (user:password@,
// name=value, #fragment), and, of a password or credential value, what
// RedactKey would hide of a key (the value where it stands as a word, and
// fragments of a long one), so a short secret does not blank out
// unrelated words.
func RedactURLIn(text, baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return text
	}
	var pairs, secrets []string
	// The whole fragment first, as written and unescaped: at the same
	// place, the replacer takes the pair given first.
	if f := u.EscapedFragment(); f != "" {
		pairs = append(pairs, "#"+f, "#"+Redacted)
		if u.Fragment != f {
			pairs = append(pairs, "#"+u.Fragment, "#"+Redacted)
		}
	}
	if u.User != nil {
		info := u.User.String()
		name := u.User.Username()
		// As written, as the HTTP client writes it in its errors (the
		// password as ***), and the user name alone.
		for _, s := range []string{info, url.User(name).String() + ":***", url.User(name).String(), name} {
			if s != "" {
				pairs = append(pairs, s+"@", Redacted+"@")
			}
		}
		if pw, ok := u.User.Password(); ok {
			secrets = append(secrets, pw)
		}
	}
	for _, p := range append(queryParts(u.RawQuery), fragmentParts(u.EscapedFragment())...) {
		if CredentialParam(p.name) && p.value != "" {
			pairs = append(pairs, p.raw, p.rawName+"="+Redacted)
			secrets = append(secrets, p.value)
			if v, err := url.QueryUnescape(p.value); err == nil && v != p.value {
				secrets = append(secrets, v)
			}
		}
	}
	if len(pairs) == 0 {
		return text
	}
	text = strings.NewReplacer(pairs...).Replace(text)
	// What the text quotes of a password or key otherwise: the part an
	// endpoint echoes ("API key not valid: AIzaSyD3****wxyz"), as
	// RedactKey finds it in a key.
	for _, s := range secrets {
		text = redactSecret(text, s, Redacted)
	}
	return text
}

// queryPart is one name=value of a raw query or fragment: as written,
// its name as written and unescaped, and its value as written.
type queryPart struct {
	raw, rawName, name, value string
}

// fragmentSeparators part a fragment's parameters: '&' as in a query
// string, and ';', which some write instead.
const fragmentSeparators = "&;"

func queryParts(rawQuery string) []queryPart {
	var out []queryPart
	for _, raw := range strings.Split(rawQuery, "&") {
		if raw != "" {
			out = append(out, parsePart(raw))
		}
	}
	return out
}

// fragmentParts reads a fragment as parameters, the name=value pieces
// between its separators. A name may follow a path or a '?' of its own
// (#/callback?access_token=…): what comes before the last '/', '?' or '!'
// is not part of it. Pieces without '=' are no parameters.
func fragmentParts(rawFragment string) []queryPart {
	var out []queryPart
	for _, raw := range strings.FieldsFunc(rawFragment, func(r rune) bool { return strings.ContainsRune(fragmentSeparators, r) }) {
		if strings.Contains(raw, "=") {
			out = append(out, parsePart(raw))
		}
	}
	return out
}

// parsePart reads one name=value piece.
func parsePart(raw string) queryPart {
	rawName, value, _ := strings.Cut(raw, "=")
	lead := rawName[strings.LastIndexAny(rawName, "/?!")+1:]
	name, err := url.QueryUnescape(lead)
	if err != nil {
		name = lead
	}
	return queryPart{raw: raw, rawName: rawName, name: name, value: value}
}

// redactParts replaces the values of credential parameters in a raw query
// or fragment whose pieces are parted by any of seps, keeping the rest as
// written.
func redactParts(raw, seps string) string {
	var b strings.Builder
	start := 0
	for i := 0; i <= len(raw); i++ {
		if i < len(raw) && !strings.ContainsRune(seps, rune(raw[i])) {
			continue
		}
		piece := raw[start:i]
		if p := parsePart(piece); piece != "" && CredentialParam(p.name) {
			piece = p.rawName + "=" + Redacted
		}
		b.WriteString(piece)
		if i < len(raw) {
			b.WriteByte(raw[i])
		}
		start = i + 1
	}
	return b.String()
}

// keptQuery is the part of a base URL's raw query string that is sent on
// every request: every parameter but those that carry a credential (which
// SaveJudge refuses; a judge stored before that keeps them, unsent), as
// written. Azure's per-deployment endpoints need their ?api-version=.
func keptQuery(rawQuery string) string {
	var kept []string
	for _, p := range queryParts(rawQuery) {
		if !CredentialParam(p.name) {
			kept = append(kept, p.raw)
		}
	}
	return strings.Join(kept, "&")
}
