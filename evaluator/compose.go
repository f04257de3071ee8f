package evaluator

import (
	"math"
	"math/rand/v2"
	"sort"
)

// ComposeFirstRound shuffles the sample indices 0..n-1 with rng and cuts them
// into ceil(n/b) batches of b; the last batch is short when n is not a
// multiple of b. A batch size below 1 is treated as 1 (sample-wise judging);
// n <= 0 gives no batches.
func ComposeFirstRound(n, b int, rng *rand.Rand) [][]int {
	if n <= 0 {
		return nil
	}
	return cut(rng.Perm(n), b)
}

// ComposeRound forms the batches of the next round from one sort key per
// sample (keys[i] for sample i, usually from SortKeys). Every index
// 0..len(keys)-1 appears in exactly one batch.
//
//   - Random reshuffles the samples and cuts them again.
//   - Homogeneous sorts the samples by key, best first, and cuts consecutive
//     runs of b, so similar samples share a batch; the short remainder batch,
//     if any, holds the lowest keys.
//   - Heterogeneous (the paper's best) sets aside len(keys) mod b randomly
//     chosen samples, sorts the rest by key, best first, splits that list into
//     b strata of equal size and lets batch i take the i-th element of every
//     stratum, so each batch spans the whole quality range. The order inside
//     each batch is shuffled, and the set-aside samples form one final short
//     batch.
//
// Ties in the sort are broken randomly (seeded by rng), so samples with
// equal scores do not always travel together. A NaN key means the sample has
// no score yet; it is given the mean of the known keys, which puts it in the
// middle of the quality range rather than at either end (and when no key is
// known at all, every sample ties and the order is simply random). Any other
// Composition value is treated as Random. A batch size below 1 is treated as 1.
func ComposeRound(c Composition, keys []float64, b int, rng *rand.Rand) [][]int {
	n := len(keys)
	if n == 0 {
		return nil
	}
	if b < 1 {
		b = 1
	}
	filled := fillMissing(keys)
	switch c {
	case Homogeneous:
		return cut(sortByKeyDesc(rng.Perm(n), filled), b)
	case Heterogeneous:
		return stratify(filled, b, rng)
	default:
		return cut(rng.Perm(n), b)
	}
}

// stratify builds heterogeneous batches as described on ComposeRound.
func stratify(keys []float64, b int, rng *rand.Rand) [][]int {
	n := len(keys)
	perm := rng.Perm(n)
	// A random prefix of a random permutation is a random subset: these are
	// the samples set aside for the short batch.
	aside, rest := perm[:n%b], perm[n%b:]
	sorted := sortByKeyDesc(rest, keys)
	per := len(sorted) / b // the size of one stratum = the number of full batches
	batches := make([][]int, 0, per+1)
	for i := 0; i < per; i++ {
		batch := make([]int, b)
		for s := 0; s < b; s++ {
			batch[s] = sorted[s*per+i]
		}
		rng.Shuffle(len(batch), func(x, y int) { batch[x], batch[y] = batch[y], batch[x] })
		batches = append(batches, batch)
	}
	if len(aside) > 0 {
		batches = append(batches, append([]int(nil), aside...))
	}
	return batches
}

// SortKeys turns per-round scores into one key per sample for ComposeRound.
// rounds[r][i] is sample i's score in round r, NaN when it has none.
//
// With SortByMean the key is the mean of the sample's non-NaN scores so far.
// With SortByPrevious (and any other value, since it is the paper's choice)
// the key is the last round's score, falling back to the latest earlier
// round that has one. A sample with no score in any round gets NaN. Rounds
// of different lengths are allowed; the result has the length of the longest.
func SortKeys(k SortKey, rounds [][]float64) []float64 {
	n := 0
	for _, r := range rounds {
		n = max(n, len(r))
	}
	keys := make([]float64, n)
	for i := range keys {
		keys[i] = math.NaN()
		if k == SortByMean {
			sum, cnt := 0.0, 0
			for _, r := range rounds {
				if i < len(r) && !math.IsNaN(r[i]) {
					sum += r[i]
					cnt++
				}
			}
			if cnt > 0 {
				keys[i] = sum / float64(cnt)
			}
			continue
		}
		for j := len(rounds) - 1; j >= 0; j-- {
			if i < len(rounds[j]) && !math.IsNaN(rounds[j][i]) {
				keys[i] = rounds[j][i]
				break
			}
		}
	}
	return keys
}

// cut splits idx into consecutive batches of b (the last one may be short).
func cut(idx []int, b int) [][]int {
	if b < 1 {
		b = 1
	}
	batches := make([][]int, 0, (len(idx)+b-1)/b)
	for start := 0; start < len(idx); start += b {
		end := min(start+b, len(idx))
		batches = append(batches, append([]int(nil), idx[start:end]...))
	}
	return batches
}

// sortByKeyDesc returns idx ordered by keys, highest first. idx should come
// in random order: the sort is stable, so that order breaks the ties.
func sortByKeyDesc(idx []int, keys []float64) []int {
	out := append([]int(nil), idx...)
	sort.SliceStable(out, func(a, b int) bool { return keys[out[a]] > keys[out[b]] })
	return out
}

// fillMissing returns a copy of keys with every NaN replaced by the mean of
// the known keys (or 0 when none is known: then all keys tie).
func fillMissing(keys []float64) []float64 {
	sum, cnt := 0.0, 0
	for _, k := range keys {
		if !math.IsNaN(k) {
			sum += k
			cnt++
		}
	}
	mean := 0.0
	if cnt > 0 {
		mean = sum / float64(cnt)
	}
	out := make([]float64, len(keys))
	for i, k := range keys {
		if math.IsNaN(k) {
			k = mean
		}
		out[i] = k
	}
	return out
}
