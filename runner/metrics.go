package runner

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
)

// Metrics are what an operator watches: judge calls (latency, outcome,
// tokens, retries), database retries, the circuit breaker, and, read from
// the database at each scrape, runs by status and the job queue's depth.
// Each Runner has its own registry, so tests and several runners in one
// process never collide.
type Metrics struct {
	reg *prometheus.Registry

	judgeLatency  *prometheus.HistogramVec
	judgeRequests *prometheus.CounterVec
	judgeTokens   *prometheus.CounterVec
	judgeErrors   *prometheus.CounterVec
	judgeRetries  *prometheus.CounterVec
	breakerOpened *prometheus.CounterVec
	dbRetries     *prometheus.CounterVec
	lateAnswers   *prometheus.CounterVec
	parked        prometheus.Gauge
}

// newMetrics registers the product's collectors, Go's and the process's.
func newMetrics(db *models.DB, log *slog.Logger) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		judgeLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "batcheval_judge_request_duration_seconds",
			Help: "Wall time of each HTTP attempt to a judge, by judge id and outcome (ok or the error kind).",
			// From a fast hosted model on one sample (0.25 s) to a local
			// model on a CPU with a batch of ten (several minutes).
			Buckets: []float64{0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300},
		}, []string{"judge_id", "outcome"}),
		judgeRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batcheval_judge_requests_total",
			Help: "HTTP attempts sent to a judge, by judge id and outcome (ok or the error kind).",
		}, []string{"judge_id", "outcome"}),
		judgeTokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batcheval_judge_tokens_total",
			Help: "Tokens a judge reported, by judge id and type (prompt or completion).",
		}, []string{"judge_id", "type"}),
		judgeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batcheval_judge_errors_total",
			Help: "Failed HTTP attempts to a judge, by judge id and kind (rate_limited, timeout, server, network, malformed...).",
		}, []string{"judge_id", "kind"}),
		judgeRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batcheval_judge_retries_total",
			Help: "HTTP attempts beyond the first of a call (each a paid request when the judge processed it).",
		}, []string{"judge_id"}),
		breakerOpened: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batcheval_judge_breaker_opened_total",
			Help: "Times a run paused to wait for its judge (circuit breaker opened).",
		}, []string{"judge_id"}),
		dbRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batcheval_db_retries_total",
			Help: "Database writes retried after a transient error (dropped connection, busy, serialization failure), by operation.",
		}, []string{"op"}),
		lateAnswers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "batcheval_judge_late_answers_total",
			Help: "Answers that arrived after their worker lost the run's lease and were stored, not paid again, because the batch still had none.",
		}, []string{"judge_id"}),
		parked: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "batcheval_worker_parked",
			Help: "1 while this worker's job client is stopped for lack of work (--park-after), 0 while it works or waits for jobs.",
		}),
	}
	m.reg.MustRegister(m.judgeLatency, m.judgeRequests, m.judgeTokens, m.judgeErrors, m.judgeRetries, m.breakerOpened, m.dbRetries, m.lateAnswers, m.parked,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{db: db, log: log})
	return m
}

// Handler serves the metrics in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is where the metrics are registered (to add more, or to gather
// them in tests).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// observeAttempt records one HTTP attempt to the judge whose label (the
// judge's id, judgeMetricLabel) is judgeID.
func (m *Metrics) observeAttempt(judgeID string, a judge.AttemptInfo) {
	outcome := "ok"
	if a.Err != nil {
		outcome = string(a.Err.Kind)
		m.judgeErrors.WithLabelValues(judgeID, outcome).Inc()
	}
	m.judgeRequests.WithLabelValues(judgeID, outcome).Inc()
	m.judgeLatency.WithLabelValues(judgeID, outcome).Observe(a.Latency.Seconds())
	if a.N > 1 {
		m.judgeRetries.WithLabelValues(judgeID).Inc()
	}
	if a.PromptTokens > 0 {
		m.judgeTokens.WithLabelValues(judgeID, "prompt").Add(float64(a.PromptTokens))
	}
	if a.CompletionTokens > 0 {
		m.judgeTokens.WithLabelValues(judgeID, "completion").Add(float64(a.CompletionTokens))
	}
}

// stateCollector reads gauges from the database when scraped: the state
// lives there, shared by every process, not in one process's memory.
type stateCollector struct {
	db  *models.DB
	log *slog.Logger
}

var (
	runsDesc = prometheus.NewDesc("batcheval_runs", "Runs by status (\"waiting for judge\" apart from running), all processes.", []string{"status"}, nil)
	jobsDesc = prometheus.NewDesc("batcheval_queue_jobs", "Run jobs in the queue by state (available and scheduled are the queue depth).", []string{"state"}, nil)
)

func (s *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runsDesc
	ch <- jobsDesc
}

// scrapeTimeout keeps a slow database from hanging a scrape (Prometheus'
// own default timeout is 10 s).
const scrapeTimeout = 3 * time.Second

func (s *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	runs, err := s.db.CountRunsByStatus(ctx)
	if err != nil {
		s.log.Warn("metrics: count runs", "err", err)
	}
	for _, st := range []string{models.RunQueued, models.RunRunning, models.StatusWaitingForJudge, models.RunSucceeded, models.RunFailed, models.RunCancelled, models.RunPaused} {
		if _, ok := runs[st]; !ok {
			runs[st] = 0
		}
	}
	for st, n := range runs {
		ch <- prometheus.MustNewConstMetric(runsDesc, prometheus.GaugeValue, float64(n), st)
	}
	jobs, err := s.db.CountJobsByState(ctx, RunArgs{}.Kind())
	if err != nil {
		s.log.Warn("metrics: count jobs", "err", err)
	}
	for _, st := range []string{"available", "scheduled", "running", "retryable"} {
		if _, ok := jobs[st]; !ok {
			jobs[st] = 0
		}
	}
	for st, n := range jobs {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), st)
	}
}
