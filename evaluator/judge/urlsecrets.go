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
// name or password (userInfo), and the names of query parameters that
// carry one, in the order written. An address that does not parse has
// none that can be told apart.
func URLCredentials(raw string) (userInfo bool, params []string) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return false, nil
	}
	for _, p := range queryParts(u.RawQuery) {
		if CredentialParam(p.name) {
			params = append(params, p.name)
		}
	}
	return u.User != nil, params
}

// RedactURL is raw as it may be shown to anyone: a user name and password
// and the values of credential parameters are replaced by Redacted. An
// address without any comes back unchanged; one that does not parse is
// cut before anything that could hold one ('?', '#', and what precedes an
// '@').
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
	userInfo, params := URLCredentials(raw)
	if !userInfo && len(params) == 0 {
		return raw
	}
	if userInfo {
		u.User = url.User(Redacted)
	}
	u.RawQuery = redactQuery(u.RawQuery)
	return u.String()
}

// RedactURLIn replaces, in text that may quote baseURL (an error from the
// HTTP client names the address it called), the base URL's user name and
// password and the values of its credential parameters by Redacted. Only
// the written forms are replaced (user:password@, name=value), so a short
// secret does not blank out unrelated words.
func RedactURLIn(text, baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return text
	}
	var pairs []string
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
	}
	for _, p := range queryParts(u.RawQuery) {
		if CredentialParam(p.name) && p.value != "" {
			pairs = append(pairs, p.raw, p.rawName+"="+Redacted)
		}
	}
	if len(pairs) == 0 {
		return text
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// queryPart is one name=value of a raw query: as written, its name as
// written and unescaped, and its value as written.
type queryPart struct {
	raw, rawName, name, value string
}

func queryParts(rawQuery string) []queryPart {
	var out []queryPart
	for _, raw := range strings.Split(rawQuery, "&") {
		if raw == "" {
			continue
		}
		rawName, value, _ := strings.Cut(raw, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			name = rawName
		}
		out = append(out, queryPart{raw: raw, rawName: rawName, name: name, value: value})
	}
	return out
}

// redactQuery replaces the values of credential parameters in a raw query.
func redactQuery(rawQuery string) string {
	parts := strings.Split(rawQuery, "&")
	for i, raw := range parts {
		rawName, _, _ := strings.Cut(raw, "=")
		name, err := url.QueryUnescape(rawName)
		if err != nil {
			name = rawName
		}
		if raw != "" && CredentialParam(name) {
			parts[i] = rawName + "=" + Redacted
		}
	}
	return strings.Join(parts, "&")
}
