package clickhouse

import (
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/sluicehq/sluice/analytics/analyticstest"
)

// BenchmarkLogBlock is the client's share of a request_logs insert without
// a server: one block of blockRows generated requests (bodies, metadata,
// spans, guardrail events) built by the writer and appended to the
// driver's columns, as insertBlocks does before it flushes. One op is one
// block; rows/s is the rate the client could feed the server.
func BenchmarkLogBlock(b *testing.B) {
	recs := analyticstest.Generate(7, blockRows)
	cols := driverColumns(b)
	k := new(logBlock)
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		k.reset()
		for _, r := range recs {
			k.add(r, "bench-batch")
		}
		for i, v := range k.columns() {
			if err := appendColumn(cols[i], v); err != nil {
				b.Fatal(err)
			}
		}
		for _, c := range cols {
			c.Reset()
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/time.Since(start).Seconds(), "rows/s")
}

// driverColumns makes the driver's column of every request_logs column,
// in insert order, as PrepareBatch would from the server's block header.
func driverColumns(b *testing.B) []benchColumn {
	b.Helper()
	var out []benchColumn
	for _, c := range logColumnTypes() {
		col, err := column.Type(c[1]).Column(c[0], &column.ServerContext{Timezone: time.UTC})
		if err != nil {
			b.Fatalf("column %s %s: %v", c[0], c[1], err)
		}
		out = append(out, benchColumn{col})
	}
	return out
}

// benchColumn is a driver column as a batch's column: what appendColumn
// takes.
type benchColumn struct{ column.Interface }

func (c benchColumn) Append(v any) error {
	_, err := c.Interface.Append(v)
	return err
}

var _ driver.BatchColumn = benchColumn{}

// logColumnTypes are request_logs' columns in insert order (logColumns)
// with their types (the migrations).
func logColumnTypes() [][2]string {
	return [][2]string{
		{"tenant_id", "String"}, {"ts", "DateTime('UTC')"}, {"ts_ms", "UInt16"}, {"id", "String"},
		{"gateway_id", "String"}, {"token_id", "String"}, {"user_id", "String"}, {"provider", "String"},
		{"model", "String"}, {"route", "String"}, {"status", "Int32"}, {"error_code", "String"},
		{"latency_ms", "Int64"}, {"ttfb_ms", "Int64"}, {"tokens_in", "Int64"}, {"tokens_out", "Int64"},
		{"cached_tokens", "Int64"}, {"cost_usd", "Int64"}, {"cache", "String"}, {"attempts", "Int32"},
		{"rule_hits", "Array(String)"}, {"metadata_keys", "Array(String)"}, {"metadata_values", "Array(String)"},
		{"trace_id", "String"}, {"client_ip", "String"}, {"user_agent", "String"}, {"request_body", "String"},
		{"response_body", "String"}, {"flags", "Array(String)"}, {"cache_saved_usd", "Int64"}, {"batch_id", "String"},
		{"span_count", "UInt32"}, {"trace_root", "UInt8"}, {"root_start_us", "Int64"}, {"root_duration_us", "UInt64"},
		{"spans", "String"},
	}
}
