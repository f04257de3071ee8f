package judge

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
)

// AnswerStore keeps judge answers by the hash of the request that produced
// them. The database implements it per workspace (models.ResponseCache), so
// answers are never shared between workspaces.
type AnswerStore interface {
	// LoadAnswer returns the answer stored for the occurrence-th identical
	// request (counted from 0), and false when there is none.
	LoadAnswer(ctx context.Context, requestHash string, occurrence int) ([]byte, bool, error)
	// SaveAnswer stores an answer; storing one that is already there is
	// not an error (the first one stays).
	SaveAnswer(ctx context.Context, requestHash string, occurrence int, answer []byte) error
}

// AnswerKey names one stored answer: the request's hash and which of the
// identical requests it answered.
type AnswerKey struct {
	Hash       string
	Occurrence int
}

// BatchLoader is an AnswerStore that can look several requests up in one
// go (one database query instead of one per call). A Cache uses it when
// its store has it: lookups that arrive together are made together.
type BatchLoader interface {
	// LoadAnswers returns the stored answers of keys; a key without one is
	// absent from the map.
	LoadAnswers(ctx context.Context, keys []AnswerKey) (map[AnswerKey][]byte, error)
}

// completer is what the cache wraps: the judge client, or any decorator
// around it.
type completer interface {
	Complete(ctx context.Context, r Request) (Response, error)
}

// Cache answers a request from an AnswerStore when an identical request
// was answered before, and otherwise asks the judge and stores the answer.
// Identical means the same endpoint address, the same model and the same
// request (messages, sampling settings, seed, output format): the whole
// body the judge would receive. The address is the base URL as written,
// query string included, so two api-versions (or deployments) of an Azure
// resource never share answers. How the key is sent (KeyHeader) is not
// part of it, as the key is not: both say who calls, not what is asked,
// and a call the endpoint refuses stores no answer (but a caller probing
// what the endpoint supports can keep its refusal: KeepRefusal). An answer
// from the store costs nothing: it comes back with no tokens, no attempts
// and no latency.
//
// Identical requests within one Cache (one run) are numbered, so the k-th
// of them is matched with the k-th stored answer: a unit tried again after
// an unreadable answer sends its request a second time and gets a new
// answer, and a re-run replays the same sequence. A Cache is safe for
// concurrent use.
type Cache struct {
	inner   completer
	store   AnswerStore
	baseURL string
	model   string
	// OnHit, if set, is called once for each call answered from the store
	// or from another run's call under way, with what the answer cost
	// when it was paid for (the runner counts them on the run: what the
	// run would have cost without the cache).
	OnHit func(ctx context.Context, paid Hit)
	// Run, when set, is the run this cache serves: answers are stored
	// with it and with their unit (WithUnit), so that an answer the run
	// paid for but never counted (its unit was cut short by a crash) is
	// replayed as the paid call it was rather than as a free one.
	Run int64
	// OnReplay, if set, is called for each answer replayed as a paid call
	// (see Run), with what it cost (the runner's spending cap counts it).
	OnReplay func(ctx context.Context, resp Response)
	// Flights, when set, shares calls under way with the other Caches of
	// the process that have the same Scope (the store's workspace): see
	// Flights.
	Flights *Flights
	Scope   string
	// Private keeps the run's answers to itself (the run asked not to
	// reuse identical answers): its keys are salted with Run, so no other
	// run's answer is found, and its own are still there for a resume.
	Private bool
	// Hedge, when set, sends a copy of a unit's call that is much slower
	// than the run's others (the run asked for it: hedge.go). Nil, the
	// default, calls the judge once, with no timer and no goroutine.
	Hedge *Hedger
	// OnAssumedLoss, if set, is called for each hedged copy that lost,
	// cancelled while it was out, with the tokens it is counted at
	// though the endpoint reported none (the winner's prompt tokens): the
	// runner's spending cap, which saw that copy cost nothing, counts it.
	OnAssumedLoss func(ctx context.Context, promptTokens, completionTokens int)

	mu   sync.Mutex
	seen map[string]int // request hash -> identical requests sent so far
	// loading is set while a lookup is under way; next collects the keys
	// of the calls that arrive meanwhile (nil when none waits).
	loading bool
	next    *lookup
}

