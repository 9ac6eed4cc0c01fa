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
	k := newLogBlock()
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
	for _, c := range logColumns {
		col, err := column.Type(c.chType).Column(c.name, &column.ServerContext{Timezone: time.UTC})
		if err != nil {
			b.Fatalf("column %s %s: %v", c.name, c.chType, err)
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
