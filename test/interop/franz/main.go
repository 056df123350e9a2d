// franz-interop: the franz-go side of Sluice's Kafka interop tests (issue 14).
//
//	franz-interop produce --bootstrap B --topic T --count N [--prefix P]
//	franz-interop consume --bootstrap B --topic T --group G [--max-ms MS]
//	franz-interop create  --bootstrap B --topic T [--partitions N] [--replication-factor R]
//	franz-interop delete  --bootstrap B --topic T
//
// produce is idempotent (franz-go's default: acks=all, idempotence on); record
// i has key "key-<i>", value "<prefix>-<i>" and the headers src=franz, i=<i>.
// consume is a group member with the cooperative-sticky balancer; it prints
// assignments, revocations and records as it goes, and stops when its stdin
// closes (or after --max-ms), committing what it consumed and leaving the
// group. Every result is one JSON object per line on stdout (an "event" field
// says which); diagnostics go to stderr. Exit status 0 on success, 1 on error.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var outMu sync.Mutex

func emit(v map[string]any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	outMu.Lock()
	defer outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	emit(map[string]any{"event": "error", "message": msg})
	fmt.Fprintln(os.Stderr, "franz-interop:", msg)
	os.Exit(1)
}

type opts struct {
	bootstrap, topic, group, prefix string
	count, partitions, rf            int
	maxMs                            int
}

func parse(args []string) opts {
	fs := flag.NewFlagSet("franz-interop", flag.ExitOnError)
	var o opts
	fs.StringVar(&o.bootstrap, "bootstrap", "127.0.0.1:9092", "comma-separated host:port list")
	fs.StringVar(&o.topic, "topic", "", "topic")
	fs.StringVar(&o.group, "group", "", "consumer group")
	fs.StringVar(&o.prefix, "prefix", "franz", "value prefix")
	fs.IntVar(&o.count, "count", 10, "records to produce")
	fs.IntVar(&o.partitions, "partitions", 3, "partitions of a created topic")
	fs.IntVar(&o.rf, "replication-factor", 3, "replication factor of a created topic")
	fs.IntVar(&o.maxMs, "max-ms", 120000, "upper bound of a consume run")
	if err := fs.Parse(args); err != nil {
		fail("%v", err)
	}
	if o.topic == "" {
		fail("--topic is required")
	}
	return o
}

func seeds(o opts) kgo.Opt { return kgo.SeedBrokers(strings.Split(o.bootstrap, ",")...) }

func produce(o opts) {
	cl, err := kgo.NewClient(seeds(o), kgo.DefaultProduceTopic(o.topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		fail("client: %v", err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	for i := 0; i < o.count; i++ {
		r := &kgo.Record{
			Key:   []byte(fmt.Sprintf("key-%d", i)),
			Value: []byte(fmt.Sprintf("%s-%d", o.prefix, i)),
			Headers: []kgo.RecordHeader{
				{Key: "src", Value: []byte("franz")},
				{Key: "i", Value: []byte(fmt.Sprint(i))},
			},
		}
		wg.Add(1)
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				errMu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				errMu.Unlock()
				return
			}
			emit(map[string]any{"event": "produced", "partition": r.Partition, "offset": r.Offset, "key": string(r.Key), "value": string(r.Value)})
		})
	}
	wg.Wait()
	if firstErr != nil {
		fail("produce: %v", firstErr)
	}
	pid, epoch, _ := cl.ProducerID(ctx)
	emit(map[string]any{"event": "done", "produced": o.count, "producerId": pid, "producerEpoch": epoch})
}

func partitionsOf(m map[string][]int32) []int32 {
	out := []int32{}
	for _, ps := range m {
		out = append(out, ps...)
	}
	return out
}

func consume(o opts) {
	if o.group == "" {
		fail("--group is required")
	}
	cl, err := kgo.NewClient(seeds(o),
		kgo.ConsumerGroup(o.group),
		kgo.ConsumeTopics(o.topic),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			emit(map[string]any{"event": "assigned", "partitions": partitionsOf(m)})
		}),
		kgo.OnPartitionsRevoked(func(ctx context.Context, c *kgo.Client, m map[string][]int32) {
			// Commit what this member consumed before the partitions move on.
			if err := c.CommitUncommittedOffsets(ctx); err != nil {
				fmt.Fprintln(os.Stderr, "franz-interop: commit on revoke:", err)
			}
			emit(map[string]any{"event": "revoked", "partitions": partitionsOf(m)})
		}),
		kgo.BlockRebalanceOnPoll(),
	)
	if err != nil {
		fail("client: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(o.maxMs)*time.Millisecond)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	consumed := 0
	for ctx.Err() == nil {
		fetches := cl.PollRecords(ctx, 500)
		fetches.EachError(func(t string, p int32, err error) {
			if ctx.Err() == nil {
				fmt.Fprintf(os.Stderr, "franz-interop: fetch %s-%d: %v\n", t, p, err)
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			hs := []map[string]any{}
			for _, h := range r.Headers {
				hs = append(hs, map[string]any{"key": h.Key, "value": string(h.Value)})
			}
			emit(map[string]any{"event": "record", "partition": r.Partition, "offset": r.Offset, "key": string(r.Key),
				"value": string(r.Value), "headers": hs, "timestamp": r.Timestamp.UnixMilli()})
			consumed++
		})
		if recs := fetches.Records(); len(recs) > 0 {
			if err := cl.CommitRecords(context.Background(), recs...); err != nil {
				fmt.Fprintln(os.Stderr, "franz-interop: commit:", err)
			}
		}
		cl.AllowRebalance()
	}
	commitCtx, commitCancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer commitCancel()
	if err := cl.CommitUncommittedOffsets(commitCtx); err != nil {
		fail("commit: %v", err)
	}
	committed := map[string]int64{}
	for _, ps := range cl.CommittedOffsets() {
		for p, off := range ps {
			committed[fmt.Sprint(p)] = off.Offset
		}
	}
	emit(map[string]any{"event": "committed", "offsets": committed})
	cl.LeaveGroup()
	cl.Close()
	emit(map[string]any{"event": "done", "consumed": consumed})
}

func admin(o opts, create bool) {
	cl, err := kgo.NewClient(seeds(o))
	if err != nil {
		fail("client: %v", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if create {
		res, err := adm.CreateTopic(ctx, int32(o.partitions), int16(o.rf), nil, o.topic)
		if err == nil {
			err = res.Err
		}
		if err != nil {
			fail("create %s: %v", o.topic, err)
		}
		emit(map[string]any{"event": "created", "topic": res.Topic, "partitions": res.NumPartitions, "replicationFactor": res.ReplicationFactor})
		return
	}
	res, err := adm.DeleteTopics(ctx, o.topic)
	if err == nil {
		var r kadm.DeleteTopicResponse
		r, err = res.On(o.topic, nil)
		if err == nil {
			err = r.Err
		}
	}
	if err != nil {
		fail("delete %s: %v", o.topic, err)
	}
	emit(map[string]any{"event": "deleted", "topic": o.topic})
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: franz-interop produce|consume|create|delete --bootstrap B --topic T ...")
	}
	o := parse(os.Args[2:])
	switch os.Args[1] {
	case "produce":
		produce(o)
	case "consume":
		consume(o)
	case "create":
		admin(o, true)
	case "delete":
		admin(o, false)
	default:
		fail("unknown command %q", os.Args[1])
	}
}
