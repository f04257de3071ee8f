// Package simjudge is batcheval's built-in SIMULATED judge: an in-process
// server that speaks the OpenAI chat completions protocol, so the demo and
// the tests run offline and the real HTTP client path is exercised end to
// end. It is not a language model and understands nothing: it reads the
// prompts batcheval writes, measures a few surface features of each sample,
// and turns them into scores. Its correlation with human ratings says
// nothing about any real judge.
//
// What it measures, on the LAST field of a sample (the response, summary or
// story being judged), each as a number in [0, 1]:
//
//   - length: the number of words, on a log scale that saturates at 40
//     words;
//   - variety: distinct words / words, damped for texts under 8 words (so
//     "ok" does not count as perfectly varied);
//   - questions: question marks, saturating at 2 (a proxy for inviting a
//     reply);
//   - overlap: the share of its content words (4 letters or more) that also
//     appear in the earlier fields (the context, article or prompt); 0.5 when
//     the sample has only one field.
//
// The features are averaged with weights chosen from the criterion's name:
// engagingness-like criteria weigh questions and variety, coherence- and
// consistency-like criteria weigh overlap, fluency-like criteria weigh
// variety, and anything else uses an even mix (see weightsFor). The mean,
// in [0, 1], is mapped linearly onto the criterion's [lo, hi]; Gaussian noise
// with a standard deviation of Options.Noise times the range is added, and
// the result is clamped to the range and rounded to one decimal (or to an
// integer for integer scoring).
//
// The noise is seeded by the request's seed (or Options.Seed), the
// temperature, the choice index, the sample's text and the text of the
// whole batch. Identical requests therefore get identical answers, while the
// same sample gets slightly different scores in batches with different
// neighbours, like a real judge across BatchEval rounds.
//
// With Options.MissRate above 0 it leaves some scores out of its batch
// answers on purpose (chosen by the same seeded draw), so that the parse and
// repair path can be exercised; repair requests are answered in full.
//
// It also answers the baselines' prompts from the same features: G-Eval's
// steps request (a short numbered list) and its form (an integer score,
// with OpenAI-shaped top_logprobs spread over neighbouring scores when asked,
// and n sampled answers that differ by their noise draw); LLM-Eval's prompt
// (one JSON object with every criterion, bare JSON when a response_format is
// requested); and CloserLook's analyze-rate prompt (a short analysis, then
// "Rating: x", n choices). MissRate also drops LLM-Eval keys and ratings.
//
// Each answer opens with a line saying it is simulated, and every analysis
// names the features behind it. Prompts it does not recognise (a connection
// ping, say) get a short plain reply. The scoring request of "Test
// connection" gets the one score-list line it asks for, followed by
// "(simulated judge)".
package simjudge
