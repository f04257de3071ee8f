package report

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// TestCriterionInputsMatchTheCodeBefore: the hash of a criterion's inputs,
// now gathered in a buffer, is the one written a value at a time before
// (criterionInputsBefore, kept here), for samples with and without
// scores and ratings, with and without a system column, system names
// empty, short and longer than the buffer; so figures stored before
// livemem45 are still read, not computed again.
func TestCriterionInputsMatchTheCodeBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 82))
	opt := func() *float64 {
		if rng.IntN(4) == 0 {
			return nil
		}
		v := rng.NormFloat64()
		if rng.IntN(10) == 0 {
			v = math.Copysign(0, -1)
		}
		return &v
	}
	for _, n := range []int{0, 1, 7, 1000, 3000} {
		for _, system := range []string{"", "system", "sys<&>"} {
			for _, long := range []int{0, 20, 9000} {
				cr := &CriterionReport{Samples: make([]SampleResult, n)}
				rows := make([]models.DatasetRow, n)
				for i := range n {
					cr.Samples[i].Final, cr.Samples[i].Human = opt(), opt()
					name := ""
					if k := rng.IntN(3); k > 0 {
						name = fmt.Sprintf("sys%d", rng.IntN(9)) + strings.Repeat("x", rng.IntN(long+1))
					}
					rows[i].Data = map[string]string{system: name}
				}
				got, want := criterionInputs(cr, system, rows), criterionInputsBefore(cr, system, rows)
				if got != want {
					t.Fatalf("%d samples, system %q, names up to %d bytes: %s, before %s", n, system, long, got, want)
				}
			}
		}
	}
}

func criterionInputsBefore(cr *CriterionReport, system string, rows []models.DatasetRow) string {
	h := sha256.New()
	h.Write([]byte(statsVersion))
	writeInt(h, stats.DefaultResamples)
	writeInt(h, bootstrapSeed)
	writeInt(h, stats.AnalyticAbove)
	writeInt(h, stats.ExactPermutationMax)
	h.Write([]byte(system))
	h.Write([]byte{0})
	for i, s := range cr.Samples {
		writeOpt(h, s.Final)
		writeOpt(h, s.Human)
		if system != "" {
			v := rows[i].Data[system]
			writeInt(h, len(v))
			h.Write([]byte(v))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeInt(h hash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

func writeOpt(h hash.Hash, v *float64) {
	if v == nil {
		h.Write([]byte{0})
		return
	}
	var b [9]byte
	b[0] = 1
	binary.LittleEndian.PutUint64(b[1:], math.Float64bits(*v))
	h.Write(b[:])
}
