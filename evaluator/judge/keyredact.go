package judge

import (
	"regexp"
	"strings"
)

// RedactedKey stands in for an API key, or a part of one, in text shown
// to users (a judge's error, a test call's answer).
const RedactedKey = "[redacted]"

// Key redaction hides not only the whole key but whatever an endpoint
// quotes of it: OpenAI answers a wrong key with "Incorrect API key
// provided: sk-abc1****************wxyz", proxies write "sk-...wxyz" or
// the key's first characters, and a message may wrap or cut the key. The
// rules (RedactKey):
//
//   - The whole key is replaced wherever it is, if it looks random: at
//     least minRandomKey characters, with two of lower case letters, upper
//     case letters and digits. A key that does not ("ollama", "EMPTY",
//     "sk-no-key-required": what local servers are given as a key, or a
//     word) is replaced only where it stands as a word of its own, so that
//     it does not blank out the words of the message around it; a key
//     shorter than minShownKey characters is no secret and is left alone
//     (a key "a" or "x" would take every such letter out of the text).
//   - Of a key of at least minFragmentKey characters, any run of the text
//     of at least minFragment consecutive characters of the key past its
//     well-known prefix ("sk-", "sk-proj-", "sk-ant-api03-", "gsk_", ...),
//     that looks random, is replaced, with whatever next to it continues
//     the key (its prefix included). "sk-proj-" or a word is no fragment.
//   - Of such a key, a masked quote (a start of the key, then three or
//     more '*', '•' or '.', or an ellipsis, then an end of the key) that
//     shows at least minMaskedShown characters of the key past its prefix
//     is replaced whole.
const (
	minShownKey    = 4
	minRandomKey   = 8
	minFragmentKey = 16
	minFragment    = 8
	minMaskedShown = 3
)

// publicKeyPrefixes are the well-known openings of providers' keys: the
// same for every key of the provider, so quoting them shows nothing.
// Longest first: the first that opens a key is its prefix.
var publicKeyPrefixes = []string{
	"sk-ant-admin01-", "sk-ant-api03-", "sk-svcacct-", "sk-or-v1-", "sk-admin-", "sk-proj-", "sk-ant-",
	"nvapi-", "pplx-", "AIza", "gsk_", "xai-", "csk-", "sk-", "hf_", "r8_",
}

// keyPrefixLen is the length of key's well-known prefix (0 without one).
func keyPrefixLen(key string) int {
	for _, p := range publicKeyPrefixes {
		if strings.HasPrefix(key, p) && len(key) > len(p) {
			return len(p)
		}
	}
	return 0
}

// looksRandom reports whether s mixes at least two of lower case letters,
// upper case letters and digits, as a generated key (and each run of
// eight characters of one) does and a word does not.
func looksRandom(s string) bool {
	var lower, upper, digit int
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z':
			lower = 1
		case c >= 'A' && c <= 'Z':
			upper = 1
		case c >= '0' && c <= '9':
			digit = 1
		}
	}
	return lower+upper+digit >= 2
}

// keyChar reports whether c may be part of a key as providers write them
// (letters, digits, '-', '_'): a key stands as a word of its own where
// the characters on either side are not.
func keyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// maskedKey finds a masked quote of a key: key characters, a mask, key
// characters.
var maskedKey = regexp.MustCompile(`[A-Za-z0-9_-]*(?:\*{3,}|•{3,}|\.{3,}|…+)[A-Za-z0-9_-]*`)

// RedactKey returns text with key, and any substantial part of it that
// text quotes, replaced by RedactedKey (the rules above). An empty key
// leaves text as it is.
func RedactKey(text, key string) string {
	return redactSecret(text, key, RedactedKey)
}

// redactSecret is RedactKey with the stand-in to write.
func redactSecret(text, key, with string) string {
	key = strings.TrimSpace(key)
	if len(key) < minShownKey || text == "" {
		return text
	}
	if len(key) >= minFragmentKey {
		text = redactMasked(text, key, with)
		text = redactFragments(text, key, with)
	}
	if len(key) >= minRandomKey && looksRandom(key) {
		return strings.ReplaceAll(text, key, with)
	}
	return replaceWord(text, key, with)
}

// replaceWord replaces key where it stands as a word of its own.
func replaceWord(text, key, with string) string {
	var b strings.Builder
	from := 0 // text[:from] is written
	for i := 0; ; {
		k := strings.Index(text[i:], key)
		if k < 0 {
			break
		}
		at, end := i+k, i+k+len(key)
		if (at == 0 || !keyChar(text[at-1])) && (end == len(text) || !keyChar(text[end])) {
			b.WriteString(text[from:at])
			b.WriteString(with)
			from = end
		}
		i = at + 1
	}
	if from == 0 {
		return text
	}
	b.WriteString(text[from:])
	return b.String()
}

// redactMasked replaces masked quotes of key that show enough of it.
func redactMasked(text, key, with string) string {
	pre := keyPrefixLen(key)
	return maskedKey.ReplaceAllStringFunc(text, func(m string) string {
		loc := maskRun.FindStringIndex(m)
		head, tail := m[:loc[0]], m[loc[1]:]
		if head != "" && !strings.HasPrefix(key, head) || tail != "" && !strings.HasSuffix(key, tail) {
			return m
		}
		shown := max(0, len(head)-pre) + len(tail)
		if shown < minMaskedShown {
			return m
		}
		return with
	})
}

// maskRun is the mask of a match of maskedKey.
var maskRun = regexp.MustCompile(`\*{3,}|•{3,}|\.{3,}|…+`)

// redactFragments replaces the runs of text that quote key: each run of
// minFragment characters of the key past its prefix that looks random,
// extended on both sides as long as text goes on as the key does.
func redactFragments(text, key, with string) string {
	pre := keyPrefixLen(key)
	if len(key)-pre < minFragment {
		return text
	}
	// Where in the key each window of minFragment characters starts.
	windows := map[string][]int{}
	for j := pre; j+minFragment <= len(key); j++ {
		w := key[j : j+minFragment]
		if looksRandom(w) {
			windows[w] = append(windows[w], j)
		}
	}
	if len(windows) == 0 {
		return text
	}
	covered := make([]bool, len(text))
	hit := false
	for i := 0; i+minFragment <= len(text); i++ {
		for _, j := range windows[text[i:i+minFragment]] {
			lo, kj := i, j
			for lo > 0 && kj > 0 && text[lo-1] == key[kj-1] {
				lo, kj = lo-1, kj-1
			}
			hi, kh := i+minFragment, j+minFragment
			for hi < len(text) && kh < len(key) && text[hi] == key[kh] {
				hi, kh = hi+1, kh+1
			}
			for p := lo; p < hi; p++ {
				covered[p] = true
			}
			hit = true
		}
	}
	if !hit {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if !covered[i] {
			b.WriteByte(text[i])
			i++
			continue
		}
		for i < len(text) && covered[i] {
			i++
		}
		b.WriteString(with)
	}
	return b.String()
}
