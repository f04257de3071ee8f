package web

import "math"

// IsMissing says whether a score or rating is missing: nil, or NaN (a
// value that could not be read is missing, never 0).
func IsMissing(v *float64) bool { return v == nil || math.IsNaN(*v) }

// notRated is the one wording of a missing human rating wherever one is
// shown: the run page's and a share link's tables of samples, a sample's
// page (the run's, a share link's, a comparison's), the review queue, a
// batch's page and the standalone report's table and sections. Beside it
// the reason is given (in the text, or in a cell's title and for screen
// readers). The downloaded report wrote "— (not rated)" and the sample
// pages a bare "—" where the tables wrote "not rated": one product, one
// wording. The review queue writes the same two words as literal text
// (review.templ: its generated code stays small beside the queue's forms).
// The CSV and JSON exports give no word for it: an empty cell and null,
// which programs read as missing.
const notRated = "not rated"

// humanRatingText is a human rating as a page shows it beside its words:
// two decimals, or notRated when it is missing (nil or NaN); a dash while
// the report's human ratings are being prepared (pending), when whether
// the sample has one is not known yet.
func humanRatingText(v *float64, pending bool) string {
	if IsMissing(v) && !pending {
		return notRated
	}
	return runScore(v)
}
