package dataimport

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/batcheval/batcheval/internal/quote"
)

// Encoding names how the bytes of an upload were read as text.
type Encoding string

// The encodings an upload may be in.
const (
	UTF8    Encoding = "UTF-8"
	UTF8BOM Encoding = "UTF-8 with a byte order mark" // Excel's "CSV UTF-8"
	UTF16LE Encoding = "UTF-16"                       // Excel's "Unicode Text" (little-endian, with its byte order mark)
	UTF16BE Encoding = "UTF-16 (big-endian)"
	// Windows1252 is the 8-bit encoding older Excel versions on Windows
	// use for "CSV (Comma delimited)" in Western European languages; a
	// file that is not UTF-8 from its start is read as it.
	Windows1252 Encoding = "Windows-1252"
)

// Reading is what Scan found out about how to read a file: its encoding
// and, for a CSV file, the separator between fields.
type Reading struct {
	Encoding  Encoding
	Separator rune // ',', ';' or '\t' for CSV; 0 for JSON and JSON Lines
}

// Note says in a sentence how the file was read, for the import notes,
// or is "" for the usual case (UTF-8, comma-separated or JSON) that needs
// no word.
func (r Reading) Note() string {
	var parts []string
	switch r.Encoding {
	case UTF16LE, UTF16BE:
		parts = append(parts, string(r.Encoding)+" text")
	case Windows1252:
		parts = append(parts, "Windows-1252 text (not UTF-8)")
	}
	switch r.Separator {
	case '\t':
		parts = append(parts, "tab-separated")
	case ';':
		parts = append(parts, "semicolon-separated (decimal commas in ratings read as decimal points)")
	}
	if len(parts) == 0 {
		return ""
	}
	note := "The file was read as "
	for i, p := range parts {
		if i > 0 {
			note += ", "
		}
		note += p
	}
	note += "."
	if r.Encoding == Windows1252 {
		note += ` Check that accented letters and curly quotes (é, ’) look right in the rows below; if they do not, save the file as "CSV UTF-8 (Comma delimited)" (Excel: File > Save As) and upload it again.`
	}
	return note
}

// decodeInput reads the start of br and returns the reader of the file's
// text as UTF-8 with what it found: a UTF-8 byte order mark is dropped,
// UTF-16 with its byte order mark is decoded as it streams, and a file
// whose start is not UTF-8 but reads as Windows-1252 is decoded from that.
// For UTF-8 the reader is br itself, with no layer added. Workbooks are
// refused here.
//
// A file whose start is ASCII is decided later, at its first byte beyond
// ASCII: undecided then holds the decision utf8Checker makes on its way
// (asciiStart), which is the file's encoding once the file is read.
func decodeInput(br *bufio.Reader) (_ *bufio.Reader, _ Encoding, undecided *asciiStart, _ error) {
	head, err := br.Peek(4)
	if err != nil && err != io.EOF {
		return nil, "", nil, err
	}
	var dec transform.Transformer
	enc := UTF8
	switch {
	case bytes.HasPrefix(head, utf8BOM):
		_, err := br.Discard(len(utf8BOM))
		return br, UTF8BOM, nil, err
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		// The decoder drops the byte order mark itself.
		dec, enc = unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder(), UTF16LE
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		dec, enc = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder(), UTF16BE
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0}):
		return nil, "", nil, &ParseError{Msg: msgWorkbook}
	default:
		start, err := br.Peek(headerPeek)
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return nil, "", nil, err
		}
		if asciiOnly(start) && err == nil {
			// Nothing yet tells UTF-8 from Windows-1252, which read ASCII
			// alike: the first byte beyond ASCII decides, however far in
			// (asciiStart, in utf8Checker).
			return br, UTF8, &asciiStart{}, nil
		}
		if !looksWindows1252(start) {
			return br, UTF8, nil, nil
		}
		dec, enc = charmap.Windows1252.NewDecoder(), Windows1252
		return bufio.NewReaderSize(transform.NewReader(&utf8Guard{r: br, line: 1}, dec), headerPeek), enc, nil, nil
	}
	return bufio.NewReaderSize(transform.NewReader(br, dec), headerPeek), enc, nil, nil
}

// asciiOnly reports bytes that are all ASCII.
func asciiOnly(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiPrefix is the length of b's ASCII start, checked eight bytes at a
// time: an undecided utf8Checker looks for the first byte beyond it.
func asciiPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 != 0 {
			break
		}
	}
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// asciiStart is the encoding decision of a file whose start (as far as
// headerPeek reaches) is ASCII, which UTF-8 and Windows-1252 read alike:
// utf8Checker, which scans every byte anyway, decides at the file's first
// byte beyond ASCII, wherever that is, for the rest of the file. A
// well-formed UTF-8 character makes it UTF-8 (a byte that is not UTF-8
// further on is then refused with its line); a byte that cannot start one
// where it stands, and that Windows-1252 defines, makes it Windows-1252
// (a UTF-8 character further on is then refused with its line by
// utf8Guard, as the two are mixed). The bytes before it read the same
// either way, so nothing read before the decision is read wrongly;
// deciding from the first 64 KiB alone refused an old Excel CSV whose
// first accented letter came on row 2,000. No reader layer is added:
// ASCII files, the most common, are read as before.
type asciiStart struct {
	enc Encoding // the decision; "" before
}

