package dataimport

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

// BenchmarkScanEncodings scans the same 200,000 rows as a UTF-8 CSV (the
// baseline, read with no layer added), a UTF-8 TSV, Excel's "Unicode
// Text" (UTF-16LE TSV with its byte order mark) and an older Excel's
// Windows-1252 CSV, in one process, each read from a file in a temporary
// directory as an upload is; MB/s count the bytes of the file as
// uploaded, and peak-heap/file the live heap's growth as a share of it.
func BenchmarkScanEncodings(b *testing.B) {
	const rows = 200000
	var csvText, tsvText, asciiText bytes.Buffer
	csvText.WriteString("id,response,quality\n")
	asciiText.WriteString("id,response,quality\n")
	tsvText.WriteString("id\tresponse\tquality\n")
	for i := range rows {
		fmt.Fprintf(&csvText, "s%07d,\"The response number %d, judged for the benchmark: café\",%d\n", i, i, i%5+1)
		fmt.Fprintf(&asciiText, "s%07d,\"The response number %d, judged for the benchmark: cafe\",%d\n", i, i, i%5+1)
		fmt.Fprintf(&tsvText, "s%07d\tThe response number %d, judged for the benchmark: café\t%d,5\n", i, i, i%5+1)
	}
	utf16, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes(tsvText.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	cp1252, err := charmap.Windows1252.NewEncoder().Bytes(csvText.Bytes())
	if err != nil {
		b.Fatal(err)
	}
	files := []struct {
		name string
		data []byte
		want Reading
	}{
		{"utf8-csv", csvText.Bytes(), Reading{UTF8, ','}},
		{"utf8-tsv", tsvText.Bytes(), Reading{UTF8, '\t'}},
		{"utf16le-tsv", utf16, Reading{UTF16LE, '\t'}},
		{"windows1252-csv", cp1252, Reading{Windows1252, ','}},
		// ASCII throughout: read through asciiStart, which waits for a
		// byte beyond ASCII to decide the encoding (import43).
		{"ascii-csv", asciiText.Bytes(), Reading{UTF8, ','}},
		// ASCII for half the file, then Windows-1252.
		{"ascii-then-windows1252-csv", append(append([]byte(nil), asciiText.Bytes()[:asciiText.Len()/2]...), cp1252[len(cp1252)/2:]...), Reading{Windows1252, ','}},
	}
	dir := b.TempDir()
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, f.data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	size := map[string]int{}
	for i := range files {
		size[files[i].name] = len(files[i].data)
		files[i].data = nil
	}
	csvText, tsvText, asciiText, utf16, cp1252 = bytes.Buffer{}, bytes.Buffer{}, bytes.Buffer{}, nil, nil
	for _, f := range files {
		b.Run(f.name, func(b *testing.B) {
			var peak uint64
			b.SetBytes(int64(size[f.name]))
			for b.Loop() {
				in, err := os.Open(filepath.Join(dir, f.name))
				if err != nil {
					b.Fatal(err)
				}
				stop := samplePeak()
				n := 0
				sum, err := Scan(in, CSV, Options{MaxBytes: 1 << 30, MaxRows: 2 * rows, ReuseValues: true}, func(Record) error { n++; return nil })
				peak = max(peak, stop())
				in.Close()
				if err != nil || n != rows || sum.Read != f.want {
					b.Fatalf("Scan: %d rows, read %+v, %v", n, sum.Read, err)
				}
			}
			b.ReportMetric(float64(peak)/float64(size[f.name]), "peak-heap/file")
			b.ReportMetric(float64(size[f.name])/1e6, "file-MB")
		})
	}
}