// lookup is one query for the keys of the calls that asked for it.
type lookup struct {
	keys    []AnswerKey
	done    chan struct{}
	answers map[AnswerKey][]byte
	err     error
}

// NewCache wraps inner, a client of the judge at baseURL serving model,
// with the answers of store.
func NewCache(inner completer, store AnswerStore, baseURL, model string) *Cache {
	return &Cache{inner: inner, store: store, baseURL: baseURL, model: model, seen: map[string]int{}}
}

// cacheKey is what a request is identified by; its JSON is hashed.
type cacheKey struct {
	BaseURL string  `json:"base_url"`
	Model   string  `json:"model"`
	Request Request `json:"request"`
}

// storedAnswer is an answer as the store keeps it. The tokens are what the
// original call cost; a cached answer costs none, except when it is
// replayed for the unit that paid for it (WithUnit). Run and Unit name
// that run and unit (0 when unknown: answers stored before they were
// kept).
type storedAnswer struct {
	Choices          []Choice `json:"choices"`
	Model            string   `json:"model"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	Run              int64    `json:"run,omitempty"`
	Unit             int64    `json:"unit,omitempty"`
	// Paid is the identity the call was given when the judge answered it
	// (PaidCall.ID); empty for answers stored before identities were kept.
	Paid string `json:"paid,omitempty"`
	// Refusal, when set, is the endpoint's refusal of the request, kept
	// because the caller asked (KeepRefusal); Choices is then empty.
	Refusal *storedRefusal `json:"refusal,omitempty"`
}

// storedRefusal is an endpoint's refusal of a request (HTTP 4xx, Kind
// KindBadRequest) as the store keeps it.
type storedRefusal struct {
	Status  int    `json:"status"`
	Message string `json:"message,omitempty"`
}

type keepRefusalKey struct{}

// KeepRefusal marks ctx's calls as probes of what the endpoint supports
// (G-Eval's request for log-probabilities): the endpoint's refusal of such
// a request (an HTTP 4xx answer of kind KindBadRequest) says that it does
// not, as surely as an answer would say that it does. It is stored as the
// request's answer, and an identical request later is refused from the
// store, counted as a cached call (Error.Cached), without reaching the
// endpoint: an identical re-run then costs nothing. Other failures are
// never stored, and refusals of calls not so marked are not either.
func KeepRefusal(ctx context.Context) context.Context {
	return context.WithValue(ctx, keepRefusalKey{}, true)
}

func keepsRefusal(ctx context.Context) bool {
	keep, _ := ctx.Value(keepRefusalKey{}).(bool)
	return keep
}

// refusalOf returns err as a refusal to keep (KeepRefusal), or nil.
func refusalOf(ctx context.Context, err error) *storedRefusal {
	var e *Error
	if !keepsRefusal(ctx) || !errors.As(err, &e) || e.Kind != KindBadRequest || e.Status < 400 || e.Status > 499 || e.ExtraCalls > 0 {
		return nil
	}
	return &storedRefusal{Status: e.Status, Message: e.Message}
}

// Unit is the call unit a call is made for, as the runner knows it.
type Unit struct {
	// ID names the unit (its batch) within the run.
	ID int64
	// Uncounted says that nothing this unit paid for has been counted
	// yet (its batch was never stored): an answer the run stored for it
	// before is replayed as a paid call, with its tokens.
	Uncounted bool
	// Paid, when set, collects the unit's paid calls as the cache sees
	// them: each call the judge answered, and each answer replayed as
	// the paid call it was (with the original's identity).
	Paid *PaidLog
}

// PaidCall is one call a unit paid for. Its ID is made when the judge
// answers the call and is kept with the answer in the store, so that an
// answer replayed as a paid call (Unit.Uncounted) is known as the same
// paid call, and two calls that the judge answered alike (a seeded or
// deterministic judge) are known as two.
type PaidCall struct {
	// ID is random, unique to the call; empty for a replay of an answer
	// stored before identities were kept (unknown).
	ID                             string
	PromptTokens, CompletionTokens int
	// Replayed says the answer came from the store, as the call the run
	// paid for before, rather than from the judge now.
	Replayed bool
	// Failed says the call was sent but brought no answer (a judge
	// error, a timeout after the request went out): it may be billed
	// all the same, and its tokens are those the endpoint billed
	// (BilledOf). No answer of it is stored, so it is never replayed.
	Failed bool
}

// sentFailure logs, for unit u, a call that failed after it went out:
// one the endpoint billed (tokens for answers it could not use), or one
// with at least one HTTP attempt made that the endpoint took (a judge
// error, a timeout after the request was sent), as the store counts the
// calls of a failed unit. Not logged: a call refused before it was sent
// (the lease fence, the spending cap: no attempt), one whose attempts
// never wrote their request out (the endpoint could not be reached:
// Error.NeverSent), one the endpoint turned
// away with a rate limit (not billed), and one this process abandoned on
// its way (ctx ended: a hard stop cancels the calls in flight). It returns
// the logged call's identity, "" when none was logged.
func sentFailure(ctx context.Context, u Unit, err error) (id string) {
	p, c := BilledOf(err)
	if p+c == 0 {
		var e *Error
		if AttemptsOf(err) == 0 || NeverSentOf(err) || ctx.Err() != nil || (errors.As(err, &e) && e.Kind == KindRateLimited) {
			return ""
		}
	}
	id = newPaidID()
	u.Paid.add(PaidCall{ID: id, PromptTokens: p, CompletionTokens: c, Failed: true})
	return id
}

// PaidLog collects a unit's paid calls; it is safe for concurrent use.
type PaidLog struct {
	mu    sync.Mutex
	calls []PaidCall
}

func (l *PaidLog) add(c PaidCall) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// Calls returns the calls collected so far, in the order they were made.
func (l *PaidLog) Calls() []PaidCall {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]PaidCall(nil), l.calls...)
}

// newPaidID is a new paid call's identity.
func newPaidID() string { return rand.Text() }

type unitKey struct{}

// WithUnit marks ctx's calls as made for unit u.
func WithUnit(ctx context.Context, u Unit) context.Context {
	return context.WithValue(ctx, unitKey{}, u)
}

func unitFrom(ctx context.Context) (Unit, bool) {
	u, ok := ctx.Value(unitKey{}).(Unit)
	return u, ok
}

// RequestHash is the hex SHA-256 of the request as sent to the judge at
// baseURL serving model: of json.Marshal(cacheKey{...}), which writes
// struct fields in order and map keys sorted, so equal requests hash
// alike. appendCacheKey writes those bytes by hand, without reflection;
// stored answers are keyed by these hashes, so they must never change
// (FuzzRequestHash compares with json.Marshal).
func RequestHash(baseURL, model string, r Request) (string, error) {
	bp := keyBufs.Get().(*[]byte)
	b, err := appendCacheKey((*bp)[:0], baseURL, model, &r)
	var sum [sha256.Size]byte
	if err == nil {
		sum = sha256.Sum256(b)
	}
	if cap(b) <= maxPooledKey {
		*bp = b[:0]
		keyBufs.Put(bp)
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(sum[:]), nil
}

// keyBufs holds the buffers cache keys (and the stored messages,
// MessagesJSON) are written into: a key is hashed and dropped, and
// allocating a prompt-sized buffer per call (the prompt is most of the
// key) cost more than writing it.
var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// maxPooledKey keeps a rare huge prompt's buffer out of the pool.
const maxPooledKey = 1 << 20

// Hit is what an answer taken from the cache cost when it was paid for:
// its call's tokens (0 for answers stored before they were kept).
type Hit struct {
	PromptTokens, CompletionTokens int
}

// Complete answers r from the store when it can, and otherwise calls the
// judge and stores a successful answer. A store that fails is passed by:
// the judge is asked (a broken cache must never fail a run).
func (c *Cache) Complete(ctx context.Context, r Request) (Response, error) {
	hash, err := RequestHash(c.baseURL, c.model, r)
	if err != nil {
		resp, err := c.inner.Complete(ctx, r)
		if u, ok := unitFrom(ctx); ok {
			if err != nil {
				sentFailure(ctx, u, err)
			} else {
				u.Paid.add(PaidCall{ID: newPaidID(), PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens})
			}
		}
		return resp, err
	}
	if c.Private {
		sum := sha256.Sum256([]byte(hash + "/run/" + strconv.FormatInt(c.Run, 10)))
		hash = hex.EncodeToString(sum[:])
	}
	c.mu.Lock()
	occurrence := c.seen[hash]
	c.seen[hash] = occurrence + 1
	c.mu.Unlock()

	unit, inUnit := unitFrom(ctx)
	if b, ok, err := c.load(ctx, AnswerKey{Hash: hash, Occurrence: occurrence}); err == nil && ok {
		var a storedAnswer
		if json.Unmarshal(b, &a) == nil && a.Refusal != nil && keepsRefusal(ctx) {
			refused := &Error{Kind: KindBadRequest, Status: a.Refusal.Status, Message: a.Refusal.Message, Cached: true}
			if c.Run != 0 && a.Run == c.Run && inUnit && a.Unit == unit.ID && unit.Uncounted {
				// This unit's own refusal, sent and never counted: the
				// call it was (unbilled), not a cached one.
				unit.Paid.add(PaidCall{ID: a.Paid, Failed: true, Replayed: true})
				refused.Cached, refused.Attempts = false, 1
				return Response{}, refused
			}
			if c.OnHit != nil {
				c.OnHit(ctx, Hit{})
			}
			return Response{}, refused
		}
		if a.Refusal == nil && len(a.Choices) > 0 {
			if c.Run != 0 && a.Run == c.Run && inUnit && a.Unit == unit.ID && unit.Uncounted {
				// This unit's own answer, paid for and never counted:
				// it costs what it cost then.
				resp := Response{Choices: a.Choices, Model: a.Model, PromptTokens: a.PromptTokens,
					CompletionTokens: a.CompletionTokens, Attempts: 1}
				unit.Paid.add(PaidCall{ID: a.Paid, PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens, Replayed: true})
				if c.OnReplay != nil {
					c.OnReplay(ctx, resp)
				}
				return resp, nil
			}
			if c.OnHit != nil {
				c.OnHit(ctx, Hit{PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens})
			}
			return Response{Choices: a.Choices, Model: a.Model}, nil
		}
	}
	var fl *flight
	fk := flightKey{scope: c.Scope, hash: hash, occurrence: occurrence}
	if c.Flights != nil && !c.Private {
		f, lead := c.Flights.join(fk)
		if lead {
			fl = f
		} else {
			// The same request is under way for another run: its answer
			// is this one's, as from the store.
			resp, ok, err := f.wait(ctx)
			if err != nil {
				return Response{}, &Error{Kind: KindCancelled, Message: err.Error(), Err: err}
			}
			if ok {
				if c.OnHit != nil {
					c.OnHit(ctx, f.paid())
				}
				return resp, nil
			}
		}
	}
	var resp Response
	var lost *lostCall
	if c.Hedge != nil && inUnit {
		// Only a unit's calls are hedged: their paid calls are logged
		// (Unit.Paid) and counted with the unit's answer.
		resp, err, lost = c.Hedge.complete(ctx, c.inner, r)
	} else {
		resp, err = c.inner.Complete(ctx, r)
	}
	if fl != nil {
		c.Flights.end(fk, fl, resp, err)
	}
	if err != nil {
		paid := ""
		if inUnit {
			paid = sentFailure(ctx, unit, err)
		}
		if lost != nil {
			err = c.hedgeLost(ctx, unit, *lost, nil, err)
		}
		if ref := refusalOf(ctx, err); ref != nil {
			if b, merr := json.Marshal(storedAnswer{Refusal: ref, Run: c.Run, Unit: unit.ID, Paid: paid}); merr == nil {
				_ = c.store.SaveAnswer(context.WithoutCancel(ctx), hash, occurrence, b)
			}
		}
		return resp, err
	}
	paid := newPaidID()
	unit.Paid.add(PaidCall{ID: paid, PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens})
	if b, err := json.Marshal(storedAnswer{Choices: resp.Choices, Model: resp.Model,
		PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens, Run: c.Run, Unit: unit.ID, Paid: paid}); err == nil {
		// The answer is the caller's whatever happens to the store; a
		// context already done (a run stopping) must not lose it either.
		_ = c.store.SaveAnswer(context.WithoutCancel(ctx), hash, occurrence, b)
	}
	if lost != nil {
		c.hedgeLost(ctx, unit, *lost, &resp, nil)
	}
	return resp, nil
}

// hedgeLost logs the hedged copy that lost as a paid call of the unit, and
// counts it in what the call returns: in resp when it was answered (the
// winner's own tokens are what the store keeps and replays), or in err
// when both copies failed (the returned error is then a copy of err's
// *Error with the call added).
func (c *Cache) hedgeLost(ctx context.Context, unit Unit, lost lostCall, resp *Response, err error) error {
	unit.Paid.add(lost.PaidCall)
	if lost.assumed && c.OnAssumedLoss != nil {
		c.OnAssumedLoss(ctx, lost.PromptTokens, lost.CompletionTokens)
	}
	if resp != nil {
		resp.ExtraCalls++
		resp.Attempts += lost.attempts
		resp.PromptTokens += lost.PromptTokens
		resp.CompletionTokens += lost.CompletionTokens
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	folded := *e
	folded.ExtraCalls++
	folded.Attempts += lost.attempts
	folded.PromptTokens += lost.PromptTokens
	folded.CompletionTokens += lost.CompletionTokens
	return &folded
}

// load looks one request up. With a BatchLoader store, calls that arrive
// while a lookup is under way wait for the next one and share it: a round
// whose calls start together (the runner starts a round's units ahead of
// their turn for the judge, see runner.unitLookahead) makes one or two
// queries instead of one per call. The first call of a quiet moment waits
// for nothing but its own query.
func (c *Cache) load(ctx context.Context, k AnswerKey) ([]byte, bool, error) {
	bl, ok := c.store.(BatchLoader)
	if !ok {
		return c.store.LoadAnswer(ctx, k.Hash, k.Occurrence)
	}
	c.mu.Lock()
	if !c.loading {
		// Nobody is looking up: this call makes its own query itself
		// (handing it to a goroutine woke two goroutines per call), and
		// the calls arriving meanwhile share the next one, which a
		// goroutine makes once this one is done.
		c.loading = true
		c.mu.Unlock()
		// With ctx: the lookup is this call's alone, and it must end
		// with the call (the store decides how its statement watches it).
		answers, err := bl.LoadAnswers(ctx, []AnswerKey{k})
		c.mu.Lock()
		if c.next != nil {
			go c.lookups(context.WithoutCancel(ctx), bl)
		} else {
			c.loading = false
		}
		c.mu.Unlock()
		if ctx.Err() != nil {
			return nil, false, context.Cause(ctx)
		}
		if err != nil {
			return nil, false, err
		}
		b, ok := answers[k]
		return b, ok, nil
	}
	if c.next == nil {
		c.next = &lookup{done: make(chan struct{})}
	}
	l := c.next
	l.keys = append(l.keys, k)
	c.mu.Unlock()
	select {
	case <-l.done:
	case <-ctx.Done():
		return nil, false, context.Cause(ctx)
	}
	if l.err != nil {
		return nil, false, l.err
	}
	b, ok := l.answers[k]
	return b, ok, nil
}

// lookups makes the waiting calls' queries, one after another, until no
// call waits.
func (c *Cache) lookups(ctx context.Context, bl BatchLoader) {
	for {
		c.mu.Lock()
		l := c.next
		c.next = nil
		if l == nil {
			c.loading = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		l.answers, l.err = bl.LoadAnswers(ctx, l.keys)
		close(l.done)
	}
}