// decide reads the bytes at the first byte beyond ASCII (head: that byte
// and up to three more) and returns the reader of the rest of the file,
// br itself for UTF-8; line is the line of that byte.
func (a *asciiStart) decide(head []byte, br *bufio.Reader, line int) io.Reader {
	b := head[0]
	r, size := utf8.DecodeRune(head)
	undefined := b == 0x81 || b == 0x8D || b == 0x8F || b == 0x90 || b == 0x9D
	if (r != utf8.RuneError || size > 1) || undefined {
		// UTF-8, or no Windows-1252 either: utf8Checker refuses a bad
		// byte with its line.
		a.enc = UTF8
		return br
	}
	a.enc = Windows1252
	return transform.NewReader(&utf8Guard{r: br, line: line}, charmap.Windows1252.NewDecoder())
}

// utf8Guard passes the bytes of a file read as Windows-1252 through, and
// stops at a well-formed UTF-8 character beyond ASCII: the file's start
// was not UTF-8 but this part is, so the file mixes encodings (rows pasted
// from elsewhere), and reading it as Windows-1252 would garble those
// characters ("cafÃ©") without a word. Windows-1252 text almost never
// holds such a pair of bytes.
type utf8Guard struct {
	r    io.Reader
	line int    // line of the next byte
	tail []byte // a possible character's start, cut by the previous read
	err  error
}

func (g *utf8Guard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	data := append(g.tail, p[:n]...)
	kept := len(g.tail)
	g.tail = nil
	for i := 0; i < len(data); i++ {
		b := data[i]
		if b == '\n' && i >= kept {
			g.line++
		}
		if b < 0xC2 || b > 0xF4 {
			continue
		}
		if !utf8.FullRune(data[i:]) && len(data)-i < utf8.UTFMax && err == nil {
			g.tail = append([]byte(nil), data[i:]...)
			break
		}
		if r, size := utf8.DecodeRune(data[i:]); r != utf8.RuneError && size > 1 {
			g.err = &ParseError{Line: g.line, Msg: fmt.Sprintf(
				"the file was read as Windows-1252 (its start is not UTF-8), but this line holds UTF-8 text (%s), so the file mixes two encodings: %s",
				quote.Quoted(string(data[i:i+size])), msgSaveAsCSV)}
			return 0, g.err
		}
	}
	return n, err
}

// looksWindows1252 reports a file start that is not UTF-8 and reads as
// Windows-1252: it has a byte that cannot begin or continue a UTF-8
// character where it stands, no well-formed UTF-8 character beyond ASCII
// (a file that has some is UTF-8 with a stray byte, refused with its line
// by utf8Checker rather than read wrongly), no NUL byte (UTF-16 without
// its mark, or binary) and none of the five bytes Windows-1252 leaves
// undefined. A character cut at the end of head is not judged.
func looksWindows1252(head []byte) bool {
	invalid := false
	for i := 0; i < len(head); {
		b := head[i]
		switch {
		case b == 0:
			return false
		case b < utf8.RuneSelf:
			i++
			continue
		case b == 0x81 || b == 0x8D || b == 0x8F || b == 0x90 || b == 0x9D:
			return false
		}
		r, size := utf8.DecodeRune(head[i:])
		if r != utf8.RuneError || size > 1 {
			return false // a well-formed multi-byte character: UTF-8
		}
		if !utf8.FullRune(head[i:]) && len(head)-i < utf8.UTFMax {
			break // cut by the end of head
		}
		invalid = true
		i++
	}
	return invalid
}

// decodeHead decodes the first bytes of a file (for DetectFormat) the way
// decodeInput reads the whole of it; a character cut at the end is lost.
func decodeHead(head []byte) ([]byte, Encoding) {
	var dec transform.Transformer
	enc := UTF8
	switch {
	case bytes.HasPrefix(head, utf8BOM):
		return head[len(utf8BOM):], UTF8BOM
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}):
		dec, enc = unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder(), UTF16LE
		head = head[:len(head)&^1]
	case bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		dec, enc = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder(), UTF16BE
		head = head[:len(head)&^1]
	case looksWindows1252(head):
		dec, enc = charmap.Windows1252.NewDecoder(), Windows1252
	default:
		return head, UTF8
	}
	out, _, err := transform.Bytes(dec, head)
	if err != nil {
		return head, UTF8
	}
	return out, enc
}
