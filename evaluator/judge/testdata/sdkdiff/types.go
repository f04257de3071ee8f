// Package diff compares decode.go (copied in by run.sh) with the decoder
// of the openai-go SDK that it replaced.
package diff

type TopLogprob struct {
	Token   string
	Logprob float64
}
type TokenLogprob struct {
	Token   string
	Logprob float64
	Top     []TopLogprob
}
type Choice struct {
	Text         string
	FinishReason string
	Logprobs     []TokenLogprob
}
