package web

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// chartNumber is a point's number as the experiment chart draws it.
type chartNumber struct {
	text   string
	x, y   float64
	anchor string
}

// chartNumbers parses the experiment chart's SVG and returns the numbers
// written beside its points, and how many leader lines it draws.
func chartNumbers(t *testing.T, html string) (nums []chartNumber, leaders int) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader("<root>" + html + "</root>"))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	var cur *chartNumber
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			attr := map[string]string{}
			for _, a := range el.Attr {
				attr[a.Name.Local] = a.Value
			}
			switch {
			case el.Name.Local == "line" && attr["class"] == "pt-leader":
				leaders++
			case el.Name.Local == "text" && attr["class"] == "pt-num":
				x, errX := strconv.ParseFloat(attr["x"], 64)
				y, errY := strconv.ParseFloat(attr["y"], 64)
				if errX != nil || errY != nil {
					t.Fatalf("number at x=%q y=%q", attr["x"], attr["y"])
				}
				cur = &chartNumber{x: x, y: y, anchor: attr["text-anchor"]}
			}
		case xml.CharData:
			if cur != nil {
				cur.text += string(el)
			}
		case xml.EndElement:
			if el.Name.Local == "text" && cur != nil {
				nums = append(nums, *cur)
				cur = nil
			}
		}
	}
	return nums, leaders
}

// TestExperimentChartNumbersDoNotOverlap: runs with identical or close
// figures get their numbers written apart (parsed from the SVG), each
// joined to its point by a leader line once moved; a lone point keeps its
// number at the upper right with no leader.
func TestExperimentChartNumbersDoNotOverlap(t *testing.T) {
	point := func(x, y float64) ScatterPoint {
		return ScatterPoint{X: x, Y: y, Href: "/runs/1", Title: fmt.Sprintf("%g, %g", x, y)}
	}
	for _, tc := range []struct {
		name    string
		points  []ScatterPoint
		leaders int
	}{
		{"identical runs", []ScatterPoint{point(0.004, 0.71), point(0.004, 0.71)}, 1},
		{"close runs", []ScatterPoint{point(0.004, 0.710), point(0.00401, 0.711), point(0.0041, 0.709), point(0.008, 0.5)}, 2},
		{"at the top", []ScatterPoint{point(0.002, 0.9), point(0.002, 0.9), point(0.002, 0.9)}, 2},
		{"a dozen on one spot", func() []ScatterPoint {
			ps := make([]ScatterPoint, 12)
			for i := range ps {
				ps[i] = point(0.004, 0.7)
			}
			return append(ps, point(0.001, 0.2))
		}(), 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			html := renderString(t, ExperimentChart(ScatterChart{Points: tc.points, XLabel: "cost per sample (US$)", YLabel: "average Pearson"}))
			nums, leaders := chartNumbers(t, html)
			if len(nums) != len(tc.points) {
				t.Fatalf("%d numbers for %d points", len(nums), len(tc.points))
			}
			boxes := make([]expLabel, len(nums))
			for i, n := range nums {
				if n.text != strconv.Itoa(i+1) {
					t.Errorf("number %d reads %q", i+1, n.text)
				}
				boxes[i] = expLabel{X: n.x, Y: n.y, End: n.anchor == "end"}
			}
			for i := range nums {
				for j := range i {
					ax0, ay0, ax1, ay1 := boxes[i].box(nums[i].text)
					bx0, by0, bx1, by1 := boxes[j].box(nums[j].text)
					if ax0 < bx1 && bx0 < ax1 && ay0 < by1 && by0 < ay1 {
						t.Errorf("numbers %s at (%g, %g) and %s at (%g, %g) overlap", nums[i].text, nums[i].x, nums[i].y, nums[j].text, nums[j].x, nums[j].y)
					}
				}
			}
			if leaders != tc.leaders {
				t.Errorf("%d leader lines, want %d (one per moved number)", leaders, tc.leaders)
			}
		})
	}
	one := renderString(t, ExperimentChart(ScatterChart{Points: []ScatterPoint{point(0.004, 0.71), point(0.001, 0.3)}}))
	if nums, leaders := chartNumbers(t, one); leaders != 0 || len(nums) != 2 || nums[0].anchor != "start" {
		t.Errorf("points far apart: %d leaders, numbers %+v; want each at its usual place", leaders, nums)
	}
}
