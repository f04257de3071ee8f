package methods

import (
	"slices"

	"github.com/batcheval/batcheval/evaluator"
)

// Setting names one launch setting: a field of the launch form, a flag of
// the command line. A method lists the settings it reads (Method.Reads),
// so the launch form knows which unreadable field blocks which method and
// a report knows whether a run has method settings to state.
type Setting string

// The launch settings. The first group are evaluator.Settings, the second
// evaluator.MethodSettings (see MethodSettingsRead).
const (
	SettingRounds      Setting = "rounds"
	SettingBatchSize   Setting = "batch_size"
	SettingTemperature Setting = "temperature"
	SettingTopP        Setting = "top_p"
	SettingSeed        Setting = "seed"
	SettingProcedure   Setting = "procedure"
	SettingComposition Setting = "composition"
	SettingSortKey     Setting = "sort_key"
	SettingScoring     Setting = "scoring"
	// SettingMaxTokens caps each judge answer; G-Eval does not read it (its
	// one-integer form answer has a fixed limit of its own).
	SettingMaxTokens Setting = "max_tokens"

	SettingSamples           Setting = "samples"
	SettingSampleTemperature Setting = "sample_temperature"
	SettingUseLogprobs       Setting = "use_logprobs"
	SettingLLMEvalScale      Setting = "llmeval_scale"
	SettingGEvalSteps        Setting = "steps"
	// SettingMinReadableShare is the fewest readable answers a sampled
	// score rests on, as a share of the answers asked for (G-Eval's
	// sampling, CloserLook).
	SettingMinReadableShare Setting = "min_readable_share"

	// Settings a method records in a run's evaluator.MethodSettings when
	// it starts (not fields of the launch form): G-Eval's least share on
	// allowed scores, CloserLook's own top_p and rating format.
	SettingMinAllowedMass    Setting = "min_allowed_mass"
	SettingCloserLookTopP    Setting = "closerlook_top_p"
	SettingCloserLookScoring Setting = "closerlook_scoring"
)

// methodSettings are the settings kept in a run's evaluator.MethodSettings.
var methodSettings = []Setting{SettingSamples, SettingSampleTemperature, SettingUseLogprobs, SettingLLMEvalScale, SettingGEvalSteps,
	SettingMinReadableShare, SettingMinAllowedMass, SettingCloserLookTopP, SettingCloserLookScoring}

// SettingOfKey is the setting a JSON key of evaluator.Settings or
// evaluator.MethodSettings holds: the key itself, except G-Eval's steps
// ("geval_steps"). A report leaves out a key whose setting is Unread.
func SettingOfKey(key string) Setting {
	if key == "geval_steps" {
		return SettingGEvalSteps
	}
	return Setting(key)
}

// runSettings are the launch settings kept in a run's evaluator.Settings.
var runSettings = []Setting{SettingRounds, SettingBatchSize, SettingTemperature, SettingTopP, SettingSeed,
	SettingProcedure, SettingComposition, SettingSortKey, SettingScoring, SettingMaxTokens}

// runReader is a method whose settings read depend on the stored run
// (CloserLook's older runs).
type runReader interface {
	ReadsRun(r Run) []Setting
}

// Unread lists the launch settings a run of m does not read, in launch
// order: a report of the run leaves them out, so a G-Eval run does not
// state a batch size or rounds it never had.
func Unread(m Method, r Run) []Setting {
	reads := m.Reads()
	if rr, ok := m.(runReader); ok {
		reads = rr.ReadsRun(r)
	}
	var out []Setting
	for _, s := range slices.Concat(runSettings, methodSettings) {
		if !slices.Contains(reads, s) {
			out = append(out, s)
		}
	}
	return out
}

// Reads reports whether m reads setting s.
func Reads(m Method, s Setting) bool { return slices.Contains(m.Reads(), s) }

// MethodSettingsRead reports whether m reads any method setting, i.e.
// whether a run's evaluator.MethodSettings mean something for it.
func MethodSettingsRead(m Method) bool {
	return slices.ContainsFunc(m.Reads(), func(s Setting) bool { return slices.Contains(methodSettings, s) })
}

// Setup is one run of the standard comparison ("launch all methods"): a
// name for its row, the method and the settings it runs with.
type Setup struct {
	Name string
	// Method is filled in by StandardSetups; a method's Setups leave it.
	Method         evaluator.Method
	Settings       evaluator.Settings
	MethodSettings evaluator.MethodSettings
}

// StandardSetups is the comparison the paper's Table 1 makes from a
// launch's settings and method settings: every method's own setups
// (Method.Setups), in table order.
func StandardSetups(base evaluator.Settings, ms evaluator.MethodSettings) []Setup {
	var out []Setup
	for _, m := range All() {
		for _, s := range m.Setups(base, ms) {
			s.Method = m.Name()
			out = append(out, s)
		}
	}
	return out
}
